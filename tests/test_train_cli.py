"""`subctx-train` commands on tiny runs: finalize keeps what the run recorded."""

import json
import re

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


def _plain(output: str) -> str:
    """Help or error text without the boxes and line breaks around it."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", output).split())


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


def test_train_takes_config_fields_as_overrides_and_records_them(tmp_path):
    data = _write_docs(tmp_path / "train.jsonl", fixture_docs())
    config = tmp_path / "small.toml"
    config.write_text('d_model = 32\nn_heads = 2\nff_dim = 64\nenc_layers = 1\ndec_layers = 1\n'
                      'vocab_size = 200\nmax_tokens = 400\nwarmup = 10\nmax_positions = 256\n'
                      '[corpus_weights]\ndoc0 = 2\n', encoding="utf-8")
    run = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "train", str(data), "--run", str(run), "--config", str(config), "--max-steps", "2",
        "--eval-every", "2", "--architecture", "transformer", "--weight", "doc1=0.5",
        "--no-compile", "--lr", "3", "--device", "cpu", "--threads", "1"])
    assert result.exit_code == 0, result.output
    record = json.loads((run / "config.json").read_text())
    train = record["train"]
    assert (train["architecture"], train["max_steps"], train["lr"], train["d_model"]) == \
        ("transformer", 2, 3.0, 32)
    assert train["corpus_weights"] == {"doc0": 2.0, "doc1": 0.5}
    assert (train["max_k"], train["k_probs"], train["segment_shift"]) == (0, [1.0], 0)
    assert record["data"]["sources"] == [str(data)]


def test_train_refuses_an_unknown_field_before_reading_data(tmp_path):
    result = CliRunner().invoke(app, ["train", "missing.jsonl", "--run", str(tmp_path / "r"),
                                      "--max-kk", "1"])
    assert result.exit_code == 2
    assert "no such option --max-kk (did you mean --max-k?" in _plain(result.output)
    assert not (tmp_path / "r").exists()
    both = CliRunner().invoke(app, ["train", "x.jsonl", "--run", str(tmp_path / "r"),
                                    "--preset", "tiny", "--config", __file__])
    assert both.exit_code == 2 and "give --preset or --config, not both" in both.output


def test_train_help_lists_the_config_fields_and_the_presets():
    from dataclasses import fields

    from subctx_train.config import TrainConfig, flag_name, preset_names

    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    text = _plain(result.output)
    for f in fields(TrainConfig):
        assert f"--{flag_name(f)} " in text or f"--[no-]{flag_name(f)} " in text
    assert "--weight NAME=W copies per epoch of a corpus" in text
    assert "--max-k N most context sentences" in text
    assert ", ".join(preset_names()) in text



TYPE_NOISE = re.compile(r"<(bool|int|float|text|path|integer|list\[\w+\]|\w+,\w+(,\w+)*)>",
                        re.IGNORECASE)


def test_no_command_help_shows_types():
    commands = [None, *(c.name or c.callback.__name__.replace("_", "-")
                        for c in app.registered_commands)]
    assert len(commands) > 15
    for name in commands:
        result = CliRunner().invoke(app, [name, "--help"] if name else ["--help"])
        assert result.exit_code == 0, (name, result.output)
        assert not TYPE_NOISE.search(result.output), (name, TYPE_NOISE.search(result.output))
