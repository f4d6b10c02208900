"""`subctx-train` commands on tiny runs: finalize keeps what the run recorded."""

import json

from typer.testing import CliRunner

from subctx_train.bundle_card import export_run
from subctx_train.cli import app
from subctx_train.config import make_config
from subctx_train.train import Trainer
from tests.test_training import fixture_docs


def _write_docs(path, docs):
    with open(path, "w", encoding="utf-8") as handle:
        for doc in docs:
            segments = [{"src": s.src, "tgt": s.tgt, "start": s.start, "end": s.end}
                        for s in doc.segments]
            handle.write(json.dumps({"doc": doc.doc_id, "segments": segments},
                                    ensure_ascii=False) + "\n")
    return path


def test_finalize_keeps_the_recorded_data_and_hardware(tmp_path):
    run = tmp_path / "run"
    cfg = make_config("tiny", max_steps=6, eval_every=3)
    Trainer(cfg, run, fixture_docs(), fixture_docs(1), device="cpu", quiet=True,
            sources=["train.jsonl"]).train()
    record = json.loads((run / "config.json").read_text())
    assert record["data"]["pairs"] == 48 and record["data"]["sources"] == ["train.jsonl"]
    record["hardware"] = "8 × NVIDIA H100 80GB HBM3"  # as if trained on a GPU machine
    (run / "config.json").write_text(json.dumps(record, indent=1, ensure_ascii=False))
    before = (run / "config.json").read_text()

    dev = _write_docs(tmp_path / "dev.jsonl", fixture_docs(1))
    result = CliRunner().invoke(app, ["finalize", str(run), "--dev", str(dev)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["averaged_checkpoints"]
    assert (run / "config.json").read_text() == before
    training = json.loads((export_run(run, tmp_path / "bundle", backend="torch")
                           / "subctx.json").read_text())["info"]["training"]
    assert training["device"] == "8 × NVIDIA H100 80GB HBM3"
    assert training["data"]["pairs"] == 48
