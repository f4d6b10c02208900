"""Exporting into a folder that holds something: the bundle is built beside it and replaces it
whole (no stale file of an earlier bundle survives), a failed export leaves it as it was, and a
folder or file that is not a bundle is refused; an unfinished run's export says so."""

import json
from dataclasses import replace

import pytest
import sentencepiece as spm
import torch

from subctx.bundle import load_bundle
from subctx_train.checkpoint import RunError
from tests.helpers import build_tiny_bundle


def _siblings(folder):
    """What an export left beside `folder` (its staging and old folders start with a dot)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith("."))


def _tiny_model(bundle):
    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer

    vocab = spm.SentencePieceProcessor(model_file=str(bundle / "spm.model")).get_piece_size()
    torch.manual_seed(3)
    return Transformer(ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64,
                                   enc_layers=2, dec_layers=2, max_positions=256, dropout=0.0))


def test_a_shifted_bundle_over_a_plain_one_keeps_no_stale_vocabulary(tmp_path):
    """The trial's case: a CTranslate2 bundle with one shared vocabulary, then a model with
    segment-shifted positions (two source vocabularies) exported into the same folder."""
    from subctx.backends.ct2 import CTranslate2Backend
    from subctx.contract import Request

    bundle = build_tiny_bundle(tmp_path, shift=0)
    assert (bundle / "shared_vocabulary.json").exists()
    (bundle / "notes.txt").write_text("from the old bundle")
    assert build_tiny_bundle(tmp_path, shift=16) == bundle
    names = {p.name for p in bundle.iterdir()}
    assert "shared_vocabulary.json" not in names and "notes.txt" not in names
    assert {"source_1_vocabulary.json", "source_2_vocabulary.json"} <= names
    assert load_bundle(bundle).manifest.context.segment_shift == 16
    served = CTranslate2Backend(bundle, device="cpu", compute_type="float32", threads=1)
    assert served.translate([Request("Thank you.", source_context=["Hello there."])])
    assert _siblings(bundle) == []


def test_torch_and_ctranslate2_exports_replace_each_other_whole(tmp_path):
    from subctx_train.bundle_card import export_torch_bundle
    from subctx_train.export import export_bundle

    bundle = build_tiny_bundle(tmp_path)
    manifest = load_bundle(bundle).manifest
    model = _tiny_model(tmp_path)
    export_torch_bundle(model, tmp_path / "spm.model", replace(manifest, backend="torch"),
                        bundle)
    names = {p.name for p in bundle.iterdir()}
    assert "model.bin" not in names and not any("vocabulary" in n for n in names)
    assert "model.json" in names and load_bundle(bundle).manifest.backend == "torch"
    export_bundle(model, tmp_path / "spm.model", manifest, bundle)
    names = {p.name for p in bundle.iterdir()}
    assert "model.bin" in names and "model.json" not in names
    assert not any(n.startswith("model-") for n in names)
    assert _siblings(bundle) == []


def test_a_failed_export_leaves_the_old_bundle_as_it_was(tmp_path, monkeypatch):
    from subctx_train import export

    bundle = build_tiny_bundle(tmp_path)
    before = {p.name: p.read_bytes() for p in bundle.iterdir()}

    def broken(*args, **kwargs):
        raise RuntimeError("the test load failed")

    monkeypatch.setattr(export.ctranslate2, "Translator", broken)
    with pytest.raises(RuntimeError, match="test load failed"):
        export.export_bundle(_tiny_model(tmp_path), tmp_path / "spm.model",
                             load_bundle(bundle).manifest, bundle)
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before
    assert _siblings(bundle) == []


def test_a_folder_that_is_not_a_bundle_or_a_file_is_refused(tmp_path):
    from subctx_train.export import export_bundle

    bundle = build_tiny_bundle(tmp_path)
    manifest, model = load_bundle(bundle).manifest, _tiny_model(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("months of work")
    with pytest.raises(RunError, match="not empty, no subctx.json"):
        export_bundle(model, tmp_path / "spm.model", manifest, mine)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(RunError, match="is not a folder"):
        export_bundle(model, tmp_path / "spm.model", manifest, tmp_path / "afile")
    assert (tmp_path / "afile").read_text() == "x"
    (tmp_path / "empty").mkdir()  # an empty folder is as good as none
    export_bundle(model, tmp_path / "spm.model", manifest, tmp_path / "empty")
    assert load_bundle(tmp_path / "empty").manifest.architecture == "concat"
    assert _siblings(mine) == []


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from subctx_train.config import make_config
    from subctx_train.train import Trainer
    from tests.test_training import fixture_docs

    run = tmp_path_factory.mktemp("runs") / "run"
    cfg = make_config("tiny", max_steps=4, eval_every=2)
    Trainer(cfg, run, fixture_docs(2), fixture_docs(1), device="cpu", quiet=True).train()
    return run


def test_the_cli_refuses_a_folder_of_something_else_in_one_line(tiny_run, tmp_path):
    from typer.testing import CliRunner

    from subctx_train.cli import app

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("months of work")
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--out", str(mine),
                                      "--backend", "torch"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "not empty, no subctx.json" in result.output
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--out", str(tmp_path / "b"),
                                      "--backend", "torch"])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output  # a finished run
    result = CliRunner().invoke(app, ["export", str(tiny_run), "--out", str(tmp_path / "b"),
                                      "--backend", "torch"])
    assert result.exit_code == 0, result.output  # its own bundle: replaced


def test_an_unfinished_runs_export_warns_and_says_which_checkpoint(tiny_run, tmp_path):
    import shutil

    from subctx_train.bundle_card import export_run

    run = tmp_path / "killed"
    shutil.copytree(tiny_run, run)
    for name in ("final.safetensors", "final.json"):  # as a run killed mid-training has none
        (run / name).unlink()
    said = []
    bundle = load_bundle(export_run(run, tmp_path / "b", backend="torch", warn=said.append))
    [line] = said
    assert line == (f"{run} has not finished training (no final weights): exporting its last "
                    "checkpoint, step-0000004")
    training = bundle.manifest.info["training"]
    assert training["unfinished"] == line
    assert training["weights"] == "step-0000004, the last checkpoint of an unfinished run"
    assert "final weights: step-0000004, the last checkpoint of an unfinished run" in \
        (bundle.path / "README.md").read_text(encoding="utf-8")

    said.clear()  # final weights older than its last checkpoint: resumed, killed again
    shutil.copytree(tiny_run, run, dirs_exist_ok=True)
    final = json.loads((run / "final.json").read_text())
    (run / "final.json").write_text(json.dumps({**final,
                                                "averaged_checkpoints": ["step-0000002"]}))
    export_run(run, tmp_path / "b", backend="torch", warn=said.append)
    assert len(said) == 1 and "older than its last checkpoint, step-0000004" in said[0]

    said.clear()
    shutil.copytree(tiny_run, run, dirs_exist_ok=True)  # finished: nothing to say
    bundle = load_bundle(export_run(run, tmp_path / "b", backend="torch", warn=said.append))
    assert said == [] and "unfinished" not in bundle.manifest.info["training"]


def test_the_default_warning_is_one_line_on_stderr(tiny_run, tmp_path, capsys):
    import shutil

    from subctx_train.bundle_card import export_run

    run = tmp_path / "killed"
    shutil.copytree(tiny_run, run)
    (run / "final.safetensors").unlink()
    export_run(run, tmp_path / "b", backend="torch")
    err = capsys.readouterr().err
    assert err == (f"warning: {run} has not finished training (no final weights): exporting "
                   "its last checkpoint, step-0000004\n")
