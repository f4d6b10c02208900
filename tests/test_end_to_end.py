"""Train a tiny model, export it, evaluate it with every evaluator, translate with the app."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from subctx.backends.ct2 import CTranslate2Backend
from subctx.bundle import Manifest, default_bundle_path, load_bundle
from subctx.cli import app as subctx_app
from subctx.contract import Translation
from subctx_train.bundle_card import (
    _budget,
    export_run,
    known_limits,
    record_scores,
)
from subctx_train.cli import app as train_app
from subctx_train.config import make_config
from subctx_train.context_nll import context_nll, run_context_nll
from subctx_train.data import Document, Segment, write_jsonl
from subctx_train.evaluate import (
    contains_form,
    detokenize,
    read_ctxpro,
    read_voita,
    spread_documents,
)
from subctx_train.report import evaluate_condition, run_bleu, run_contrastive, run_ctxpro
from subctx_train.runs import chain_from, pretraining_stages, training_minutes
from subctx_train.train import Trainer, load_final_model
from tests.helpers import CORPUS, write_srt
from tests.test_training import fixture_docs


class _Dictionary:
    """A Russian-to-English "model" that knows the fixture's sentences."""

    max_context = 0
    uses_target_context = False
    supports_forced_start = False
    manifest = Manifest("transformer", source_lang="ru", target_lang="en")
    english = {t: s for s, t in CORPUS}

    def translate(self, requests, beam_size=4, num_hypotheses=1, return_attention=False):
        return [Translation(self.english.get(r.text, "?"), -0.5) for r in requests]


def test_a_back_translation_model_is_scored_in_its_own_direction(tmp_path):
    dev = _write_dev(tmp_path / "dev")
    rows = run_bleu(_Dictionary(), [dev / "friends_dev.jsonl"], context=0,
                    hypotheses=tmp_path / "hyp")
    assert rows[0]["sentences"] == 2 * len(CORPUS) and rows[0]["chrf"] == 100.0
    written = (tmp_path / "hyp" / "friends_dev.txt").read_text().splitlines()
    assert written[:len(CORPUS)] == [s for s, _ in CORPUS]  # English out of the Russian


def _write_dev(root):
    root.mkdir(parents=True, exist_ok=True)
    docs = [{"doc": f"d{i}", "segments": [{"src": s, "tgt": t, "start": None, "end": None}
                                           for s, t in CORPUS]} for i in range(2)]
    for name in ("friends_dev", "flores_dev"):
        (root / f"{name}.jsonl").write_text(
            "\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n", encoding="utf-8")
    voita = root / "voita" / "mjpost" / "consistency_testsets"
    (voita / "scoring_data").mkdir(parents=True)
    for name in ("deixis_dev", "lex_cohesion_dev"):
        groups = [{"dst": ["a", "b"], "true_ind": 0, "src": "x", "ctx_dist": 1},
                  {"dst": ["a", "b", "c"], "true_ind": 2, "src": "x", "ctx_dist": 2}]
        (voita / f"{name}.json").write_text(json.dumps(groups), encoding="utf-8")
        rows = ["Where is the door? <eos>Thank you.\tГде дверь? <eos>Спасибо.",
                "Where is the door? <eos>Thank you.\tГде дверь? <eos>Спасибо большое.",
                "Hello there. <eos>She said it was fine.\tПривет. <eos>Она сказала.",
                "Hello there. <eos>She said it was fine.\tПривет. <eos>Он сказал.",
                "Hello there. <eos>She said it was fine.\tПривет. <eos>Оно сказало."]
        (voita / "scoring_data" / f"{name}.tsv").write_text("\n".join(rows) + "\n")
    ctxpro = root / "ctxpro"
    (ctxpro / "evalsets").mkdir(parents=True)
    (ctxpro / "inputs").mkdir()
    items = [{"rule": "NOM.FORM", "expected": "ты"}, {"rule": "ACC.FORM", "expected": "вас"}]
    (ctxpro / "evalsets" / "formality.opensubtitles.en-ru.dev.json").write_text(
        json.dumps(items, ensure_ascii=False), encoding="utf-8")
    (ctxpro / "inputs" / "formality.opensubtitles.en-ru.dev").write_text(
        "Hello there.<eos> Where is the door?\nThank you.<eos> I do not know.<eos> Hi.\n")
    return root


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    cfg = make_config("tiny", max_steps=30, lr=5.0)
    trainer = Trainer(cfg, root / "run", fixture_docs(), fixture_docs(1), device="cpu",
                      quiet=True)
    trainer.train()
    bundle = export_run(root / "run", root / "bundle", quantize="int8", length_penalty=2.0)
    return root, bundle


def test_export_writes_a_complete_bundle(trained):
    root, bundle = trained
    manifest = load_bundle(bundle).manifest
    assert manifest.architecture == "concat" and manifest.context.max_k == 3
    assert manifest.context.segment_shift == 16 and manifest.max_positions == 256
    assert manifest.info["training"]["steps"] == 30 and manifest.length_penalty == 2.0
    card = (bundle / "README.md").read_text(encoding="utf-8")
    assert "concatenation model" in card and "Known limits" in card
    assert "length penalty 2;" in card and "context guard on by default" in card
    assert manifest.context.scope == "all" and "context may change anything" in card
    # a concatenation model may be given more context than it was trained with (--max-k)
    wider = load_bundle(export_run(root / "run", root / "wider", quantize="int8", max_k=5))
    assert (wider.manifest.context.max_k, wider.manifest.context.default_k) == (5, 1)
    assert "the app uses K=1 (up to 5 with `--context 5`)" in \
        (root / "wider" / "README.md").read_text(encoding="utf-8")


def test_every_evaluator_runs_on_fixture_data(trained):
    root, bundle = trained
    dev = _write_dev(root / "dev")
    engine = CTranslate2Backend(bundle, device="cpu", threads=1)
    bleu = run_bleu(engine, [dev / "friends_dev.jsonl"], context=1)
    assert bleu[0]["sentences"] == 12  # scores themselves: tests/test_scorers.py
    assert "nrefs:1" in bleu[0]["signature_bleu"]
    contrastive = run_contrastive(engine, dev / "voita" / "mjpost", ["deixis_dev"], None)
    overall = [r for r in contrastive if r["subset"] == "all"][0]
    assert overall["groups"] == 2 and overall["context"] == 3
    assert {r["subset"] for r in contrastive} == {"all", "ctx_dist=1", "ctx_dist=2"}
    ctxpro = run_ctxpro(engine, dev / "ctxpro", None, 1)
    assert [r["rule"] for r in ctxpro] == ["ACC.FORM", "NOM.FORM", "all"]
    condition = evaluate_condition(engine, dev, 1, 10, 2)
    # the row's K everywhere, not the most the model reads (3 here)
    assert {r["context"] for r in condition["details"]["contrastive"]} == {1}
    assert {r["context"] for r in condition["details"]["ctxpro"]} == {1}
    record_scores(bundle, [condition])
    manifest = load_bundle(bundle).manifest
    assert manifest.scores["context=1"]["friends_bleu"] == condition["friends_bleu"]
    card = (bundle / "README.md").read_text(encoding="utf-8")
    assert "| context=1 |" in card and "(12 sentences)" in card  # what was measured, not a guess
    report = {"models": {str(bundle): [condition]}}
    (root / "a.json").write_text(json.dumps(report))
    (root / "b.json").write_text(json.dumps({"models": {"other": [condition]}}))
    result = CliRunner().invoke(train_app, ["dev-table", str(root / "a.json"),
                                            str(root / "b.json"), "--markdown",
                                            str(root / "table.md")])
    assert result.exit_code == 0, result.output
    rows = (root / "table.md").read_text().splitlines()
    assert len(rows) == 4 and rows[2].startswith(f"| {bundle.name} | 1 |") and "other" in rows[3]
    bad = CliRunner().invoke(train_app, ["dev-table", str(root / "table.md")])
    assert bad.exit_code != 0 and "not a dev-report JSON" in bad.output


def test_dev_report_without_ctranslate2_matches_the_ctranslate2_bundle(trained):
    """A GPU machine has no ctranslate2: it exports the run as a PyTorch bundle and runs the
    whole dev report there. Same weights (float32 both), same scores."""
    import subprocess
    import sys
    from pathlib import Path

    root, _ = trained
    dev = _write_dev(root / "dev-torch")
    ct2 = export_run(root / "run", root / "ct2-fp32", quantize=None, length_penalty=2.0,
                     scope="agreement")
    code = ("import sys; sys.modules['ctranslate2'] = None; from subctx_train.cli import main; "
            "sys.argv = ['subctx-train'] + sys.argv[1:]; main()")
    env_root = str(Path(__file__).resolve().parent.parent)
    run = [sys.executable, "-c", code]
    done = subprocess.run(run + ["export", str(root / "run"), "--out", str(root / "pt"),
                                 "--backend", "torch", "--length-penalty", "2",
                                 "--context-scope", "agreement"],
                          capture_output=True, text=True, cwd=env_root, timeout=300)
    assert done.returncode == 0, done.stderr
    manifest = load_bundle(root / "pt").manifest
    assert manifest.backend == "torch" and manifest.context.scope == "agreement"
    done = subprocess.run(run + ["dev-report", str(root / "pt"), "--dev-root", str(dev),
                                 "--ctxpro-limit", "10", "--beam", "2", "--device", "auto",
                                 "--random-control", "--json", str(root / "pt.json"),
                                 # K=2 a row of its own; the default (1) and K beyond the
                                 # model's 3 are not rows again
                                 "--context", "2", "--context", "1", "--context", "5"],
                          capture_output=True, text=True, cwd=env_root, timeout=300)
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    rows = json.loads((root / "pt.json").read_text())["models"][str(root / "pt")]
    assert [r["context"] for r in rows] == [1, 0, 2, "1 (random)"]
    engine = CTranslate2Backend(ct2, device="cpu", compute_type="float32", threads=1)
    for row in rows[:3]:
        want = evaluate_condition(engine, dev, row["context"], 10, 2)
        for key in ("friends_bleu", "friends_chrf", "deixis_dev", "lex_cohesion_dev",
                    "ctxpro_dev"):
            assert row[key] == want[key], (row["context"], key)


def test_model_card_budget_counts_the_pretraining_run():
    fine_tuned = {"device": "cpu", "steps": 1500, "minutes": 30.0, "precision": "bf16",
                  "init_from": "runs/base",
                  "pretraining": {"architecture": "transformer", "steps": 1000, "epochs": 5,
                                  "minutes": 100.0}}
    text = _budget(fine_tuned)
    assert "1000 steps (5 full epochs, 100.0 min) as a transformer model" in text
    assert "then 500 steps (30.0 min)" in text and "130.0 min in all" in text
    assert "bf16" in text
    chain = {**fine_tuned, "steps": 2000,
             "pretraining": [{"architecture": "transformer", "steps": 1000, "epochs": 5,
                              "minutes": 100.0},
                             {"architecture": "concat", "steps": 1500, "epochs": 0,
                              "minutes": 10.0}]}
    text = _budget(chain)
    assert "1000 steps (5 full epochs, 100.0 min) as a transformer model, then 500 steps " \
           "(10.0 min) as a concat model, then 500 steps (30.0 min) of fine-tuning" in text
    assert "140.0 min in all" in text
    assert "less than one epoch" in _budget({"device": "cpu", "steps": 10, "epochs": 0})


def test_a_fine_tune_of_an_unbundled_model_counts_the_bundles_stages(tmp_path):
    """The shipped model's card recorded its stages (a GPU run, then a fine-tune); a run
    unbundled from it keeps them, so a CPU fine-tune's card has the whole chain, where each
    stage ran and what data the earlier stages saw."""
    from subctx_train.bundle_card import _data

    shipped = tmp_path / "unbundled"
    shipped.mkdir()
    (shipped / "config.json").write_text(json.dumps({
        "train": {"architecture": "concat"}, "init_from": "runs/gone", "hardware": "H100",
        "data": {"pairs": 313, "synthetic_pairs": 176}, "unbundled_from": "assets/x",
        "pretraining": [{"run": "runs/gone", "architecture": "concat", "steps": 100,
                         "epochs": 21, "minutes": 22.5}]}))
    (shipped / "metrics.jsonl").write_text(json.dumps(
        {"step": 130, "epoch": 4, "elapsed_min": 4.4, "precision": "bf16"}) + "\n")
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    (tuned / "config.json").write_text(json.dumps({
        "train": {"architecture": "concat"}, "init_from": str(shipped), "hardware": "2 CPUs"}))
    stages = pretraining_stages(tuned)
    assert [(s["steps"], s["device"]) for s in stages] == [(100, "H100"), (130, "H100")]
    text = _budget({"device": "2 CPUs", "steps": 150, "minutes": 30.0, "precision": "bf16",
                    "init_from": str(shipped), "pretraining": stages})
    assert "100 steps (21 full epochs, 22.5 min on H100) as a concat model, then 30 steps " \
           "(4.4 min on H100) as a concat model, then 20 steps (30.0 min on 2 CPUs) of " \
           "fine-tuning" in text
    assert "56.9 min in all (26.9 min on H100, 30.0 min on 2 CPUs; bf16 precision)" in text
    data = {"pairs": 548, "synthetic_pairs": 0, "examples_per_epoch": 450,
            "pairs_by_corpus": {"friends": 548}, "sources": ["train"]}
    assert "Before: 313 pairs (176 back-translated) for concat steps up to 130." in \
        _data(data, {}, stages)


def test_the_chain_of_runs_travels_with_each_run_folder(tmp_path):
    """Stage 2 goes on session after session from the weights the last one sent back, at a
    path of the GPU machine's: each run records the runs it began from when it starts, so
    the card of the last one still has every session's stage after the folders moved."""
    def run(name: str, init: Path | None, steps: int, minutes: float, device: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        record = {"train": {"architecture": "concat"}, "hardware": device,
                  "data": {"pairs": 500, "synthetic_pairs": 200},
                  "init_from": str(init) if init else None}
        if init is not None:  # what the trainer records as it starts (train._write_run_config)
            record["pretraining"] = chain_from(init)
        (folder / "config.json").write_text(json.dumps(record))
        (folder / "metrics.jsonl").write_text(json.dumps(
            {"step": steps, "epoch": 1, "elapsed_min": minutes}) + "\n")
        return folder

    first = run("session1", None, 4000, 9.5, "H100")
    second = run("session2", first, 7000, 8.0, "H200")
    moved = tmp_path / "back-here"
    second.rename(moved)  # sent back, then copied elsewhere; the first folder is gone too
    for f in first.iterdir():
        f.unlink()
    first.rmdir()
    third = run("session3", moved, 10000, 8.5, "H100")
    stages = pretraining_stages(third)
    assert [(s["steps"], s["minutes"], s["device"]) for s in stages] == [
        (4000, 9.5, "H100"), (7000, 8.0, "H200")]
    assert pretraining_stages(first.parent / "session1-none") == []


def test_training_minutes_add_up_over_resumed_sessions():
    records = [{"elapsed_min": m} for m in (10.0, 20.0, 5.0, 12.0)]
    assert training_minutes(records) == 32.0


def test_exported_model_translates_a_film_through_the_app(trained, tmp_path):
    _, bundle = trained
    film = write_srt(tmp_path / "film.srt", "1\n00:00:01,000 --> 00:00:02,000\nThank you very "
                     "much.\n\n2\n00:00:02,500 --> 00:00:04,000\nWhere is the door?\n")
    result = CliRunner().invoke(subctx_app, ["translate", str(film), "--model", str(bundle)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "film.ru.srt").read_text(encoding="utf-8").count("-->") == 2


def test_a_model_trained_to_read_translations_in_its_encoder_is_exported_and_served(tmp_path):
    cfg = make_config("tiny", max_steps=8, lr=5.0, target_context="encoder")
    Trainer(cfg, tmp_path / "run", fixture_docs(), fixture_docs(1), device="cpu",
            quiet=True).train()
    bundle = export_run(tmp_path / "run", tmp_path / "bundle", quantize="int8")
    manifest = load_bundle(bundle).manifest
    assert manifest.context.target_side == "encoder" and not manifest.context.target_prefix
    assert "previous translations: read by the encoder, each after its source" in \
        (bundle / "README.md").read_text(encoding="utf-8")
    engine = CTranslate2Backend(bundle, device="cpu", threads=1)
    assert engine.uses_target_context
    film = write_srt(tmp_path / "film.srt", "1\n00:00:01,000 --> 00:00:02,000\nThank you very "
                     "much.\n\n2\n00:00:02,500 --> 00:00:04,000\nWhere is the door?\n")
    result = CliRunner().invoke(subctx_app, ["translate", str(film), "--model", str(bundle)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "film.ru.srt").read_text(encoding="utf-8").count("-->") == 2


def test_readers_of_the_release_formats(tmp_path):
    assert detokenize("Didn 't I say , ( really ) ?") == "Didn't I say, (really)?"
    assert contains_form("Я тебя вижу, ты знаешь.", "Ты")
    assert not contains_form("Вы знаете.", "ты")
    dev = _write_dev(tmp_path)
    groups = read_voita(dev / "voita" / "mjpost", "deixis_dev")
    assert len(groups) == 2 and groups[1].variants[2] == ["Привет.", "Оно сказало."]
    assert groups[1].sources == ["Hello there.", "She said it was fine."]
    items = read_ctxpro(dev / "ctxpro")["formality"]
    assert items[1].sentences == ["Thank you.", "I do not know.", "Hi."]


def test_spread_documents_keeps_whole_documents_across_the_set():
    docs = [Document(f"d{i}", [Segment(f"s{i}.{j}", "т") for j in range(3 + i % 2)])
            for i in range(20)]
    picked = spread_documents(docs, 20)
    assert sum(len(d.segments) for d in picked) >= 20 and len(picked) < len(docs)
    assert picked[0] is docs[0] and int(picked[-1].doc_id[1:]) >= 15  # spread, not a prefix
    assert all(len(d.segments) in (3, 4) for d in picked)  # never cut inside a document
    assert spread_documents(docs, None) == docs and spread_documents(docs, 10_000) == docs


def test_model_card_limits_come_from_the_measured_scores():
    def row(bleu, deixis):
        return {"friends_bleu": bleu, "deixis_dev": deixis, "lex_cohesion_dev": 0.46}

    worse_with_context = known_limits({"context=1": row(12.0, 0.52), "context=0": row(15.5, 0.5),
                                       "context=1 (random)": row(8.0, 0.5)})
    text = "\n".join(worse_with_context)
    assert "BLEU 12.0 with context against 15.5 with `--context 0`" in text
    assert "deixis 0.52" in text and "Severely undertrained" not in text
    good = "\n".join(known_limits({"context=1": row(20.0, 0.8), "context=0": row(19.0, 0.5)}))
    assert "Context costs" not in good and "barely decides" not in good
    level = "\n".join(known_limits({"context=1": row(18.01, 0.8), "context=0": row(18.02, 0.5)}))
    assert "Context costs" not in level  # 0.01 BLEU is noise, not a cost
    assert "Severely undertrained" in "\n".join(known_limits({"context=0": row(1.0, 0.5)}))
    # a larger K measured with `dev-report --context K`: a line when it decides ты/вы more often
    def measured(k, deixis, speed):
        return {**row(18.0, deixis), "context": k, "ctxpro_dev": 0.3, "friends_chrf": 35.6,
                "sentences_per_s": speed}

    more = "\n".join(known_limits({"context=1": measured(1, 0.57, 177.0),
                                   "context=0": measured(0, 0.5, 260.0),
                                   "context=3": measured(3, 0.68, 104.0),
                                   "context=1 (random)": {**measured(1, 0.5, 150.0),
                                                          "context": "1 (random)"}}))
    assert "with `--context 3` Voita deixis 0.68 (K=1: 0.57)" in more and "104.0" in more
    assert "--context 0`" not in more and "random" not in more
    assert "More previous lines" not in "\n".join(known_limits(
        {"context=1": measured(1, 0.57, 177.0), "context=2": measured(2, 0.55, 130.0)}))


def _docs_with_own(own) -> list[Document]:
    """The fixture corpus as one timed document; `own(tgt)` is each line's `mt`."""
    return [Document("d", [Segment(s, t, 2.0 * i, 2.0 * i + 1.5, mt=own(t))
                           for i, (s, t) in enumerate(CORPUS)])]


def test_context_nll_scores_no_gold_and_own_previous_translation(trained, tmp_path):
    root, _ = trained
    same = run_context_nll(root / "run", _docs_with_own(lambda t: t))
    assert same.examples == len(CORPUS) - 1  # every line but the first has a previous one
    assert same.own == pytest.approx(same.gold) and same.none != pytest.approx(same.gold)
    wrong = run_context_nll(root / "run", _docs_with_own(lambda t: "Дверь хлопает."))
    assert wrong.gold == pytest.approx(same.gold) and wrong.own != pytest.approx(wrong.gold)
    assert run_context_nll(root / "run", _docs_with_own(lambda t: None)).own is None
    model, cfg = load_final_model(root / "run")
    with pytest.raises(ValueError, match="concatenation model"):
        context_nll(model, replace(cfg, architecture="context_encoder"), None, [])
    data = tmp_path / "dev.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        write_jsonl(_docs_with_own(lambda t: t), handle)
    result = CliRunner().invoke(train_app, ["context-nll", str(root / "run"), "--data",
                                            str(data), "--json", str(tmp_path / "nll.json")])
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "nll.json").read_text())["context_nll"][0]
    assert row["examples"] == len(CORPUS) - 1 and row["own"] == pytest.approx(same.own, abs=1e-4)


def test_a_resumed_run_keeps_its_start_and_says_what_changed(tmp_path):
    """Resuming without --init-from keeps the start the run recorded; settings changed on
    resume are listed with their step, and the card says them (the tag share per stretch)."""
    from subctx_train.bundle_card import _controls_line, _resumes
    from subctx_train.train import resumed_record

    before = {"train": {"control_share": 0.5, "budget_minutes": 100.0, "lr": 1.0},
              "init_from": "runs/base", "hardware": "2 CPUs", "data": {}}
    now = {"train": {"control_share": 0.7, "budget_minutes": 70.0, "lr": 1.0},
           "init_from": None, "hardware": "2 CPUs", "data": {}}
    record = resumed_record(before, now, 200)
    assert record["init_from"] == "runs/base"
    assert record["resumed"] == [{"at_step": 200, "changed": {
        "control_share": [0.5, 0.7], "budget_minutes": [100.0, 70.0]}}]
    again = resumed_record(record, {**now, "train": {**now["train"], "lr": 0.5}}, 300)
    assert [r["at_step"] for r in again["resumed"]] == [200, 300]
    assert resumed_record(before, {**before, "init_from": None}, 200).get("resumed") is None
    chained = {**before, "pretraining": [{"steps": 100}]}  # recorded when the run began
    assert resumed_record(chained, now, 200)["pretraining"] == [{"steps": 100}]

    t = {"resumed": again["resumed"]}
    assert _resumes(t) == ("; resumed at step 200 with control_share 0.5 → 0.7; resumed at "
                           "step 300 with lr 1.0 → 0.5")
    manifest = replace(load_bundle(default_bundle_path()).manifest, controls=["formality"])
    line = _controls_line(manifest, {"control_share": 0.7}, t)
    assert "; 50% (70% from step 200) of the training sources" in line
