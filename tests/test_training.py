"""Tiny CPU training runs on fixture documents (seconds each)."""

import json
import math
import os
import shutil
from functools import partial

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch.utils._python_dispatch import TorchDispatchMode

from subctx.layout import TARGET_SIDES
from subctx_train.bundle_card import _training_info
from subctx_train.checkpoint import average_states, load_chunked, save_checkpoint, save_chunked
from subctx_train.config import make_config
from subctx_train.data import Document, Segment
from subctx_train.examples import (
    BOS,
    EOS,
    Example,
    batch_stream,
    collate,
    epoch_batches,
    render,
)
from subctx_train.hardware import share_gpu, use_bf16
from subctx_train.loss import discounted_loss
from subctx_train.prefetch import Prefetcher
from subctx_train.runs import init_step
from subctx_train.train import Trainer
from tests.helpers import CORPUS


def fixture_docs(copies: int = 8) -> list[Document]:
    docs = []
    for c in range(copies):
        segs = [Segment(src, tgt, 2.0 * i, 2.0 * i + 1.5) for i, (src, tgt) in enumerate(CORPUS)]
        docs.append(Document(f"doc{c}", segs))
    return docs


def test_render_context_discount_weights_and_shifted_positions():
    ex = Example(src=[10, 11], tgt=[20, 21, 22], src_ctx=[[5], [6, 7]], tgt_ctx=[[8], [9, 9]])
    r = render(ex, k=2, sep=4, cd_weight=0.01, shift=16)
    assert r.src == [5, 4, 6, 7, 4, 10, 11, EOS]
    assert r.positions == [0, 1, 2 + 16, 3 + 16, 4 + 16, 5 + 32, 6 + 32, 7 + 32]
    assert r.tgt == [BOS, 8, 4, 9, 9, 4, 20, 21, 22, EOS]
    # predictions of the 5 context tokens (incl. separators) are discounted
    assert r.weights == [0.01] * 5 + [1.0] * 4
    plain = render(ex, k=0, sep=4, cd_weight=0.01, shift=16)
    assert plain.src == [10, 11, EOS] and plain.weights == [1.0] * 4
    # sKto1: source-side context only
    s2to1 = render(ex, k=2, sep=4, cd_weight=0.01, shift=0, side=TARGET_SIDES["none"])
    assert s2to1.src[:5] == [5, 4, 6, 7, 4] and s2to1.tgt == [BOS, 20, 21, 22, EOS]
    # translations in the encoder, each after its source, one segment each: nothing forced
    enc = render(ex, k=2, sep=4, cd_weight=0.01, shift=16, side=TARGET_SIDES["encoder"])
    assert enc.src == [5, 4, 8, 4, 6, 7, 4, 9, 9, 4, 10, 11, EOS]
    assert enc.positions[:5] == [0, 1, 2 + 16, 3 + 16, 4 + 32]
    assert enc.tgt == [BOS, 20, 21, 22, EOS] and enc.weights == [1.0] * 4 and enc.prefix_len == 0
    # with the model's positions as the limit, context goes oldest first until both sides fit
    assert render(ex, k=2, sep=4, cd_weight=0.01, shift=0, side=TARGET_SIDES["encoder"],
                  limit=10).src == [6, 7, 4, 9, 9, 4, 10, 11, EOS]
    assert render(ex, k=2, sep=4, cd_weight=0.01, shift=0, limit=8).tgt == \
        [BOS, 9, 9, 4, 20, 21, 22, EOS]
    assert render(ex, k=2, sep=4, cd_weight=0.01, shift=0, limit=4).src == [10, 11, EOS]
    # a context sentence without a translation: source-side context only
    partial = Example([10], [20], [[5]], [None])
    r = render(partial, k=1, sep=4, cd_weight=0.01, shift=0)
    assert r.src == [5, 4, 10, EOS] and r.tgt == [BOS, 20, EOS]


def test_discounted_loss_counts_current_tokens_only():
    logits = torch.zeros(1, 3, 5)
    target = torch.tensor([[1, 2, 3]])
    weights = torch.tensor([[0.01, 1.0, 1.0]])
    current = torch.tensor([[False, True, True]])
    out = discounted_loss(logits, target, weights, current, label_smoothing=0.0)
    uniform = torch.log(torch.tensor(5.0))
    assert out.tokens == 2
    assert out.loss.item() == pytest.approx(float(uniform * 2.01 / 2), rel=1e-5)
    assert out.nll_sum == pytest.approx(float(uniform * 2), rel=1e-5)


def test_batches_respect_token_budget_and_are_deterministic():
    ex = [Example([1] * n, [2] * n, [], []) for n in range(1, 60)]
    renderer = partial(render, sep=4, cd_weight=0.01, shift=0)
    a = epoch_batches(ex, 0, 1, 100, [1.0], renderer)
    b = epoch_batches(ex, 0, 1, 100, [1.0], renderer)
    assert [[len(r.src) for r in batch] for batch in a] == [[len(r.src) for r in batch]
                                                            for batch in b]
    for batch in a:
        longest = max(max(len(r.src), len(r.tgt)) for r in batch)
        assert longest * len(batch) <= 100 or len(batch) == 1
    assert sum(len(batch) for batch in a) == len(ex)


def test_batch_stream_resumes_where_a_checkpoint_stopped():
    ex = [Example([1] * n, [2] * n, [], []) for n in range(1, 60)]
    renderer = partial(render, sep=4, cd_weight=0.01, shift=0)
    per_epoch = len(epoch_batches(ex, 0, 1, 100, [1.0], renderer))
    stream = batch_stream(ex, 0, 0, 1, 100, [1.0], renderer)
    straight = [next(stream) for _ in range(per_epoch + 3)]  # into the second epoch
    assert [e for e, _, _ in straight[per_epoch - 1:per_epoch + 1]] == [0, 1]
    epoch, taken, _ = straight[per_epoch - 2]  # a checkpoint after this batch
    resumed = batch_stream(ex, epoch, taken, 1, 100, [1.0], renderer)
    for want in straight[per_epoch - 1:]:
        got = next(resumed)
        assert got[:2] == want[:2] and torch.equal(got[2].src, want[2].src)


def test_batch_stream_gives_each_rank_an_equal_share():
    ex = [Example([1] * n, [2] * n, [], []) for n in range(1, 60)]
    renderer = partial(render, sep=4, cd_weight=0.01, shift=0)
    per_epoch = len(epoch_batches(ex, 0, 1, 100, [1.0], renderer))
    shares = []
    for rank in range(3):
        stream = batch_stream(ex, 0, 0, 1, 100, [1.0], renderer, rank=rank, world=3)
        shares.append(sum(1 for e, _, _ in (next(stream) for _ in range(per_epoch)) if e == 0))
    assert shares[0] == shares[1] == shares[2] == per_epoch // 3


def test_prefetcher_keeps_order_stops_and_passes_errors_on():
    assert list(Prefetcher(iter(range(50)), depth=3)) == list(range(50))

    def endless():
        n = 0
        while True:
            yield n
            n += 1

    with Prefetcher(endless(), depth=2) as items:
        assert [next(items) for _ in range(5)] == [0, 1, 2, 3, 4]
    assert not items._thread.is_alive()

    def failing():
        yield 1
        raise ValueError("broken batch")

    items = Prefetcher(failing())
    assert next(items) == 1
    with pytest.raises(ValueError, match="broken batch"):
        next(items)


def _trainer(tmp_path, name, **overrides):
    cfg = make_config("tiny", **{"max_steps": 20, "dropout": 0.1, **overrides})
    return Trainer(cfg, tmp_path / name, fixture_docs(), fixture_docs(1), device="cpu",
                   quiet=True)


# held-out dev documents: other sentences made of the training sentences' words
HELD_OUT = [("Where are you?", "Где ты?"), ("Thank you.", "Спасибо."),
            ("I do not know.", "Я не знаю."), ("She said it.", "Она сказала.")]


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_loss_goes_down(tmp_path, precision):
    cfg = make_config("tiny", max_steps=60, dropout=0.1, lr=5.0, precision=precision)
    dev = [Document("held-out", [Segment(s, t) for s, t in HELD_OUT])]
    assert not {s for s, _ in HELD_OUT} & {s for s, _ in CORPUS}
    trainer = Trainer(cfg, tmp_path / "run", fixture_docs(), dev, device="cpu", quiet=True)
    assert use_bf16(trainer.cfg.precision, trainer.device) == (precision == "bf16")
    before = trainer.evaluate()["dev_nll"]
    trainer.train()
    after = trainer.evaluate()["dev_nll"]
    assert after < before - 0.5
    assert (tmp_path / "run" / "training.png").exists()
    assert (tmp_path / "run" / "final.safetensors").exists()
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) >= 2


def test_resume_gives_identical_state(tmp_path):
    straight = _trainer(tmp_path, "straight", max_steps=12, eval_every=6)
    straight.train()
    (tmp_path / "resumed").mkdir()
    shutil.copy(tmp_path / "straight" / "spm.model", tmp_path / "resumed" / "spm.model")
    first = _trainer(tmp_path, "resumed", max_steps=6, eval_every=6)
    first.train()
    second = _trainer(tmp_path, "resumed", max_steps=12, eval_every=6)
    assert second.state.step == 6
    second.train()
    a, b = straight.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    opt_a, opt_b = straight.optimizer.state_dict(), second.optimizer.state_dict()
    for pid, state in opt_a["state"].items():
        assert torch.equal(state["exp_avg"], opt_b["state"][pid]["exp_avg"])


def _fine_tuner(tmp_path, name, init_from, **overrides):
    cfg = make_config("tiny", **{"max_steps": 20, **overrides})
    return Trainer(cfg, tmp_path / name, fixture_docs(), fixture_docs(1), device="cpu",
                   quiet=True, init_from=init_from)


@pytest.mark.parametrize("architecture", ["concat", "context_encoder"])
def test_fine_tuning_starts_from_the_baseline(tmp_path, architecture):
    base = _trainer(tmp_path, "base", architecture="transformer", max_steps=10, eval_every=5,
                    enc_layers=2)
    base.train()
    final = load_file(str(tmp_path / "base" / "final.safetensors"))
    tuned = _fine_tuner(tmp_path, architecture, tmp_path / "base", architecture=architecture,
                        max_steps=14, eval_every=2, enc_layers=2)
    assert tuned.state.step == 10  # the schedule goes on from the baseline's last step
    checkpoint = sorted((tmp_path / "base" / "checkpoints").glob("step-*"))[-1]
    assert init_step(tmp_path / "base") == init_step(checkpoint) == 10
    assert (tmp_path / architecture / "spm.model").read_bytes() == \
        (tmp_path / "base" / "spm.model").read_bytes()
    own = tuned.model.state_dict()
    shared = [k for k in final if k in own and own[k].shape == final[k].shape]
    assert "embed.weight" in shared and all(torch.equal(own[k], final[k]) for k in shared)
    if architecture == "context_encoder":  # the baseline's last layer seeds both last layers
        for name in ("source_last.ffn.inner.weight", "context_last.ffn.inner.weight"):
            assert torch.equal(own[name], final["encoder.1.ffn.inner.weight"])
    tuned.train()
    assert tuned.state.step == 14
    resumed = _fine_tuner(tmp_path, architecture, tmp_path / "base", architecture=architecture,
                          max_steps=14, enc_layers=2)
    assert resumed.state.step == 14  # a restart resumes the run, it does not re-initialise
    info = _training_info(tmp_path / architecture, tuned.cfg, {})
    [stage] = info["pretraining"]
    assert stage["architecture"] == "transformer" and stage["run"] == str(tmp_path / "base")
    assert stage["steps"] == 10 and info["steps"] == 14


def test_fine_tuning_refuses_another_tokenizer(tmp_path):
    base = _trainer(tmp_path, "base", architecture="transformer", max_steps=5, eval_every=5)
    base.train()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "spm.model").write_bytes(b"not the same")
    with pytest.raises(ValueError, match="different tokenizer"):
        _fine_tuner(tmp_path, "other", tmp_path / "base", architecture="concat")


def test_budget_stops_training(tmp_path):
    trainer = _trainer(tmp_path, "budget", max_steps=100_000, budget_minutes=0.001)
    trainer.train()
    assert 0 < trainer.state.step < 100_000


def test_chunked_checkpoints_round_trip(tmp_path):
    big = torch.randn(100, 50)
    names = save_chunked({"big": big, "small": torch.ones(3)}, tmp_path, "w", max_bytes=4000)
    assert len(names) > 4 and all((tmp_path / n).stat().st_size < 4000 + 2048 for n in names)
    loaded = load_chunked(tmp_path, "w")
    assert torch.equal(loaded["big"], big) and torch.equal(loaded["small"], torch.ones(3))


def test_chunks_are_packed_into_the_fewest_files(tmp_path):
    # float32 tensors of 5, 6, 5 and 4 units of 100 bytes, files of 1000 bytes: written in
    # order they would take three files; packed largest first, two (6+4 and 5+5)
    tensors = {name: torch.zeros(units * 25) for name, units in
               (("a", 5), ("b", 6), ("c", 5), ("d", 4))}
    names = save_chunked(tensors, tmp_path, "w", max_bytes=1000)
    assert len(names) == 2
    loaded = load_chunked(tmp_path, "w")
    assert sorted(loaded) == ["a", "b", "c", "d"] and loaded["b"].numel() == 150


def test_collect_keeps_within_eight_files(tmp_path, monkeypatch):
    from subctx_train import checkpoint

    run = tmp_path / "run"
    run.mkdir()
    save_chunked({"w": torch.zeros(1000)}, run, "final-src")  # stands in for final weights
    (run / "final-src-000.safetensors").rename(run / "final.safetensors")
    for name in checkpoint.RUN_FILES + checkpoint.OPTIONAL_RUN_FILES:
        (run / name).write_text("{}")
    monkeypatch.setattr(save_chunked, "__defaults__", (1000,))  # 4000 bytes: 4 chunks
    files = checkpoint.collect_run(run, tmp_path / "out", dtype="fp32")
    names = sorted(f.name for f in files)
    assert len(names) == 8 and "training.png" not in names and "metrics.jsonl" in names
    monkeypatch.setattr(save_chunked, "__defaults__", (400,))  # 10 chunks: too many to send
    with pytest.raises(ValueError, match="more than 8"):
        checkpoint.collect_run(run, tmp_path / "out2", dtype="fp32")


def test_collect_int8_comes_back_within_half_a_step_per_row(tmp_path):
    from subctx_train import checkpoint

    torch.manual_seed(0)
    weights = {"layer.weight": torch.randn(64, 48) * torch.linspace(0.01, 3, 64)[:, None],
               "layer.bias": torch.randn(64), "steps": torch.tensor([3, 4])}
    run = tmp_path / "run"
    run.mkdir()
    save_file(weights, str(run / "final.safetensors"))
    checkpoint.collect_run(run, tmp_path / "bf16", dtype="bf16")
    checkpoint.collect_run(run, tmp_path / "int8", dtype="int8")
    size = {d: sum(f.stat().st_size for f in (tmp_path / d).glob("final-*")) for d in
            ("bf16", "int8")}
    assert size["int8"] < 0.7 * size["bf16"]  # a byte a weight and a scale a row
    back = checkpoint.load_final(tmp_path / "int8")
    assert set(back) == set(weights) and back["layer.weight"].dtype == torch.float32
    step = weights["layer.weight"].abs().amax(dim=1, keepdim=True) / 127  # each row its own
    assert ((back["layer.weight"] - weights["layer.weight"]).abs() <= step / 2 + 1e-6).all()
    assert torch.allclose(back["layer.bias"], weights["layer.bias"], rtol=1e-2)
    assert torch.equal(back["steps"], weights["steps"])


def test_collect_latest_takes_a_running_runs_newest_checkpoint(tmp_path):
    from subctx_train import checkpoint

    run = tmp_path / "run"
    model = torch.nn.Linear(3, 2)
    for step, value in ((10, 1.0), (20, 2.0)):
        with torch.no_grad():
            model.weight.fill_(value)
        save_checkpoint(run / "checkpoints" / f"step-{step:07d}", model, None, {"step": step})
    with pytest.raises(FileNotFoundError, match="--latest"):
        checkpoint.collect_run(run, tmp_path / "out")  # still training: no final weights
    checkpoint.collect_run(run, tmp_path / "out", latest=True)
    assert checkpoint.load_final(tmp_path / "out")["weight"].eq(2.0).all()
    said = json.loads((tmp_path / "out" / "final.json").read_text())
    assert said["weights"] == "step-0000020, collected while training went on"


def test_average_of_checkpoints(tmp_path):
    model = torch.nn.Linear(2, 2)
    folders = []
    for i, value in enumerate([1.0, 3.0]):
        with torch.no_grad():
            model.weight.fill_(value)
            model.bias.fill_(value)
        folders.append(save_checkpoint(tmp_path / f"c{i}", model, None, {"step": i}))
    averaged = average_states(folders)
    assert torch.allclose(averaged["weight"], torch.full((2, 2), 2.0))


def test_gpu_share_caps_this_process_on_the_device_it_runs_on(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction",
                        lambda share, index: calls.append((share, index)))
    monkeypatch.setattr(torch.backends.cuda, "enable_cudnn_sdp", lambda on: calls.append(on))
    monkeypatch.delenv("SUBCTX_GPU_SHARE", raising=False)
    share_gpu(torch.device("cuda"))  # not asked for: the whole GPU
    monkeypatch.setenv("SUBCTX_GPU_SHARE", "0.11")
    share_gpu(torch.device("cpu"))
    share_gpu(torch.device("cuda"))  # torchrun's plain "cuda" has no index: device 0
    share_gpu(torch.device("cuda", 1))
    assert calls == [(0.11, 0), False, (0.11, 1), False]


def test_train_state_counts_evaluations_for_early_stopping_and_round_trips():
    from subctx_train.train import TrainState

    state = TrainState(step=10)
    for dev_nll in (3.0, 2.5, 2.6, 2.5):  # better, better, worse, not better
        state.judge(dev_nll)
    assert (state.best_dev, state.bad_evals) == (2.5, 2)
    state.judge(None)  # no dev set: every evaluation counts as progress
    assert (state.best_dev, state.bad_evals) == (2.5, 0)
    assert TrainState.from_dict({**state.to_dict(), "torch_rng": [0]}) == state


def test_checkpoint_meta_is_the_train_state_with_config_model_and_rng(tmp_path):
    from subctx_train.checkpoint import read_meta
    from subctx_train.train import TrainState

    trainer = _trainer(tmp_path, "meta", max_steps=4, eval_every=2)
    trainer.train()
    meta = read_meta(trainer.checkpoints()[-1])
    assert TrainState.from_dict(meta) == trainer.state and trainer.state.step == 4
    assert meta["config"] == trainer.cfg.to_dict() and len(meta["torch_rng"]) > 0
    assert {"model", "optimizer"} <= set(meta)


def test_cpu_model_from_cpuinfo(tmp_path):
    from subctx_train.hardware import cpu_model

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\nflags\t: avx\n")
    assert cpu_model(info) == "Example CPU @ 2.0GHz"
    assert cpu_model(tmp_path / "missing") is None


def test_no_kernel_cache_keeps_a_users_setting(monkeypatch):
    from subctx_train.hardware import no_kernel_cache

    monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", raising=False)
    no_kernel_cache()
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == "0"
    monkeypatch.setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "256")
    no_kernel_cache()
    assert os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] == "256"


# -- the fast step (docs/recipe.md, stage 0) ------------------------------------------------
def _reference_collate(items):
    """The collation as it was, one row at a time: the vectorised one must equal it."""
    import numpy as np

    from subctx_train.tokenizer import PAD

    n, s = len(items), max(len(r.src) for r in items)
    t, c = max(len(r.tgt) for r in items) - 1, max(len(r.ctx) for r in items)
    src, pos = np.full((n, s), PAD), np.zeros((n, s), dtype=np.int64)
    tin, tout = np.full((n, t), PAD), np.full((n, t), PAD)
    w, cur = np.zeros((n, t), dtype=np.float32), np.zeros((n, t), dtype=bool)
    ctx, dist = np.full((n, c), PAD), np.zeros((n, c), dtype=np.int64)
    for i, r in enumerate(items):
        src[i, : len(r.src)], pos[i, : len(r.positions)] = r.src, r.positions
        tin[i, : len(r.tgt) - 1], tout[i, : len(r.tgt) - 1] = r.tgt[:-1], r.tgt[1:]
        w[i, : len(r.weights)] = r.weights
        cur[i, r.prefix_len: len(r.weights)] = True
        ctx[i, : len(r.ctx)], dist[i, : len(r.ctx_dist)] = r.ctx, r.ctx_dist
    return [torch.from_numpy(a) for a in (src, pos, tin, tout, w, cur, ctx, dist)]


@pytest.mark.parametrize("architecture", ["concat", "capsule"])
def test_collate_equals_the_row_by_row_collation(architecture):
    from subctx_train.examples import collate
    from subctx_train.throughput import synthetic_examples
    from subctx_train.train import make_renderer

    cfg = make_config("tiny", architecture=architecture)
    renderer = make_renderer(cfg, sep=4, ctx_bos=5)
    examples = synthetic_examples(60, 200, cfg.max_k, max_len=40)
    items = [renderer(ex, k % (cfg.max_k + 1)) for k, ex in enumerate(examples)]
    for batch_items in (items[:1], items[:17], items):
        batch = collate(batch_items)
        names = ["src", "positions", "tgt_in", "tgt_out", "weights", "current", "ctx",
                 "ctx_dist"]
        for name, want in zip(names, _reference_collate(batch_items), strict=True):
            got = getattr(batch, name)
            assert got.dtype == want.dtype and torch.equal(got, want), name
        assert torch.equal(batch.current_index, batch.current.flatten().nonzero().squeeze(-1))
        assert batch.target_tokens == int(batch.current.sum())
        real = sum(len(r.src) + len(r.tgt) - 1 + len(r.ctx) for r in batch_items)
        assert batch.real_tokens == real <= batch.positions_total


def test_loss_from_the_host_index_equals_the_mask_and_reads_nothing():
    from subctx_train.loss import loss_terms

    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(4, 9, 50, generator=gen)
    target = torch.randint(1, 50, (4, 9), generator=gen)
    current = torch.rand(4, 9, generator=gen) > 0.4
    weights = torch.where(current, 1.0, 0.01)
    index = current.flatten().nonzero().squeeze(-1)
    masked = discounted_loss(logits, target, weights, current, 0.1)
    host = loss_terms(logits, target, weights, current, 0.1, index)
    assert host.tokens == masked.tokens == int(current.sum())
    assert torch.equal(host.loss, masked.loss)  # bit for bit, not approximately
    assert float(host.nll_sum) == masked.nll_sum and int(host.correct) == masked.correct
    lprobs = torch.log_softmax(logits, -1)
    nll = -lprobs.gather(-1, target[..., None])[..., 0]
    assert float(host.nll_sum) == float(nll[current].sum())


class _HostReads(TorchDispatchMode):
    """Records the ops that make a CUDA device wait for the host to read it: a scalar read
    (`.item()`, `int()`, `float()`) or a boolean mask's nonzero."""

    SYNCS = {"_local_scalar_dense", "nonzero", "masked_select", "is_nonzero"}

    def __init__(self):
        super().__init__()
        self.reads: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in self.SYNCS:
            self.reads.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _tiny_step_parts(**overrides):
    from subctx_train.throughput import synthetic_examples
    from subctx_train.train import (
        BatchLoss,
        autocast_for,
        build_model,
        make_optimizer,
        make_renderer,
        model_config,
        wrap_for_training,
    )

    cfg = make_config("tiny", **{"dropout": 0.0, "precision": "fp32", **overrides})
    renderer = make_renderer(cfg, sep=4, ctx_bos=5)
    examples = synthetic_examples(40, cfg.vocab_size, cfg.max_k, max_len=30)
    batches = [collate([renderer(ex, 1) for ex in examples[i:j]])
               for i, j in ((0, 10), (10, 17), (17, 30))]  # three shapes
    torch.manual_seed(0)
    model = build_model(cfg, model_config(cfg, cfg.vocab_size))
    net = wrap_for_training(BatchLoss(model, cfg.label_smoothing,
                                      autocast_for(torch.device("cpu"), False)),
                            cfg, torch.device("cpu"))
    return cfg, model, make_optimizer(cfg, model), net, batches


def test_a_step_reads_nothing_from_the_device_until_the_window_is_recorded():
    """With the fused optimizer (the GPU presets'), `update` and `Window.add` make no host
    read: the GPU runs ahead until `record` (or a log line every `log_every` steps) reads.
    (Adam's foreach and loop implementations read their step counts, which live on the
    host: no device wait.)"""
    from subctx_train.train import Window, update

    cfg, model, optimizer, net, batches = _tiny_step_parts(adam_impl="fused")
    window = Window()
    with _HostReads() as watch:
        for step, batch in enumerate(batches):
            window.add(update(net, model, optimizer, cfg, batch, step), batch)
    assert watch.reads == []
    with _HostReads() as control:  # what the trainer did every step: the detector sees it
        update(net, model, optimizer, cfg, batches[0], 3).loss.item()
    assert control.reads == ["_local_scalar_dense"]
    record = window.record()
    assert math.isfinite(record["loss"]) and 0 < record["padding"] < 1


def test_adam_implementations_make_the_same_update():
    """One update is the same up to float rounding (3e-8 here). Later ones drift further
    apart: Adam divides by the root of tiny second moments, which magnifies rounding."""
    from subctx_train.train import update

    params = {}
    for impl in ("loop", "foreach", "fused"):
        cfg, model, optimizer, net, batches = _tiny_step_parts(adam_impl=impl)
        group = optimizer.param_groups[0]
        assert (group["foreach"], group["fused"]) == {"loop": (False, None),
                                                      "foreach": (True, None),
                                                      "fused": (None, True)}[impl]
        before = [p.detach().clone() for p in model.parameters()]
        update(net, model, optimizer, cfg, batches[0], 0)
        params[impl] = [p.detach() - b for p, b in zip(model.parameters(), before, strict=True)]
    for impl in ("foreach", "fused"):
        for a, b in zip(params["loop"], params[impl], strict=True):
            assert torch.allclose(a, b, rtol=1e-5, atol=1e-7), impl
    assert max(a.abs().max() for a in params["loop"]) > 1e-3  # the update is not nothing


def test_resume_takes_this_runs_adam_implementation(tmp_path):
    first = _trainer(tmp_path, "run", max_steps=4, eval_every=4, adam_impl="loop")
    first.train()
    again = _trainer(tmp_path, "run", max_steps=8, eval_every=4, adam_impl="fused")
    assert again.state.step == 4
    assert again.optimizer.param_groups[0]["fused"] is True
    again.train()
    assert again.state.step == 8


def test_log_every_leaves_metrics_unchanged_and_records_padding(tmp_path):
    runs = {}
    for every in (1, 3):
        trainer = _trainer(tmp_path, f"every{every}", max_steps=10, eval_every=5,
                           log_every=every)
        trainer.train()
        runs[every] = [json.loads(line) for line in
                       (tmp_path / f"every{every}" / "metrics.jsonl").read_text().splitlines()]
    keys = ["step", "loss", "nll", "acc", "dev_nll", "padding"]
    assert [[r[k] for k in keys] for r in runs[1]] == [[r[k] for k in keys] for r in runs[3]]
    assert all(0 < r["padding"] < 1 for r in runs[1])


def test_sides_order_pads_less_on_the_real_length_mix():
    from subctx_train.examples import epoch_batches
    from subctx_train.throughput import synthetic_examples
    from subctx_train.train import make_renderer

    cfg = make_config("gpu-deep", architecture="concat", max_k=1)
    renderer = make_renderer(cfg, sep=4, ctx_bos=5)
    examples = synthetic_examples(20000, 16000, 1, seed=2)
    share = {}
    for order in ("size", "sides"):
        batches = epoch_batches(examples, 0, 1, 3000, cfg.k_probs, renderer, order)
        collated = [collate(b) for b in batches]
        share[order] = 1 - (sum(b.real_tokens for b in collated)
                            / sum(b.positions_total for b in collated))
        assert sum(len(b) for b in batches) == len(examples)
        assert all(max(r.size for r in b) * len(b) <= 3000 or len(b) == 1 for b in batches)
    assert share["sides"] < share["size"] * 0.9, share  # 8.4 % -> 7.3 % of the positions
    with pytest.raises(ValueError, match="batch order"):
        epoch_batches(examples, 0, 1, 3000, cfg.k_probs, renderer, "random")


def test_the_next_epoch_is_planned_while_this_one_is_handed_out():
    """batch_stream gives the same batches as planning each epoch at once, but renders the
    next epoch a slice per batch: no pause of a whole epoch's rendering between two batches."""
    ex = [Example([1] * n, [2] * (n % 7 + 1), [], []) for n in range(1, 200)]
    plain = partial(render, sep=4, cd_weight=0.01, shift=0)
    calls = []

    def counting(example, k, rng=None):
        calls.append(1)
        return plain(example, k, rng=rng)

    planned = [epoch_batches(ex, e, 1, 100, [1.0], plain) for e in range(2)]
    stream = batch_stream(ex, 0, 0, 1, 100, [1.0], counting)
    between = []
    for want in planned[0] + planned[1]:
        before = len(calls)
        _, _, batch = next(stream)
        between.append(len(calls) - before)
        assert torch.equal(batch.src, collate(want).src)
    slice_ = max(-(-len(ex) // len(batches)) for batches in planned)
    assert between[0] == len(ex)  # the first epoch is planned at once
    assert max(between[1:]) <= slice_ < len(ex) / 4  # then a slice per batch
    first = len(planned[0])
    assert sum(between[1:first + 1]) == len(ex)  # the second epoch, planned meanwhile


def test_compiled_step_equals_the_eager_step():
    """torch.compile of forward and loss together (dynamic shapes): the same loss and
    gradients up to float rounding, on two batches of different shapes without a
    recompilation. About 15 s on a CPU core (the compilation)."""
    torch._dynamo.reset()
    grads, losses = {}, {}
    for compiled in (False, True):
        cfg, model, optimizer, net, batches = _tiny_step_parts(compile=compiled)
        losses[compiled] = []
        for batch in batches[:2]:
            total, loss, nll_sum, correct = net(batch)
            total.backward()
            losses[compiled].append((loss.item(), nll_sum.item(), correct.item()))
        grads[compiled] = [p.grad.clone() for p in model.parameters()]
    for (a, b, c), (x, y, z) in zip(losses[False], losses[True], strict=True):
        assert a == pytest.approx(x, rel=1e-5) and b == pytest.approx(y, rel=1e-5) and c == z
    for a, b in zip(grads[False], grads[True], strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)
    assert batches[0].src.shape != batches[1].src.shape
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] <= 2  # no recompilation


# -- control tags (subctx_train.labels, subctx.controls) ---------------------------------------
def _labelled_docs(synthetic: bool = False) -> list[Document]:
    """The hand-labelled targets of tests/data/control_labels.tsv, 20 to an untimed document."""
    from tests.test_labels import read_cases

    rows = read_cases()
    return [Document(f"labelled/{n}", [Segment(r["english"], r["russian"])
                                       for r in rows[n:n + 20]], synthetic=synthetic)
            for n in range(0, len(rows), 20)]


def _control_tokenizer(tmp_path, docs):
    import sentencepiece as spm

    from subctx_train.tokenizer import train_tokenizer

    sentences = [t for d in docs for s in d.segments for t in (s.src, s.tgt)]
    path = train_tokenizer(sentences, tmp_path / "spm.model", vocab_size=600)
    return spm.SentencePieceProcessor(model_file=str(path))


def test_labelled_sources_start_with_their_tags_at_about_the_share(tmp_path):
    from subctx.contract import MAX_SENTENCE_PIECES
    from subctx.controls import FORMALITY, SPEAKER_GENDER
    from subctx_train.examples import tokenize_documents
    from subctx_train.labels import labels, tag_ids

    docs = _labelled_docs()
    sp = _control_tokenizer(tmp_path, docs)
    ids = tag_ids(sp)
    plain = tokenize_documents(docs, sp, max_k=1)
    assert plain == tokenize_documents(docs, sp, max_k=1, control_share=0.0, seed=7)
    segments = [s for d in docs for s in d.segments]
    assert [ex.src for ex in plain] == [sp.encode(s.src)[:MAX_SENTENCE_PIECES]
                                        for s in segments]  # as before control tags
    tagged = tokenize_documents(docs, sp, max_k=1, control_share=0.5, seed=7)
    shown = {FORMALITY: [0, 0], SPEAKER_GENDER: [0, 0]}  # kind: [tagged, labelled]
    for ex, was, seg in zip(tagged, plain, segments, strict=True):
        found = labels(seg.tgt, seg.src)
        n = next(k for k, t in enumerate([*ex.src, -1]) if t not in ids.values())
        tags = ex.src[:n]  # then the sentence (cut at the same length: the tags count in it)
        assert ex.src[n:] == was.src[:len(ex.src) - n] and ex.tgt == was.tgt
        assert ex.src_ctx == was.src_ctx  # context sources carry no tag
        assert all(t in {ids[v] for v in found.values()} for t in tags)
        for kind, value in found.items():
            shown[kind][0] += ids[value] in tags
            shown[kind][1] += 1
    for kind, (n, of) in shown.items():
        assert of >= 50 and 0.4 <= n / of <= 0.6, (kind, n, of)
    # a source drawn without tags is still the one list its neighbours' context shares
    shared = ({id(c) for e in runs for c in e.src_ctx} for runs in (tagged, plain))
    in_tagged, in_plain = next(shared), next(shared)
    untagged = [(ex, was) for ex, was in zip(tagged, plain, strict=True) if ex.src == was.src]
    assert [id(ex.src) in in_tagged for ex, _ in untagged] == \
        [id(was.src) in in_plain for _, was in untagged]
    assert any(id(ex.src) in in_tagged for ex, _ in untagged)
    again = tokenize_documents(docs, sp, max_k=1, control_share=0.5, seed=7)
    other = tokenize_documents(docs, sp, max_k=1, control_share=0.5, seed=8)
    assert [e.src for e in again] == [e.src for e in tagged]  # fixed by the seed
    assert [e.src for e in other] != [e.src for e in tagged]
    everything = tokenize_documents(docs, sp, max_k=1, control_share=1.0, seed=7)
    assert [sum(t in ids.values() for t in e.src[:2]) for e in everything] == \
        [len(labels(s.tgt, s.src)) for s in segments]
    # back-translated documents: <bt> first, then the tags
    bt = sp.piece_to_id("<bt>")
    synthetic = tokenize_documents(_labelled_docs(synthetic=True), sp, max_k=1,
                                   control_share=1.0, seed=7)
    for ex, e in zip(synthetic, everything, strict=True):
        assert ex.src == [bt, *e.src][:MAX_SENTENCE_PIECES]


def test_a_tiny_run_trains_with_control_tags_and_its_bundle_lists_them(tmp_path):
    from subctx.bundle import load_bundle
    from subctx_train.bundle_card import export_run
    from subctx_train.config import ConfigError

    trainer = _trainer(tmp_path, "tags", max_steps=10, eval_every=10, control_share=1.0)
    inf = trainer.sp.piece_to_id("<inf>")
    starts = {trainer.sp.decode([t for t in ex.src if t != inf]): ex.src[0] == inf
              for ex in trainer.train_examples}
    assert starts == {src: src == "I do not know what you mean." for src, _ in CORPUS}
    assert not any(inf in ex.src for ex in trainer.dev_examples)  # dev is measured untagged
    trainer.train()
    assert trainer.state.step == 10
    bundle = load_bundle(export_run(tmp_path / "tags", tmp_path / "bundle", backend="torch"))
    assert bundle.manifest.controls == ["formality", "speaker_gender"]
    card = (bundle.path / "README.md").read_text(encoding="utf-8")
    assert "**Control tags**: formality" in card and "100% of the training sources" in card
    plain = _trainer(tmp_path, "plain", max_steps=2, eval_every=2)
    assert not any(inf in ex.src for ex in plain.train_examples)
    plain.train()
    bundle = load_bundle(export_run(tmp_path / "plain", tmp_path / "plain-bundle",
                                    backend="torch"))
    assert bundle.manifest.controls == []
    assert "**Control tags**: none" in (bundle.path / "README.md").read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match="control_share is a probability"):
        make_config("tiny", control_share=1.5)
    with pytest.raises(ConfigError, match="control_share needs en-ru"):
        make_config("tiny", control_share=0.5, direction="ru-en")


def test_a_tokenizer_made_before_control_tags_trains_without_them(tmp_path):
    """Old runs (their spm.model has no tag pieces) go on as before; asking them for tags
    stops before any training with what to do instead."""
    from subctx_train.tokenizer import train_tokenizer

    old = train_tokenizer([s for pair in CORPUS for s in pair] * 20, tmp_path / "old.model",
                          vocab_size=120, control_tags=False)
    cfg = make_config("tiny", max_steps=2, eval_every=2)
    trainer = Trainer(cfg, tmp_path / "old", fixture_docs(), fixture_docs(1), device="cpu",
                      quiet=True, spm_model=old)
    trainer.train()
    assert trainer.state.step == 2
    with pytest.raises(ValueError, match="control_share needs a tokenizer with the control tag "
                                         "pieces"):
        Trainer(make_config("tiny", control_share=0.3), tmp_path / "old-tags", fixture_docs(),
                fixture_docs(1), device="cpu", quiet=True, spm_model=old)
