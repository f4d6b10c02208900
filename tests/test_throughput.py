"""The training-throughput bench (subctx_train/throughput.py, `subctx-train throughput`) on the
CPU with the tiny preset: its FLOPs formula against torch's own count, its rows, its settings,
its command and what it may import (it runs on the GPU machine: no ctranslate2, no textual)."""

import json
import math
import statistics
import subprocess
import sys

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode
from typer.testing import CliRunner

from subctx_train.cli import app
from subctx_train.config import make_config
from subctx_train.examples import BOS, EOS, Example, Rendered, collate
from subctx_train.throughput import (
    SETTING_NAMES,
    batch_flops,
    fastest_settings,
    ladder,
    markdown_table,
    peak_tflops,
    run_throughput,
    setting_flags,
    synthetic_examples,
)
from subctx_train.train import BatchLoss, build_model, model_config


@pytest.mark.parametrize("architecture", ["transformer", "concat"])
def test_flops_formula_equals_torch_count_of_forward_and_backward(architecture):
    """Without padding, the formula is exactly what torch's FLOP counter finds in one
    forward and backward (attention through the math kernel, which it can count)."""
    cfg = make_config("tiny", architecture=architecture, dropout=0.0, precision="fp32")
    model = build_model(cfg, model_config(cfg, cfg.vocab_size))
    net = BatchLoss(model, 0.1)
    s, t = 11, 7
    rows = [Rendered(list(range(10, 10 + s)), list(range(s)),
                     [BOS, *range(20, 20 + t - 1), EOS], [1.0] * t) for _ in range(3)]
    batch = collate(rows)
    assert batch.real_tokens == batch.positions_total  # no padding
    with sdpa_kernel([SDPBackend.MATH]), FlopCounterMode(display=False) as counter:
        net(batch)[0].backward()
    assert batch_flops(batch, cfg, cfg.vocab_size) == counter.get_total_flops()
    padded = collate([*rows, Rendered([10], [0], [BOS, 20, EOS], [1.0, 1.0])])
    with sdpa_kernel([SDPBackend.MATH]), FlopCounterMode(display=False) as counter:
        net(padded)[0].backward()
    assert batch_flops(padded, cfg, cfg.vocab_size) < counter.get_total_flops()  # real only


def test_synthetic_examples_have_the_real_length_mix():
    examples = synthetic_examples(8000, 16000, max_k=1, seed=1)
    lengths = [len(ex.src) for ex in examples]
    assert 15 <= statistics.median(lengths) <= 21  # real: 17
    assert max(lengths) <= 256 and min(lengths) >= 1
    with_context = sum(1 for ex in examples if ex.src_ctx) / len(examples)
    assert with_context == pytest.approx(7 / 8, abs=0.01)  # real: 88 %
    ratio = statistics.median(len(ex.tgt) / len(ex.src) for ex in examples)
    assert 0.9 <= ratio <= 1.1
    assert all(7 <= i < 16000 for ex in examples[:100] for i in ex.src + ex.tgt)
    assert all(len(ex.src) <= 40 for ex in synthetic_examples(500, 200, 3, max_len=40))


def test_each_setting_adds_its_change_to_those_before():
    assert SETTING_NAMES == ("baseline", "fused", "no-sync", "sides", "compile")
    full = ladder()
    assert [s.name for s in full] == list(SETTING_NAMES)
    assert full[0].overrides == {"adam_impl": "auto", "log_every": 1, "batch_order": "size",
                                 "compile": False}
    assert full[-1].overrides == {"adam_impl": "fused", "log_every": 100,
                                  "batch_order": "sides", "compile": True}
    chosen = ladder(["baseline", "sides"], [24000])
    assert [s.name for s in chosen] == ["baseline", "sides", "tokens24000"]
    assert chosen[1].overrides["adam_impl"] == "fused"  # the ladder up to it
    assert chosen[2].overrides == {**chosen[1].overrides, "max_tokens": 24000}
    with pytest.raises(ValueError, match="unknown setting fast"):
        ladder(["fast"])


def test_peak_flops_by_the_gpu_name(monkeypatch):
    for name, peak in (("NVIDIA H100 80GB HBM3", 989.0), ("NVIDIA H200", 989.0),
                       ("NVIDIA A100-SXM4-80GB", 312.0), ("Some GPU", None)):
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None, n=name: n)
        assert peak_tflops(torch.device("cuda"), None) == peak
    assert peak_tflops(torch.device("cuda"), 500.0) == 500.0
    assert peak_tflops(torch.device("cpu"), None) is None


def test_tiny_rows_on_the_cpu(tmp_path):
    out = tmp_path / "throughput.json"
    settings = ladder(["baseline", "no-sync", "sides"], [800])
    report = run_throughput(["tiny"], settings, torch.device("cpu"), steps=3, warmup=1,
                            peak=2.0, json_path=out, n_examples=400)
    assert [r.setting for r in report.rows] == ["baseline", "no-sync", "sides", "tokens800"]
    for row in report.rows:
        assert row.error is None and row.steps == 3 and row.target_tokens_per_s > 0
        assert row.tokens_per_s > row.target_tokens_per_s  # sources and contexts too
        assert row.mfu == pytest.approx(row.tflops / 2.0) and row.tflops > 0
        assert 0 < row.padding < 0.5 and math.isfinite(row.loss)
        assert row.peak_memory_gib is None and row.syncs_per_step is None  # CUDA only
    assert report.rows[-1].max_tokens == 800 and report.rows[0].max_tokens == 400
    assert report.rows[0].params_m == report.rows[-1].params_m
    saved = json.loads(out.read_text())
    assert len(saved["rows"]) == 4 and saved["attention"] == {"note": "CUDA only"}
    assert "FLOPs" in saved["formula"] and saved["peak_tflops"] == 2.0
    lines = markdown_table(report).splitlines()
    assert len(lines) == 2 + 4 and "| MFU |" in lines[0] and "| padding |" in lines[0]


def test_the_warm_up_runs_every_timed_batch_first(monkeypatch):
    # each batch shape's first use (kernel choice, allocation) is paid before the clock starts
    import subctx_train.train as train

    seen = []
    real_update = train.update

    def update(net, model, optimizer, cfg, batch, step):
        seen.append((step, batch.tgt_out.shape, int(batch.tgt_out.sum())))
        return real_update(net, model, optimizer, cfg, batch, step)

    monkeypatch.setattr(train, "update", update)
    report = run_throughput(["tiny"], ladder(["baseline"]), torch.device("cpu"), steps=3,
                            warmup=1, n_examples=400)
    assert report.rows[0].steps == 3 and report.rows[0].warmup_s > 0
    assert [step for step, *_ in seen] == list(range(6))
    assert [b for _, *b in seen[:3]] == [b for _, *b in seen[3:]]  # the same batches, again


def test_a_row_that_fails_is_reported_and_the_budget_skips_the_rest(tmp_path):
    report = run_throughput(["tiny"], ladder(["baseline", "fused"]), torch.device("cpu"),
                            steps=1, warmup=0, n_examples=50, budget_s=0.0)
    assert report.rows == [] and report.skipped == ["tiny baseline", "tiny fused"]
    too_long = [Example([7] * 300, [8] * 5, [[7] * 10], [[8] * 5]) for _ in range(4)]
    report = run_throughput(["tiny"], ladder(["baseline", "fused"]), torch.device("cpu"),
                            steps=1, warmup=0, examples=too_long, overrides={"max_k": 1})
    # sources longer than the tiny model's 256 positions: an error in each row, not a crash
    assert [bool(row.error) for row in report.rows] == [True, True]
    assert "error" in markdown_table(report)


def test_the_command_writes_the_report(tmp_path):
    out = tmp_path / "t.json"
    result = CliRunner().invoke(app, [
        "throughput", "--preset", "tiny", "--setting", "baseline", "--steps", "2",
        "--warmup", "1", "--device", "cpu", "--examples", "200", "--json", str(out),
        "--max-k", "1", "--threads", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    [row] = report["rows"]
    assert row["setting"] == "baseline" and row["preset"] == "tiny"
    assert "| tiny | baseline |" in result.output and "MFU" in result.output
    bad = CliRunner().invoke(app, ["throughput", "--preset", "tiny", "--setting", "fast"])
    assert bad.exit_code == 2 and "unknown setting fast" in bad.output
    bad = CliRunner().invoke(app, ["throughput", "--preset", "tiny", "--max-kk", "1"])
    assert bad.exit_code == 2 and "did you mean --max-k" in bad.output


def _row(setting: str, tokens: float, warmup: float, preset: str = "gpu-deep",
         error: str | None = None, steps: float = 10.0) -> dict:
    overrides = next(s.overrides for s in ladder(max_tokens=[24000, 48000])
                     if s.name == setting)
    return {"preset": preset, "setting": setting, "target_tokens_per_s": tokens,
            "warmup_s": warmup, "error": error, "overrides": overrides, "steps_per_s": steps,
            "max_tokens": overrides.get("max_tokens", 12000)}


def test_the_fastest_setting_counts_its_warm_up(tmp_path):
    report = {"rows": [_row("baseline", 100, 1), _row("fused", 150, 1),
                       _row("sides", 900, 1, error="out of memory"),
                       _row("compile", 200, 400), _row("tokens24000", 500, 400, steps=5.0),
                       _row("compile", 999, 1, preset="gpu-big")]}
    short = fastest_settings(report, "gpu-deep", run_minutes=10)  # compile's start: too dear
    assert short == {"adam_impl": "fused", "log_every": 1, "batch_order": "size",
                     "compile": False}
    long = fastest_settings(report, "gpu-deep", run_minutes=60)
    assert long["compile"] is True and "max_tokens" not in long  # 24k: half the updates
    assert fastest_settings(report, "tiny") == {}
    flags = setting_flags(long)
    assert flags == ["--adam-impl", "fused", "--log-every", "100", "--batch-order", "sides",
                     "--compile", "true"]
    from subctx_train.config import parse_overrides
    assert parse_overrides(flags) == long  # what `train` reads back
    path = tmp_path / "t.json"
    path.write_text(json.dumps(report))
    said = CliRunner().invoke(app, ["throughput-flags", str(path), "--run-minutes", "60"])
    assert said.exit_code == 0 and said.stdout.strip() == " ".join(flags)
    report["rows"][4]["steps_per_s"] = 10.0  # now the bigger batch keeps the updates
    path.write_text(json.dumps(report))
    said = CliRunner().invoke(app, ["throughput-flags", str(path), "--run-minutes", "60"])
    assert said.stdout.split()[-2:] == ["--max-tokens", "24000"]
    said = CliRunner().invoke(app, ["throughput-flags", str(path), "--run-minutes", "60",
                                    "--no-batch"])
    assert said.stdout.strip() == " ".join(flags)  # another shape: the settings alone
    missing = CliRunner().invoke(app, ["throughput-flags", str(tmp_path / "none.json")])
    assert missing.exit_code == 0 and missing.stdout.strip() == ""  # the preset's defaults


def test_a_bigger_batch_is_taken_while_it_keeps_most_of_the_updates():
    compiled = _row("compile", 200, 1, steps=10.0)
    report = {"rows": [_row("baseline", 100, 1), compiled,
                       _row("tokens24000", 380, 1, steps=9.5),  # overhead-bound: ~same steps
                       _row("tokens48000", 420, 1, steps=5.2)]}  # arithmetic-bound: half
    assert fastest_settings(report, "gpu-deep")["max_tokens"] == 24000
    report["rows"][2]["steps_per_s"] = 7.0
    assert "max_tokens" not in fastest_settings(report, "gpu-deep")
    report["rows"][1] = _row("fused", 250, 1)  # the bigger rows build on compile: not this
    report["rows"][2]["steps_per_s"] = 10.0
    assert "max_tokens" not in fastest_settings(report, "gpu-deep")


def test_the_bench_imports_without_ctranslate2_or_textual():
    """The GPU machine has torch but neither ctranslate2 nor textual."""
    code = ("import sys; sys.modules['ctranslate2'] = None; sys.modules['textual'] = None; "
            "import subctx_train.throughput, subctx_train.cli; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
