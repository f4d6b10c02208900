"""`subctx-train` refuses bad input with one line and a non-zero exit, before the work:
config ranges, fine-tuning that would train nothing, a run that wrote no weights, export's
context settings, evaluation's context, and bundles of the wrong direction."""

import json

import pytest
from typer.testing import CliRunner

from subctx_train.cli import app
from tests.test_train_cli import _plain, _write_docs
from tests.test_training import fixture_docs


def _invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def _tiny_run(tmp_path, name="run", steps=4, max_k=1):
    """A tiny trained run folder (a few seconds)."""
    from subctx_train.config import make_config
    from subctx_train.train import Trainer

    run = tmp_path / name
    Trainer(make_config("tiny", max_steps=steps, eval_every=2, max_k=max_k), run,
            fixture_docs(), fixture_docs(1), device="cpu", quiet=True).train()
    return run


@pytest.mark.parametrize("args,message", [
    (["--eval-every", "0"], "--eval-every 0: must be at least 1"),
    (["--warmup", "0"], "--warmup 0: must be at least 1"),
    (["--dropout", "1.5"], "--dropout 1.5: must be in [0, 1)"),
    (["--d-model", "33"], "--d-model 33: must be even and a multiple of --n-heads (2)"),
    (["--k-probs", "0,0", "--max-k", "1"], "--k-probs 0,0: each weight must be 0 or more"),
    (["--max-positions", "4"], "--max-positions 4: must be at least 16"),
    (["--keep-last", "0"], "--keep-last 0: must be at least 1"),
    (["--max-steps", "0"], "--max-steps 0: must be at least 1"),
    (["--clip-norm", "-1"], "--clip-norm -1: must be more than 0"),
    (["--threads", "-3"], "Invalid value for '--threads'"),
])
def test_train_refuses_an_out_of_range_value_before_reading_data(tmp_path, args, message):
    result = _invoke("train", "missing.jsonl", "--run", tmp_path / "r", "--preset", "tiny",
                     *args)
    assert result.exit_code == 2, result.output
    assert message in _plain(result.output) and "Traceback" not in result.output
    assert not (tmp_path / "r").exists()


def test_fine_tuning_that_would_train_nothing_is_refused_up_front(tmp_path):
    init = tmp_path / "init"
    (init / "checkpoints" / "step-300").mkdir(parents=True)
    (init / "checkpoints" / "step-300" / "meta.json").write_text('{"step": 300}')
    for steps in ("50", "300"):
        result = _invoke("train", "missing.jsonl", "--run", tmp_path / "r", "--preset", "tiny",
                         "--init-from", init, "--max-steps", steps)
        assert result.exit_code == 2, result.output
        assert f"--max-steps {steps} is not past the init run's step 300: it would train " \
               "nothing" in _plain(result.output)
    assert not (tmp_path / "r").exists()
    # a step-* checkpoint as the start: its own step
    result = _invoke("train", "missing.jsonl", "--run", tmp_path / "r", "--preset", "tiny",
                     "--init-from", init / "checkpoints" / "step-300", "--max-steps", "10")
    assert result.exit_code == 2 and "the init run's step 300" in _plain(result.output)


def test_train_says_when_no_final_weights_were_written(tmp_path, monkeypatch):
    from subctx_train.train import Trainer

    monkeypatch.setattr(Trainer, "finalize", lambda self: {})  # as a run with no checkpoint
    data = _write_docs(tmp_path / "train.jsonl", fixture_docs())
    run = tmp_path / "run"
    result = _invoke("train", data, "--run", run, "--preset", "tiny", "--max-steps", "2",
                     "--eval-every", "2", "--device", "cpu", "--threads", "1")
    assert result.exit_code == 1, result.output
    assert "error: no final weights were written to" in result.output
    assert "final (averaged) weights" not in result.output
    assert not (run / "final.safetensors").exists()


def test_train_refuses_max_positions_shorter_than_the_data(tmp_path):
    from tests.helpers import CORPUS

    long = " ".join(src for src, _ in CORPUS)  # about 50 pieces
    docs = fixture_docs()
    docs[0].segments[0].src = long
    data = _write_docs(tmp_path / "train.jsonl", docs)
    result = _invoke("train", data, "--run", tmp_path / "run", "--preset", "tiny",
                     "--max-positions", "20", "--max-steps", "2", "--device", "cpu",
                     "--threads", "1")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert re_search(r"--max-positions 20 is too few for the data: its longest sentence takes "
                     r"(\d+) positions \(give at least \1\)", _plain(result.output))


def re_search(pattern: str, text: str):
    import re

    found = re.search(pattern, text)
    assert found, text
    return found


@pytest.mark.parametrize("args,message", [
    (["--default-k", "-2"], "Invalid value for '--default-k'"),
    (["--max-gap", "-5"], "Invalid value for '--max-gap'"),
    (["--max-k", "-1"], "Invalid value for '--max-k'"),
])
def test_export_refuses_negative_context_settings(tmp_path, args, message):
    result = _invoke("export", tmp_path / "missing-run", "--out", tmp_path / "b", *args)
    assert result.exit_code == 2 and message in _plain(result.output)
    assert not (tmp_path / "b").exists()


def test_export_refuses_a_file_as_out(tmp_path):
    target = tmp_path / "bundle"
    target.write_text("not a folder")
    result = _invoke("export", tmp_path / "missing-run", "--out", target)
    assert result.exit_code == 2
    assert f"Invalid value for --out: {target} is a file, not a folder" in _plain(result.output)
    assert target.read_text() == "not a folder"


def test_export_says_when_it_lowers_default_k_to_the_bundles_most(tmp_path):
    run = _tiny_run(tmp_path, max_k=1)
    result = _invoke("export", run, "--out", tmp_path / "b", "--backend", "torch",
                     "--default-k", "3")
    assert result.exit_code == 0, result.output
    assert "warning: --default-k 3 is more than the bundle's most context (1): its default " \
           "is 1 (--max-k sets the most)" in result.output
    context = json.loads((tmp_path / "b" / "subctx.json").read_text())["context"]
    assert (context["max_k"], context["default_k"]) == (1, 1)
    # not given: 1 as before, with no warning (0 for a model without context)
    quiet = _invoke("export", run, "--out", tmp_path / "b0", "--backend", "torch",
                    "--max-k", "0")
    assert quiet.exit_code == 0 and "warning" not in quiet.output
    assert json.loads((tmp_path / "b0" / "subctx.json").read_text())["context"][
        "default_k"] == 0


@pytest.mark.parametrize("command,args,option", [
    ("evaluate", ["--context", "-1"], "--context"),
    ("evaluate", ["--beam", "0"], "--beam"),
    ("evaluate", ["--threads", "-3"], "--threads"),
    ("evaluate", ["--max-gap", "-1"], "--max-gap"),
    ("evaluate-ctxpro", ["--context", "-1"], "--context"),
    ("evaluate-contrastive", ["--context", "-1"], "--context"),
])
def test_evaluation_options_out_of_range_are_refused(tmp_path, command, args, option):
    data = "--voita" if command == "evaluate-contrastive" else "--data"
    result = _invoke(command, "--model", tmp_path / "no-bundle", data, tmp_path / "x", *args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in _plain(result.output)


@pytest.mark.parametrize("command", ["dev-report", "controls-report", "context-nll",
                                     "back-translate", "self-translate", "throughput",
                                     "register-cues"])
def test_every_threads_option_refuses_a_negative_count(tmp_path, command):
    result = _invoke(command, "--threads", "-3")
    assert result.exit_code == 2 and "Invalid value for '--threads'" in _plain(result.output), \
        result.output


def test_evaluate_caps_context_at_the_models_most_and_says_so(tmp_path):
    from tests.helpers import build_tiny_bundle

    bundle = build_tiny_bundle(tmp_path, max_k=1)
    dev = _write_docs(tmp_path / "dev.jsonl", fixture_docs(1))
    out = tmp_path / "ev.json"
    result = _invoke("evaluate", "--model", bundle, "--data", dev, "--context", "5",
                     "--beam", "1", "--device", "cpu", "--threads", "1", "--json", out)
    assert result.exit_code == 0, result.output
    assert "warning: --context 5: the model reads at most 1 context sentence(s); evaluating " \
           "with 1" in result.output
    assert [row["context"] for row in json.loads(out.read_text())["bleu_chrf"]] == [1]


def test_dev_report_warns_of_a_context_row_the_model_cannot_give(tiny_bundle, tmp_path,
                                                                   monkeypatch):
    from subctx_train import report

    asked = {}
    monkeypatch.setattr(report, "full_dev_report",
                        lambda models, *args: asked.setdefault("more", args[-1]) and
                        {"models": {}})
    monkeypatch.setattr(report, "show_dev_table", lambda r: None)
    result = _invoke("dev-report", tiny_bundle, "--dev-root", tmp_path, "--context", "2",
                     "--context", "5", "--context", "7")
    assert result.exit_code == 0, result.output
    assert f"warning: {tiny_bundle} reads at most 3 context sentence(s): no row with " \
           "--context 5, 7" in result.output
    assert asked["more"] == [2, 5, 7]
    for bad in ("0", "-1"):
        refused = _invoke("dev-report", tiny_bundle, "--dev-root", tmp_path, "--context", bad)
        assert refused.exit_code == 2 and "Invalid value for '--context'" in \
            _plain(refused.output)


def _with_direction(bundle, source, target):
    manifest = bundle / "subctx.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "source_lang": source, "target_lang": target}))
    return bundle


@pytest.mark.parametrize("command,source,target,needs", [
    ("back-translate", "en", "ru", "Russian to English (ru-en)"),
    ("self-translate", "ru", "en", "English to Russian (en-ru)"),
])
def test_a_bundle_of_the_wrong_direction_is_refused_before_reading(tmp_path, command, source,
                                                                   target, needs):
    from tests.helpers import build_tiny_bundle

    bundle = _with_direction(build_tiny_bundle(tmp_path), source, target)
    broken = tmp_path / "docs.jsonl"
    broken.write_text("not json\n")  # never read: the bundle is refused first
    result = _invoke(command, broken, "--model", bundle, "--out", tmp_path / "out",
                     "--threads", "1")
    assert result.exit_code == 2, result.output
    names = {"en": "English", "ru": "Russian"}
    assert f"Invalid value for --model: {bundle} translates {names[source]} to " \
           f"{names[target]} ({source}-{target}): {command} needs a bundle that translates " \
           f"{needs}" in _plain(result.output)
    assert not (tmp_path / "out").exists()
