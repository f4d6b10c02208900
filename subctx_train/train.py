"""The training loop: token-budget batches, Adam with inverse-sqrt warmup, label smoothing,
gradient clipping, dev evaluation with early stopping, resumable chunked checkpoints, a
wall-clock budget, bf16 autocast on CUDA, and DDP under torchrun."""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch
import torch.distributed as dist
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from subctx.contract import SpecialIds
from subctx.nn import architecture
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.checkpoint import (
    average_states,
    list_checkpoints,
    load_final,
    load_model_state,
    load_optimizer_state,
    read_meta,
    save_checkpoint,
)
from subctx_train.config import TrainConfig
from subctx_train.data import Document, filter_documents, reverse_documents
from subctx_train.examples import (
    ContextNoise,
    Rendered,
    Renderer,
    batch_stream,
    collate,
    render,
    render_separate,
    tokenize_documents,
)
from subctx_train.loss import discounted_loss
from subctx_train.prefetch import Prefetcher
from subctx_train.tokenizer import BOS, EOS, PAD, UNK, tokenizer_sentences, train_tokenizer

console = Console(stderr=True)


def model_config(cfg: TrainConfig, vocab_size: int) -> ModelConfig:
    return ModelConfig(vocab_size=vocab_size, **cfg.shape())


def build_model(cfg: TrainConfig, model_cfg: ModelConfig) -> Transformer:
    """The network for the config's architecture (subctx.nn.ARCHITECTURES)."""
    return architecture(cfg.architecture).build(model_cfg)


def make_renderer(cfg: TrainConfig, sep: int, ctx_bos: int) -> Renderer:
    """How an example is laid out for this architecture (see subctx_train.examples)."""
    if not architecture(cfg.architecture).separate_context:
        return partial(render, sep=sep, cd_weight=cfg.cd_weight, shift=cfg.segment_shift,
                       target_context=cfg.target_context == "prefix",
                       noise=ContextNoise(cfg.own_context, cfg.noisy_context))
    return partial(render_separate, ctx_bos=ctx_bos)


class BatchForward(torch.nn.Module):
    """Wraps a model so that DDP sees one forward(batch) -> (logits, auxiliary loss)."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, batch):
        return self.model.forward_batch(batch)


def noam_lr(cfg: TrainConfig, step: int) -> float:
    step = max(step, 1)
    return cfg.lr * cfg.d_model ** -0.5 * min(step ** -0.5, step * cfg.warmup ** -1.5)


def use_bf16(precision: str, device: torch.device) -> bool:
    """Whether to train under bf16 autocast: always on CUDA, on CPU only where bf16 matrix
    products run natively (there they are several times faster than float32)."""
    if precision != "auto":
        return precision == "bf16"
    if device.type == "cuda":
        return True
    if device.type != "cpu":
        return False
    try:
        return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())
    except AttributeError:  # a torch without these probes: stay exact
        return False


def keep_freed_memory() -> None:
    """Tell glibc's malloc to reuse freed memory instead of handing it back to the OS.

    Each step allocates and frees buffers of ~100 MB (logits over the vocabulary); by default
    glibc maps them fresh every time, and on a VM the page faults cost up to half the step.
    Heap-only allocation with no trimming made CPU training 1.2-3x faster here."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is None or not hasattr(libc, "mallopt"):
            return
    except OSError:  # not glibc (macOS, musl): nothing to tune
        return
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    libc.mallopt(m_mmap_max, 0)
    libc.mallopt(m_trim_threshold, 2 ** 31 - 1)
    libc.mallopt(m_top_pad, 256 << 20)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class DistInfo:
    rank: int = 0
    world: int = 1
    distributed: bool = False  # launched by torchrun: DDP, even with one process

    @property
    def main(self) -> bool:
        return self.rank == 0


def init_distributed() -> DistInfo:
    """Join torchrun's process group (NCCL on CUDA, gloo on CPU); a plain launch is one
    process without DDP."""
    if "LOCAL_RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return DistInfo()
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank()
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    return DistInfo(rank, dist.get_world_size(), distributed=True)


def any_rank(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """True if `flag` is true on any rank (so all ranks take the same decision)."""
    if not info.distributed:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def ensure_tokenizer(run_dir: Path, docs: list[Document], cfg: TrainConfig,
                     init_from: Path | None = None, spm_model: Path | None = None) -> Path:
    """The run's SentencePiece model: the init run's when fine-tuning, a given one
    (`spm_model`), else trained here on the training documents."""
    path = run_dir / "spm.model"
    source = init_run_dir(init_from) / "spm.model" if init_from is not None else spm_model
    if source is not None:
        if not path.exists():
            shutil.copyfile(source, path)
        elif path.read_bytes() != source.read_bytes():
            raise ValueError(f"{run_dir} has a different tokenizer than {source}")
    if not path.exists():
        train_tokenizer(tokenizer_sentences(docs, seed=cfg.seed), path,
                        vocab_size=cfg.vocab_size)
    return path


def init_run_dir(init_from: Path) -> Path:
    """The run folder of `init_from` (a run folder or one of its step-* checkpoints)."""
    init_from = Path(init_from)
    return init_from.parent.parent if init_from.name.startswith("step-") else init_from


def _init_checkpoint(init_from: Path) -> Path | None:
    """The checkpoint folder whose step a fine-tuning run starts from (None for a collected
    run, which holds only final weights and metrics)."""
    if init_from.name.startswith("step-"):
        return init_from
    found = list_checkpoints(init_from)
    if found:
        return found[-1]
    if (init_from / "metrics.jsonl").exists() and load_final(init_from) is not None:
        return None
    raise FileNotFoundError(f"{init_from}: no checkpoints to start from")


def init_step(init_from: Path) -> int:
    """The step count a run started from `init_from` goes on from."""
    init_from = Path(init_from)
    checkpoint = _init_checkpoint(init_from)
    if checkpoint is None:
        lines = (init_from / "metrics.jsonl").read_text().splitlines()
        return json.loads([x for x in lines if x.strip()][-1])["step"]
    return read_meta(checkpoint)["step"]


def initial_weights(init_from: Path) -> tuple[dict[str, torch.Tensor], int]:
    """Weights and step count to start a fine-tuning run from: a checkpoint folder, or a run
    folder's final (averaged) weights with the step of its last checkpoint."""
    init_from = Path(init_from)
    checkpoint = _init_checkpoint(init_from)
    final = load_final(init_from) if checkpoint != init_from else None
    if final is None:
        return load_model_state(checkpoint), read_meta(checkpoint)["step"]
    return final, init_step(init_from)


def data_summary(docs: list[Document], examples: list, sources: list[str]) -> dict:
    """What a run trains on, for the model card: files, examples per corpus (real and
    synthetic), and the expected examples per epoch under corpus weighting."""
    by_corpus: dict[str, int] = {}
    synthetic = 0
    for doc in docs:
        n = sum(1 for s in doc.segments if s.tgt is not None)
        key = f"{doc.corpus} (synthetic)" if doc.synthetic else doc.corpus
        by_corpus[key] = by_corpus.get(key, 0) + n
        synthetic += n if doc.synthetic else 0
    return {"sources": sources, "pairs": sum(by_corpus.values()), "synthetic_pairs": synthetic,
            "pairs_by_corpus": dict(sorted(by_corpus.items(), key=lambda kv: -kv[1])),
            "examples_per_epoch": round(sum(ex.weight for ex in examples))}


def describe_hardware(device: torch.device, world: int = 1) -> str:
    """The machine a run trains on, as the model card states it."""
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        return f"{world} × {name}" if world > 1 else name
    cores = os.cpu_count() or 1
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = " (" + line.split(":", 1)[1].strip() + ")"
                break
    except OSError:
        pass
    return f"{cores} CPU core{'s' if cores > 1 else ''}{model}, no GPU"


def share_gpu(device: torch.device) -> None:
    """Runs side by side on one GPU (`gpu_recipe.sh rows`): `SUBCTX_GPU_SHARE` caps this
    process's share of the GPU memory, so that the caching allocator frees its cache instead of
    starving the others, and keeps attention off cuDNN, whose workspace then fails to allocate."""
    share = os.environ.get("SUBCTX_GPU_SHARE")
    if device.type != "cuda" or not share:
        return
    torch.cuda.set_per_process_memory_fraction(float(share), device.index or 0)
    torch.backends.cuda.enable_cudnn_sdp(False)


@torch.no_grad()
def current_sentence_loss(model: Transformer, rendered: list[Rendered], device: torch.device,
                          autocast=contextlib.nullcontext, batch_size: int = 64
                          ) -> tuple[float, int, int]:
    """Teacher-forced NLL summed over the current sentences' tokens, their argmax hits and
    their number (context tokens are not counted), in batches of similar length."""
    rendered = sorted(rendered, key=lambda r: len(r.src))
    nll = correct = tokens = 0
    for i in range(0, len(rendered), batch_size):
        batch = collate(rendered[i:i + batch_size]).to(device)
        with autocast():
            logits, _ = model.forward_batch(batch)
        out = discounted_loss(logits, batch.tgt_out, batch.weights, batch.current, 0.0)
        nll, correct, tokens = nll + out.nll_sum, correct + out.correct, tokens + out.tokens
    return nll, correct, tokens


class Trainer:
    """Trains one model in `run_dir`; calling `train()` again resumes where it stopped.
    `init_from` starts a new run from another run's weights (e.g. a context-aware model from the
    sentence-level baseline): parameters with the same name and shape are copied, the step count
    (and so the learning-rate schedule) goes on from there, and the optimizer starts fresh."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, train_docs: list[Document],
                 dev_docs: list[Document], device: str = "auto", quiet: bool = False,
                 init_from: Path | None = None, spm_model: Path | None = None,
                 sources: list[str] | None = None):
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.info = init_distributed()
        if device == "auto":
            device = f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        share_gpu(self.device)
        self.bf16 = use_bf16(cfg.precision, self.device)  # probes the CPU: once, not per step
        self.quiet = quiet or not self.info.main
        seed_everything(cfg.seed)
        train_docs, counts = filter_documents(train_docs)
        self.filter_counts = counts
        if cfg.direction == "ru-en":
            train_docs, dev_docs = reverse_documents(train_docs), reverse_documents(dev_docs)
        spm_path = (ensure_tokenizer(self.run_dir, train_docs, cfg, init_from, spm_model)
                    if self.info.main else None)
        if self.info.distributed:
            dist.barrier()
        self.spm_path = spm_path or self.run_dir / "spm.model"
        self.sp = spm.SentencePieceProcessor(model_file=str(self.spm_path))
        self.ids = SpecialIds.of(self.sp)
        if (self.ids.pad, self.ids.unk, self.ids.bos, self.ids.eos) != (PAD, UNK, BOS, EOS):
            raise ValueError(f"{self.spm_path}: special ids differ from the trainer's "
                             f"({PAD}, {UNK}, {BOS}, {EOS}); train the tokenizer with subctx")
        self.sep = self.ids.sep
        self.train_examples = tokenize_documents(train_docs, self.sp, cfg.max_k, cfg.max_gap,
                                                 weights=cfg.corpus_weights)
        self.dev_examples = tokenize_documents(dev_docs, self.sp, cfg.max_k, cfg.max_gap)[:1000]
        self.model_cfg = model_config(cfg, self.sp.get_piece_size())
        self.model = build_model(cfg, self.model_cfg).to(self.device)
        self.renderer = make_renderer(cfg, self.sep, self.ids.ctx_bos)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.0, betas=(0.9, 0.98),
                                          eps=1e-9)
        self.step, self.epoch, self.batch_in_epoch = 0, 0, 0
        self.best_dev, self.bad_evals = math.inf, 0
        (self.run_dir / "config.json").write_text(json.dumps(
            {"train": cfg.to_dict(), "model": self.model_cfg.to_dict(),
             "init_from": str(init_from) if init_from else None,
             "data": data_summary(train_docs, self.train_examples, sources or []),
             "hardware": describe_hardware(self.device, self.info.world)}, indent=1,
            ensure_ascii=False))
        if init_from is not None and not self.checkpoints():
            self._initialize(init_from)
        self._resume()
        self.net = BatchForward(self.model)
        if cfg.compile:
            self.net = torch.compile(self.net, dynamic=True)
        if self.info.distributed:
            self.net = torch.nn.parallel.DistributedDataParallel(
                self.net, device_ids=[self.device.index] if self.device.type == "cuda" else None)
            if not self.quiet:
                console.print(f"DDP: {self.info.world} process(es), {dist.get_backend()}")

    # -- checkpoints -------------------------------------------------------------------------
    @property
    def checkpoint_dir(self) -> Path:
        return self.run_dir / "checkpoints"

    def checkpoints(self) -> list[Path]:
        return list_checkpoints(self.run_dir)

    def _initialize(self, init_from: Path) -> None:
        state, self.step = initial_weights(init_from)
        if hasattr(self.model, "adapt_state"):
            state = self.model.adapt_state(state)
        own = self.model.state_dict()
        copied = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
        if not copied:
            raise ValueError(f"{init_from}: no parameter fits this model")
        self.model.load_state_dict(copied, strict=False)
        if not self.quiet:
            fresh = sum(v.numel() for k, v in own.items() if k not in copied)
            console.print(f"initialised {len(copied)}/{len(own)} tensors from {init_from} "
                          f"(step {self.step}); {fresh / 1e6:.1f}M parameters start fresh")

    def _resume(self) -> None:
        found = self.checkpoints()
        if not found:
            return
        last = found[-1]
        meta = read_meta(last)
        self.model.load_state_dict(load_model_state(last))
        self.optimizer.load_state_dict(load_optimizer_state(last))
        self.step, self.epoch = meta["step"], meta["epoch"]
        self.batch_in_epoch = meta["batch_in_epoch"]
        self.best_dev, self.bad_evals = meta["best_dev"], meta["bad_evals"]
        rng = torch.tensor(meta["torch_rng"], dtype=torch.uint8)
        torch.set_rng_state(rng)
        if not self.quiet:
            console.print(f"resumed from {last} (step {self.step})")

    def save(self) -> Path:
        meta = {"step": self.step, "epoch": self.epoch, "batch_in_epoch": self.batch_in_epoch,
                "best_dev": self.best_dev, "bad_evals": self.bad_evals,
                "torch_rng": torch.get_rng_state().tolist(),
                "config": self.cfg.to_dict(), "model": self.model_cfg.to_dict()}
        path = save_checkpoint(self.checkpoint_dir / f"step-{self.step:07d}", self.model,
                               self.optimizer, meta)
        for old in self.checkpoints()[: -self.cfg.keep_last]:
            shutil.rmtree(old, ignore_errors=True)
        return path

    # -- evaluation --------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Dev NLL and accuracy of the current sentence, context K = min(1, max_k)."""
        if not self.dev_examples:
            return {}
        self.model.eval()
        k = min(1, self.cfg.max_k)
        nll, correct, tokens = current_sentence_loss(
            self.model, [self.renderer(ex, k) for ex in self.dev_examples], self.device,
            self._autocast)
        self.model.train()
        return {"dev_nll": nll / tokens, "dev_ppl": math.exp(nll / tokens),
                "dev_acc": correct / tokens}

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16,
                              enabled=self.bf16)

    # -- training ----------------------------------------------------------------------------
    def train(self) -> Path:
        """Train until max_steps, the budget, or early stopping; return the final weights."""
        cfg = self.cfg
        start = time.monotonic()
        deadline = start + cfg.budget_minutes * 60 if cfg.budget_minutes else math.inf
        metrics_path = self.run_dir / "metrics.jsonl"
        self.model.train()
        window = {"loss": 0.0, "nll": 0.0, "correct": 0, "tokens": 0, "steps": 0}
        window_start = time.monotonic()
        stop_reason = "max_steps"
        progress = Progress(TextColumn("[bold]train[/bold] step {task.completed}"), BarColumn(),
                            TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                            console=console, disable=self.quiet)
        with progress, open(metrics_path, "a", encoding="utf-8") as metrics:
            task = progress.add_task("train", total=cfg.max_steps, completed=self.step,
                                     status="")
            stream = batch_stream(self.train_examples, self.epoch, self.batch_in_epoch,
                                  cfg.seed, cfg.max_tokens, cfg.k_probs, self.renderer,
                                  self.info.rank, self.info.world,
                                  pin=self.device.type == "cuda")
            with Prefetcher(stream, depth=8) as batches:
                for self.epoch, self.batch_in_epoch, batch in batches:
                    if self.step >= cfg.max_steps:
                        break
                    batch = batch.to(self.device)
                    lr = noam_lr(cfg, self.step + 1)
                    for group in self.optimizer.param_groups:
                        group["lr"] = lr
                    with self._autocast():
                        logits, aux_loss = self.net(batch)
                    out = discounted_loss(logits, batch.tgt_out, batch.weights, batch.current,
                                          cfg.label_smoothing)
                    self.optimizer.zero_grad(set_to_none=True)
                    (out.loss + aux_loss).backward()
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm)
                    self.optimizer.step()
                    self.step += 1
                    loss_value = out.loss.item()  # one device sync per step
                    window["loss"] += loss_value
                    window["nll"] += out.nll_sum
                    window["correct"] += out.correct
                    window["tokens"] += out.tokens
                    window["steps"] += 1
                    status = f"loss {loss_value:.3f} lr {lr:.2e}"
                    progress.update(task, completed=self.step, status=status)
                    if not console.is_terminal and not self.quiet and self.step % 100 == 0:
                        # a log file gets no progress bar: a line every 100 steps instead
                        rate = window["tokens"] / max(time.monotonic() - window_start, 1e-9)
                        console.print(f"step {self.step}  {status}  {rate:.0f} target tokens/s")
                    if self.step % cfg.eval_every == 0 or self.step >= cfg.max_steps:
                        record = self._record(window, window_start, start, lr)
                        record.update(self.evaluate())
                        improved = record.get("dev_nll", -self.step) < self.best_dev
                        if improved:
                            self.best_dev = record.get("dev_nll", self.best_dev)
                            self.bad_evals = 0
                        else:
                            self.bad_evals += 1
                        if self.info.main:
                            metrics.write(json.dumps(record) + "\n")
                            metrics.flush()
                            self.save()
                            if not self.quiet:
                                console.print(_format(record))
                        window = {k: 0 for k in window}
                        window_start = time.monotonic()
                        if self.bad_evals >= cfg.patience:
                            stop_reason = "early stopping"
                    if self.step >= cfg.max_steps:
                        break
                    over = time.monotonic() > deadline
                    if any_rank(over or stop_reason == "early stopping", self.info, self.device):
                        stop_reason = "budget" if over else stop_reason
                        break
            if self.info.main and window["steps"]:
                record = self._record(window, window_start, start, noam_lr(cfg, self.step))
                record.update(self.evaluate())
                metrics.write(json.dumps(record) + "\n")
                self.save()
        if not self.quiet:
            console.print(f"stopped after step {self.step}: {stop_reason}")
        final = self.run_dir / "final.safetensors"
        if self.info.main:
            self.finalize()
            plot_metrics(metrics_path, self.run_dir / "training.png")
        if self.info.distributed:
            dist.barrier()
            dist.destroy_process_group()
        return final

    def finalize(self) -> dict:
        """Write final.safetensors: the last checkpoint or an average of the last 2..keep_last,
        whichever has the lowest dev NLL (averaging early checkpoints of a short run hurts)."""
        from safetensors.torch import save_file

        found = self.checkpoints()
        if not found:
            return {}
        current = {k: v.clone() for k, v in self.model.state_dict().items()}
        results = []
        for n in range(1, min(self.cfg.keep_last, len(found)) + 1):
            state = average_states(found[-n:])
            self.model.load_state_dict(state)
            dev = self.evaluate().get("dev_nll", 0.0)
            results.append((dev, n, state))
        dev, n, state = min(results, key=lambda r: (r[0], r[1]))
        save_file(state, str(self.run_dir / "final.safetensors"))
        self.model.load_state_dict(current)
        choice = {"averaged_checkpoints": [p.name for p in found[-n:]], "dev_nll": dev,
                  "candidates": {f"last {m}": d for d, m, _ in results}}
        (self.run_dir / "final.json").write_text(json.dumps(choice, indent=1))
        return choice

    def _record(self, window: dict, window_start: float, start: float, lr: float) -> dict:
        elapsed = time.monotonic() - window_start
        steps = max(1, window["steps"])
        return {"step": self.step, "epoch": self.epoch, "lr": lr,
                "loss": window["loss"] / steps,
                "nll": window["nll"] / max(1, window["tokens"]),
                "acc": window["correct"] / max(1, window["tokens"]),
                "target_tokens_per_s": window["tokens"] / max(elapsed, 1e-9),
                "precision": "bf16" if self.bf16 else "fp32",
                "elapsed_min": (time.monotonic() - start) / 60}


def _format(record: dict) -> str:
    keys = ["step", "epoch", "loss", "nll", "acc", "dev_nll", "dev_ppl", "dev_acc",
            "target_tokens_per_s", "elapsed_min"]
    return "  ".join(f"{k}={record[k]:.4g}" if isinstance(record[k], float) else f"{k}={record[k]}"
                     for k in keys if k in record)


def plot_metrics(metrics_path: Path, out_png: Path) -> Path | None:
    """Loss and accuracy curves (train vs dev) as a PNG."""
    if not metrics_path.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]
    if not records:
        return None
    steps = [r["step"] for r in records]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(steps, [r["nll"] for r in records], label="train NLL")
    if "dev_nll" in records[-1]:
        ax1.plot(steps, [r.get("dev_nll", float("nan")) for r in records], label="dev NLL")
    ax1.set_xlabel("step")
    ax1.set_ylabel("NLL per token (current sentence)")
    ax1.legend()
    ax2.plot(steps, [r["acc"] for r in records], label="train accuracy")
    if "dev_acc" in records[-1]:
        ax2.plot(steps, [r.get("dev_acc", float("nan")) for r in records], label="dev accuracy")
    ax2.set_xlabel("step")
    ax2.set_ylabel("token accuracy")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return out_png


def load_final_model(run_dir: Path) -> tuple[Transformer, TrainConfig]:
    """The averaged weights of a run (or its last checkpoint if training never finished)."""
    run_dir = Path(run_dir)
    data = json.loads((run_dir / "config.json").read_text())
    cfg = TrainConfig.from_dict(data["train"])
    model = build_model(cfg, ModelConfig(**data["model"]))
    state = load_final(run_dir)
    if state is None:
        found = list_checkpoints(run_dir)
        if not found:
            raise FileNotFoundError(f"{run_dir}: no trained weights")
        state = load_model_state(found[-1])
    model.load_state_dict(state)
    return model.eval(), cfg
