"""Training throughput (stage 0 of the model campaign): target tokens/s, model FLOPs
utilisation (MFU), peak memory and padding share of the trainer's own step under each setting.

Every row builds a fresh model and optimizer for a preset, makes N of the trainer's batches
(`batch_stream`, pinned on CUDA, as `Trainer.train`) and runs the trainer's `update` on each of
them after a warm-up over the same batches (which holds torch.compile's start and every batch
shape's first use: a long run pays those once, in its first minutes, while 30 new shapes
timed cold made the first row and `sides` look several times slower than they train), reading
the loss every `log_every` steps as the trainer does. The settings add one change at a time:

    baseline   the trainer as it was: Adam as torch chooses (foreach on CUDA), the loss read
               every step, batches sorted by their longer side, eager
    fused      + adam_impl fused
    no-sync    + log_every 100 (nothing is read from the GPU between log lines)
    sides      + batch_order sides (less padding)
    compile    + torch.compile of forward and loss (dynamic shapes)
    tokensN    the last setting with max_tokens N (--max-tokens N,N,...)

Model FLOPs of a batch (forward; training counts 3x: backward is twice the forward), from
the real (unpadded) lengths: src tokens s (context included; a separate context counts as
encoder tokens), target-input tokens t, per row, d = d_model, f = ff_dim, V = vocabulary,
Le / Ld = encoder / decoder layers:

    2 * [ Le(4d^2 + 2df) * S + Ld(6d^2 + 2df) * T + Ld * 2d^2 * S + dV * T ]
      + 4d * [ Le * sum(s^2) + Ld * sum(t^2 + t*s) ]

S = sum(s), T = sum(t): the matrix products of every linear layer (q, k, v, out; the decoder's
cross-attention keys and values are made from the source once per layer), the output
projection, and attention's scores and weighted sums as the kernels compute them (whole
squares, no causal halving). That is ~6 x parameters x tokens plus attention. MFU = training
FLOPs / time / the device's peak (bf16 dense: 989 TFLOP/s on an H100 or H200 SXM; measured
matrix products reach ~800 there).
"""

from __future__ import annotations

import gc
import json
import math
import random
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import torch

from subctx_train.config import TrainConfig, make_config
from subctx_train.examples import Batch, Example, batch_stream
from subctx_train.hardware import use_bf16
from subctx_train.tokenizer import PAD

# bf16 dense peak of the tensor cores, TFLOP/s, by a word of the device's name
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "GH200": 989.0, "A100": 312.0, "L40S": 362.0,
               "L4": 121.0, "A10G": 70.0, "RTX 4090": 165.0}

# Lengths of real examples: 150k examples of 20k shuffled training documents (all corpora of
# ../shared/data/en-ru/train) with a 16k SentencePiece: log(source pieces) has mean 2.90 and
# deviation 0.77 (median 17, 95th percentile 69), log(target / source) mean 0.01 and deviation
# 0.25 (uncorrelated), and 88 % of the examples have a previous segment.
LOG_SRC_MEAN, LOG_SRC_SD, LOG_RATIO_SD, DOC_SEGMENTS = 2.90, 0.77, 0.25, 8
MAX_PIECES = 256  # subctx.contract.MAX_SENTENCE_PIECES: the trainer cuts longer sentences


@dataclass(frozen=True)
class Setting:
    name: str
    overrides: dict[str, Any]  # TrainConfig fields on top of the preset's


def ladder(names: list[str] | None = None, max_tokens: list[int] | None = None
           ) -> list[Setting]:
    """The settings `names` (default all), each with every change of the ladder up to it;
    then the last of them with each of `max_tokens`."""
    steps = [("baseline", {"adam_impl": "auto", "log_every": 1, "batch_order": "size",
                           "compile": False}),
             ("fused", {"adam_impl": "fused"}),
             ("no-sync", {"log_every": 100}),
             ("sides", {"batch_order": "sides"}),
             ("compile", {"compile": True})]
    unknown = set(names or []) - {name for name, _ in steps}
    if unknown:
        raise ValueError(f"unknown setting {', '.join(sorted(unknown))} (settings: "
                         f"{', '.join(name for name, _ in steps)})")
    out: list[Setting] = []
    acc: dict[str, Any] = {}
    for name, change in steps:
        acc = {**acc, **change}
        if not names or name in names:
            out.append(Setting(name, acc))
    last = out[-1].overrides if out else acc
    out += [Setting(f"tokens{n}", {**last, "max_tokens": n}) for n in max_tokens or []]
    return out


SETTING_NAMES = tuple(s.name for s in ladder())


# -- data -------------------------------------------------------------------------------------
def synthetic_examples(n: int, vocab_size: int, max_k: int, seed: int = 0,
                       max_len: int = MAX_PIECES) -> list[Example]:
    """`n` examples with the length mix of the real data (see the constants above): documents
    of DOC_SEGMENTS segments of random pieces (at most `max_len` each), each example with up
    to `max_k` previous segments of its document as context, both sides, as
    tokenize_documents makes them."""
    rng = random.Random(seed)
    low = 7  # after the special pieces (pad, unk, <s>, </s>, <sep>, <ctx>, <bt>)

    def sentence(length: int) -> list[int]:
        return [rng.randrange(low, vocab_size) for _ in range(length)]

    def length(log_mean: float, sd: float) -> int:
        return max(1, min(max_len, round(math.exp(rng.gauss(log_mean, sd)))))

    examples: list[Example] = []
    while len(examples) < n:
        doc = []
        for _ in range(DOC_SEGMENTS):
            s = length(LOG_SRC_MEAN, LOG_SRC_SD)
            doc.append((sentence(s), sentence(length(math.log(s), LOG_RATIO_SD))))
        for i, (src, tgt) in enumerate(doc):
            ctx = doc[max(0, i - max_k):i]
            examples.append(Example(src, tgt, [c[0] for c in ctx], [c[1] for c in ctx]))
    return examples[:n]


def real_examples(data: list[Path], spm_model: Path, cfg: TrainConfig, limit: int
                  ) -> tuple[list[Example], int]:
    """Up to `limit` examples of real documents, tokenized as the trainer does; and the
    tokenizer's vocabulary size."""
    import sentencepiece as spm

    from subctx_train.data import filter_documents, read_documents
    from subctx_train.examples import tokenize_documents

    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    docs, _ = filter_documents(read_documents(data))
    random.Random(0).shuffle(docs)
    examples: list[Example] = []
    for start in range(0, len(docs), 500):
        examples += tokenize_documents(docs[start:start + 500], sp, cfg.max_k, cfg.max_gap)
        if len(examples) >= limit:
            break
    return examples[:limit], sp.get_piece_size()


# -- FLOPs ------------------------------------------------------------------------------------
def batch_flops(batch: Batch, cfg: TrainConfig, vocab_size: int) -> float:
    """Training FLOPs of a (host) batch by the formula of the module's docstring."""
    s = ((batch.src != PAD).sum(1) + (batch.ctx != PAD).sum(1)).double()
    t = (batch.tgt_in != PAD).sum(1).double()
    d, f, le, ld = cfg.d_model, cfg.ff_dim, cfg.enc_layers, cfg.dec_layers
    linear = (le * (4 * d * d + 2 * d * f) * s.sum() + ld * (6 * d * d + 2 * d * f) * t.sum()
              + ld * 2 * d * d * s.sum() + d * vocab_size * t.sum())
    attention = 4 * d * (le * (s * s).sum() + ld * (t * t + t * s).sum())
    return 3.0 * float(2 * linear + attention)


def peak_tflops(device: torch.device, given: float | None) -> float | None:
    """The peak to divide by: given, else by the GPU's name (bf16 dense), else None (CPU)."""
    if given:
        return given
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for word in sorted(PEAK_TFLOPS, key=len, reverse=True):
        if word in name:
            return PEAK_TFLOPS[word]
    return None


# -- one row ----------------------------------------------------------------------------------
@dataclass
class Row:
    preset: str
    setting: str
    max_tokens: int
    params_m: float
    steps: int = 0
    seconds: float = 0.0
    warmup_s: float = 0.0  # the warm-up steps, torch.compile's start included
    target_tokens_per_s: float = 0.0  # current-sentence target tokens, as metrics.jsonl
    tokens_per_s: float = 0.0  # every real position (src, tgt_in, ctx)
    steps_per_s: float = 0.0
    tflops: float = 0.0  # achieved training TFLOP/s by the formula
    mfu: float | None = None
    peak_memory_gib: float | None = None  # CUDA only
    padding: float = 0.0  # padded positions / all positions
    loss: float = 0.0  # mean loss of the timed steps (finite: the step trains)
    syncs_per_step: float | None = None  # host syncs CUDA reports per step (after timing)
    error: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)


def _batches(examples: list[Example], cfg: TrainConfig, device: torch.device, vocab_size: int,
             seed: int) -> Iterator[tuple[Batch, float]]:
    """The trainer's batches with their FLOPs, made on the host (in the prefetch thread)."""
    from subctx_train.train import make_renderer

    renderer = make_renderer(cfg, sep=4, ctx_bos=5)
    for _, _, batch in batch_stream(examples, 0, 0, seed, cfg.max_tokens, cfg.k_probs,
                                    renderer, pin=device.type == "cuda",
                                    order=cfg.batch_order):
        yield batch, batch_flops(batch, cfg, vocab_size)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(preset: str, setting: Setting, examples: list[Example], vocab_size: int,
            device: torch.device, steps: int, warmup: int, peak: float | None,
            overrides: dict[str, Any] | None = None, seed: int = 1234) -> Row:
    """One row: a fresh model of `preset` under `setting`, `steps` timed updates after a
    warm-up of max(`warmup`, `steps`) updates over the same batches."""
    from subctx_train.train import (
        BatchLoss,
        Window,
        autocast_for,
        build_model,
        make_optimizer,
        model_config,
        update,
        wrap_for_training,
    )

    cfg = make_config(preset, **{**(overrides or {}), **setting.overrides})
    if cfg.compile:  # a fresh start: each row's module would count towards the recompile limit
        torch._dynamo.reset()
    torch.manual_seed(seed)
    model = build_model(cfg, model_config(cfg, vocab_size)).to(device).train()
    row = Row(preset, setting.name, cfg.max_tokens,
              round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
              overrides=setting.overrides)
    optimizer = make_optimizer(cfg, model)
    net = wrap_for_training(BatchLoss(model, cfg.label_smoothing,
                                      autocast_for(device, use_bf16(cfg.precision, device))),
                            cfg, device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    # the timed batches, made first; the warm-up runs each of them at least once, so that the
    # first-use costs of every batch shape (kernel choice, allocator growth, compile's
    # dynamic-shape guards) land there, as they do in a long run's first minutes
    timed = list(islice(_batches(examples, cfg, device, vocab_size, seed), steps))
    first = max(warmup, len(timed))  # the warm-up's updates: the first timed step's number

    def step_on(batch: Batch, step: int):
        out = update(net, model, optimizer, cfg, batch.to(device), step)
        if (step + 1) % cfg.log_every == 0:
            out.loss.item()  # what the trainer's progress line reads
        return out

    start = time.monotonic()
    for step in range(first):
        step_on(timed[step % len(timed)][0], step)
    _sync(device)  # the timed steps start with nothing left on the device
    row.warmup_s = time.monotonic() - start
    start, window, flops = time.monotonic(), Window(), 0.0
    for step, (batch, batch_flops_) in enumerate(timed, first):
        window.add(step_on(batch, step), batch)
        flops += batch_flops_
    record = window.record()  # reads the window: waits for the last step
    _sync(device)
    row.seconds = time.monotonic() - start
    if device.type == "cuda":
        row.syncs_per_step = _syncs_per_step(
            lambda step: update(net, model, optimizer, cfg,
                                timed[step % len(timed)][0].to(device), step),
            cfg, first + len(timed))
    row.steps = window.steps
    row.target_tokens_per_s = window.tokens / row.seconds
    row.tokens_per_s = window.real / row.seconds
    row.steps_per_s = window.steps / row.seconds
    row.tflops = flops / row.seconds / 1e12
    row.mfu = row.tflops / peak if peak else None
    row.padding = window.padding()
    row.loss = record["loss"]
    if device.type == "cuda":
        row.peak_memory_gib = torch.cuda.max_memory_allocated(device) / 2**30
    return row


def _syncs_per_step(step_fn, cfg: TrainConfig, first: int, steps: int = 4) -> float:
    """Host syncs per update as CUDA's sync debug mode reports them (a warning each), over
    `steps` updates with the loss read every `log_every` as the trainer does."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for step in range(first, first + steps):
                out = step_fn(step)
                if (step + 1) % cfg.log_every == 0:
                    out.loss.item()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught) / steps


# -- attention kernels -----------------------------------------------------------------------
def _time_sdpa(q, k, v, kwargs: dict[str, Any], backend, device: torch.device,
               repeats: int = 20) -> float | str:
    """Forward + backward time (ms) of one SDPA kernel, or why it cannot run these inputs."""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    try:
        with sdpa_kernel([backend]):
            F.scaled_dot_product_attention(q, k, v, **kwargs).sum().backward()
            _sync(device)
            begin = time.monotonic()
            for _ in range(repeats):
                F.scaled_dot_product_attention(q, k, v, **kwargs).sum().backward()
            _sync(device)
        return round((time.monotonic() - begin) / repeats * 1e3, 3)
    except RuntimeError as err:
        return f"unavailable: {str(err).strip().splitlines()[0][:100]}"


def _kernels_run(fn) -> list[str]:
    """The GPU kernels `fn` launches that look like attention (by the profiler's names)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    words = ("fmha", "flash", "attention", "attn", "cudnn", "softmax")
    return sorted({e.key[:90] for e in prof.key_averages()
                   if any(w in e.key.lower() for w in words)})


def attention_kernels(cfg: TrainConfig, device: torch.device, rows: int = 256,
                      length: int = 48) -> dict[str, Any]:
    """Which scaled-dot-product-attention kernels run the model's attention in bf16: with a
    boolean key-padding mask (B, 1, 1, S), as the encoder and cross-attention pass it, and
    causal without a mask (what flash attention needs); forward + backward ms of each, and
    the kernels the default dispatch launches for the masked case."""
    if device.type != "cuda":
        return {"note": "CUDA only"}
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend

    heads, dim = cfg.n_heads, cfg.d_model // cfg.n_heads
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(rows, heads, length, dim, device=device, generator=gen)
               .to(torch.bfloat16).requires_grad_() for _ in range(3))
    lengths = torch.randint(length // 4, length + 1, (rows,), device=device, generator=gen)
    mask = (torch.arange(length, device=device)[None, :] < lengths[:, None])[:, None, None, :]
    out: dict[str, Any] = {"shape (B, H, L, D)": [rows, heads, length, dim]}
    for case, kwargs in (("key mask", {"attn_mask": mask}), ("causal", {"is_causal": True})):
        for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                        SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH):
            out[f"{case} / {backend.name.lower()} ms"] = _time_sdpa(q, k, v, kwargs, backend,
                                                                    device)
    out["default kernels (key mask)"] = _kernels_run(
        lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward())
    return out


# -- the bench ---------------------------------------------------------------------------------
@dataclass
class Report:
    device: str
    torch: str
    peak_tflops: float | None
    steps: int
    warmup: int
    data: str
    rows: list[Row] = field(default_factory=list)
    attention: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    formula: str = ("training FLOPs = 3 x (2 x [Le(4d^2+2df) S + Ld(6d^2+2df) T + Ld 2d^2 S + "
                    "dV T] + 4d [Le sum s^2 + Ld sum(t^2 + t s)]) over real lengths; MFU = "
                    "FLOPs / s / peak")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_throughput(presets: list[str], settings: list[Setting], device: torch.device,
                   steps: int, warmup: int, peak: float | None = None,
                   examples: list[Example] | None = None, vocab_size: int | None = None,
                   overrides: dict[str, Any] | None = None, budget_s: float | None = None,
                   json_path: Path | None = None, data_name: str = "synthetic",
                   n_examples: int = 20000, progress=None) -> Report:
    """Every (preset, setting) row; the report is written to `json_path` after each row, so
    that a run cut short still leaves its rows. Rows that would start after `budget_s`
    seconds are skipped (listed)."""
    from subctx_train.hardware import describe_hardware

    began = time.monotonic()
    peak = peak_tflops(device, peak)
    report = Report(describe_hardware(device), torch.__version__, peak, steps, warmup,
                    data_name)
    for preset in presets:
        cfg = make_config(preset, **(overrides or {}))
        vocab = vocab_size or cfg.vocab_size
        # sentences short enough that K of them with the current one fit the positions
        longest = min(MAX_PIECES, cfg.max_positions // (cfg.max_k + 1) - 2)
        data = examples if examples is not None else synthetic_examples(
            n_examples, vocab, cfg.max_k, seed=0, max_len=longest)
        if not report.attention:
            try:
                report.attention = attention_kernels(cfg, device)
            except Exception as err:  # a probe, not a row: the rows still run
                report.attention = {"error": str(err).splitlines()[0][:300]}
        for setting in settings:
            label = f"{preset} {setting.name}"
            if budget_s is not None and time.monotonic() - began > budget_s:
                report.skipped.append(label)
                continue
            try:
                row = measure(preset, setting, data, vocab, device, steps, warmup, peak,
                              overrides)
            except Exception as err:  # out of memory, a compile failure: the next row runs
                row = Row(preset, setting.name, 0, 0.0, error=str(err).splitlines()[0][:300],
                          overrides=setting.overrides)
            gc.collect()  # the row's model, optimizer and batches
            if device.type == "cuda":
                torch.cuda.empty_cache()
            report.rows.append(row)
            if progress is not None:
                progress(row)
            if json_path is not None:
                json_path.write_text(json.dumps(report.to_dict(), indent=1))
    return report


SPEED_FIELDS = tuple(ladder()[0].overrides)  # what a setting changes (max_tokens apart)
BIGGER_BATCH_STEPS = 0.8  # a larger batch is taken while it keeps this share of the updates


def fastest_settings(report: dict[str, Any], preset: str, run_minutes: float = 10.0
                     ) -> dict[str, Any]:
    """The speed fields of `preset`'s best row in a throughput report (its JSON) for a run of
    `run_minutes`: the most target tokens in the run, a setting's warm-up (torch.compile's
    start) counted as time without training. Then the largest max_tokens row of that setting
    that still makes BIGGER_BATCH_STEPS of its updates a second: where a step's cost is
    overhead, not arithmetic, a bigger batch is the same updates each seeing more tokens (at
    the same learning rate); where it is arithmetic, fewer updates, and the preset's batch
    stands. {} when no row of `preset` ran."""
    rows = [r for r in report.get("rows", []) if r["preset"] == preset and not r.get("error")]
    ladder_rows = [r for r in rows if not r["setting"].startswith("tokens")]
    if not ladder_rows:
        return {}
    budget = run_minutes * 60

    def tokens_in_run(row: dict[str, Any]) -> float:
        return row["target_tokens_per_s"] * max(0.0, budget - row.get("warmup_s", 0.0))

    def speed(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row["overrides"].items() if k in SPEED_FIELDS}

    best = max(ladder_rows, key=tokens_in_run)
    fields = speed(best)
    bigger = [r for r in rows if r["setting"].startswith("tokens") and speed(r) == fields
              and r["max_tokens"] > best["max_tokens"]
              and r["steps_per_s"] >= BIGGER_BATCH_STEPS * best["steps_per_s"]]
    if bigger:
        fields["max_tokens"] = max(r["max_tokens"] for r in bigger)
    return fields


def setting_flags(fields: dict[str, Any]) -> list[str]:
    """Config fields as `train` options (--adam-impl fused --compile true ...)."""
    flags = []
    for name, value in fields.items():
        flags += [f"--{name.replace('_', '-')}",
                  str(value).lower() if isinstance(value, bool) else str(value)]
    return flags


def table(report: Report) -> list[dict[str, Any]]:
    """The rows as the printed table shows them."""
    base: dict[str, float] = {}
    out = []
    for row in report.rows:
        if row.error:
            out.append({"preset": row.preset, "setting": row.setting, "error": row.error})
            continue
        base.setdefault(row.preset, row.target_tokens_per_s)
        out.append({
            "preset": row.preset, "setting": row.setting, "max_tokens": row.max_tokens,
            "params (M)": row.params_m,
            "target tok/s": round(row.target_tokens_per_s),
            "x baseline": round(row.target_tokens_per_s / base[row.preset], 2),
            "steps/s": round(row.steps_per_s, 2),
            "TFLOP/s": float(f"{row.tflops:.3g}"),
            "MFU": f"{row.mfu:.1%}" if row.mfu is not None else "n/a",
            "peak GiB": round(row.peak_memory_gib, 2) if row.peak_memory_gib is not None
            else "n/a",
            "padding": f"{row.padding:.1%}",
            "warm-up s": round(row.warmup_s, 1),
            "syncs/step": row.syncs_per_step if row.syncs_per_step is not None else "n/a",
            "loss": round(row.loss, 3)})
    return out


def markdown_table(report: Report) -> str:
    """The table as Markdown (what docs/recipe.md shows)."""
    rows = table(report)
    columns = list(dict.fromkeys(c for row in rows for c in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
