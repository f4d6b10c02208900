"""subctx-train controls-report on the tiny real model, given a manifest that lists the tags
(its tokenizer has the pieces), with a dev folder the test writes."""

import json
import shutil
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from subctx.backends import open_backend
from subctx.bundle import load_bundle, write_manifest
from subctx.controls import FORMALITY, SPEAKER_GENDER
from subctx.decoding import DecodeOptions
from subctx.errors import BundleError
from subctx_train.cli import app
from subctx_train.controls_report import controls_report


@pytest.fixture
def tagged(tiny_bundle, tmp_path):
    bundle = shutil.copytree(tiny_bundle, tmp_path / "tagged")
    manifest = load_bundle(bundle).manifest
    write_manifest(bundle, replace(manifest, controls=[FORMALITY, SPEAKER_GENDER]))
    return bundle


@pytest.fixture
def dev(tmp_path):
    root = tmp_path / "dev"
    (root / "ctxpro" / "evalsets").mkdir(parents=True)
    (root / "ctxpro" / "inputs").mkdir()
    docs = [{"doc": "friends/x", "segments": [
        {"src": "Where is the door?", "tgt": "Где дверь?"},
        {"src": "Thank you very much.", "tgt": "Большое спасибо."}]}]
    (root / "friends_dev.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    items = [{"rule": "formality", "expected": "ты"}, {"rule": "formality", "expected": "вас"},
             {"rule": "formality", "expected": "ваш"}]
    (root / "ctxpro" / "evalsets" / "formality.dev.json").write_text(json.dumps(items))
    (root / "ctxpro" / "inputs" / "formality.dev").write_text(
        "Hello there. <eos> How are you?\nWhere is the door? <eos> Thank you.\n"
        "She said it was fine.\n")
    return root


def test_the_report_measures_every_tag_and_the_three_ctxpro_conditions(tagged, dev):
    bundle = load_bundle(tagged)
    engine = open_backend(bundle, device="cpu", threads=1)
    options = DecodeOptions.for_model(bundle.manifest.context, beam_size=2)
    report = controls_report(engine, bundle.manifest, dev, options)
    assert [r["asked"] for r in report["forced"]] == [
        "nothing (auto)", "--formality informal", "--formality formal",
        "--speaker-gender masculine", "--speaker-gender feminine"]
    for row in report["forced"][1:]:
        assert row["lines with forms"] >= 0 and abs(row["ΔchrF"]) < 100
        assert abs(row["ΔchrF, lines without forms"]) < 100
    conditions = [r["ctxpro formality"] for r in report["ctxpro"]]
    assert conditions[:4] == ["untagged", "--formality auto", "untagged, whole scene",
                              "--formality auto, whole scene"] and "oracle" in conditions[4]
    assert [r["items"] for r in report["ctxpro"]] == [3] * 5  # ты, вас, ваш all have one


def test_the_command_prints_both_tables_and_writes_json(tagged, dev, tmp_path):
    """The untagged row has no 'lines with forms' column: the table shows it empty."""
    out = tmp_path / "controls.json"
    result = CliRunner().invoke(app, ["controls-report", str(tagged), "--dev-root", str(dev),
                                      "--threads", "1", "--beam", "2", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "control tags forced" in result.output and "ctxpro formality" in result.output
    report = json.loads(out.read_text())
    assert len(report["forced"]) == 5 and len(report["ctxpro"]) == 5


def test_a_model_that_ignores_its_tags_follows_none_and_changes_nothing(tagged, dev):
    """A translator that does not read the tags: each forced run is the untagged one, so the
    forms follow the tag only where they did anyway and no chrF moves."""
    from subctx_train.controls_report import forced_rows
    from subctx_train.data import read_documents
    from tests.review_fixtures import FakeTranslator

    docs = read_documents([dev / "friends_dev.jsonl"])
    docs[0].segments[1].src = "Can you see it?"  # -> «Ты её видишь?»: informal
    rows = forced_rows(FakeTranslator(), load_bundle(tagged).manifest, docs, DecodeOptions())
    by = {r["asked"]: r for r in rows}
    assert by["--formality informal"]["follow the tag %"] == 100.0
    assert by["--formality formal"]["follow the tag %"] == 0.0
    assert all(r["ΔchrF"] == 0.0 and r.get("ΔchrF, lines without forms", 0.0) == 0.0
               for r in rows)


def test_a_model_without_tags_is_refused_in_one_line(tiny_bundle, dev):
    bundle = load_bundle(tiny_bundle)
    with pytest.raises(BundleError, match="not trained with control tags"):
        controls_report(None, bundle.manifest, dev, DecodeOptions())
    result = CliRunner().invoke(app, ["controls-report", str(tiny_bundle), "--dev-root",
                                      str(dev), "--threads", "1"])
    assert result.exit_code == 1 and "not trained with control tags" in result.output
    assert "Traceback" not in result.output


def test_a_whole_scene_is_translated_before_the_items_sentence():
    """`whole`: every context sentence of an item is translated, in order, so a carried
    register can come from any earlier line; otherwise only the last K+1."""
    from subctx_train.evaluate import CtxproItem, ctxpro_accuracy
    from tests.review_fixtures import FakeTranslator

    class Recording(FakeTranslator):
        def __init__(self):
            self.asked = []

        def translate(self, requests, **kwargs):
            self.asked += [r.text for r in requests]
            return super().translate(requests, **kwargs)

    item = CtxproItem("formality", "ты", ["Mom, I can't find my bag.", "It was on the table.",
                                          "Can you see it?"])
    for whole, expected in [(False, ["It was on the table.", "Can you see it?"]),
                            (True, item.sentences)]:
        engine = Recording()
        result = ctxpro_accuracy(engine, [item], DecodeOptions(context=1), whole=whole)
        # (a line may be decoded twice: with and without its context, for the scope)
        assert list(dict.fromkeys(engine.asked)) == expected
        assert result["all"] == {"accuracy": 1.0, "items": 1}
