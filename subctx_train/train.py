"""The training loop: token-budget batches, Adam with inverse-sqrt warmup, label smoothing,
gradient clipping, dev evaluation with early stopping, resumable chunked checkpoints, a
wall-clock budget, bf16 autocast, and DDP under torchrun.

A step waits for nothing on the device: the loss and metrics stay there and are read once per
`log_every` steps and per record, the token counts come from the host's batch, and the
optimizer can be one fused kernel (`adam_impl`); `compile` compiles forward and loss together
(subctx_train.throughput measures each of these)."""

from __future__ import annotations

import contextlib
import json
import math
import operator
import random
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from functools import partial, reduce
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch
import torch.distributed as dist
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from subctx.contract import SpecialIds
from subctx.layout import TARGET_SIDES
from subctx.nn import architecture
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.checkpoint import (
    NothingTrained,
    RunError,
    average_states,
    list_checkpoints,
    load_final,
    load_model_state,
    load_optimizer_state,
    read_meta,
    save_checkpoint,
    write_atomically,
)
from subctx_train.config import TrainConfig
from subctx_train.ct2_import import with_new_rows
from subctx_train.data import Document, filter_documents, reverse_documents
from subctx_train.distributed import any_rank, init_distributed
from subctx_train.examples import (
    Batch,
    ContextNoise,
    Rendered,
    Renderer,
    batch_stream,
    collate,
    render,
    render_separate,
    tokenize_documents,
)
from subctx_train.hardware import describe_hardware, resolve_device, share_gpu, use_bf16
from subctx_train.loss import LossTerms, discounted_loss, loss_terms
from subctx_train.plots import plot_metrics
from subctx_train.prefetch import Prefetcher
from subctx_train.runs import (
    chain_from,
    ensure_tokenizer,
    init_run_dir,
    initial_weights,
    run_record,
)
from subctx_train.tokenizer import BOS, EOS, PAD, UNK

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
                       side=TARGET_SIDES[cfg.target_context], limit=cfg.max_positions,
                       noise=ContextNoise(cfg.own_context, cfg.noisy_context))
    return partial(render_separate, ctx_bos=ctx_bos)


class BatchLoss(torch.nn.Module):
    """A model's forward (under `autocast`) and the loss of a batch, as one module: what DDP
    wraps and `compile` compiles whole. forward(batch) -> (loss to minimise, the loss without
    the model's auxiliary term, NLL sum, argmax hits), all on the device."""

    def __init__(self, model: Transformer, label_smoothing: float,
                 autocast=contextlib.nullcontext):
        super().__init__()
        self.model = model
        self.label_smoothing = label_smoothing
        self.autocast = autocast

    def forward(self, batch: Batch) -> tuple[torch.Tensor, ...]:
        with self.autocast():
            logits, aux_loss = self.model.forward_batch(batch)
        out = loss_terms(logits, batch.tgt_out, batch.weights, batch.current,
                         self.label_smoothing, batch.current_index)
        return out.loss + aux_loss, out.loss, out.nll_sum, out.correct


def autocast_for(device: torch.device, bf16: bool):
    """A factory of the autocast context a step runs its forward in (bf16, or off)."""
    return partial(torch.autocast, device.type, dtype=torch.bfloat16, enabled=bf16)


ADAM_IMPLS = {"auto": {"foreach": None, "fused": None},  # TrainConfig.adam_impl -> Adam's flags
              "loop": {"foreach": False, "fused": None},
              "foreach": {"foreach": True, "fused": None},
              "fused": {"foreach": None, "fused": True}}


def make_optimizer(cfg: TrainConfig, model: torch.nn.Module) -> torch.optim.Adam:
    """Adam (beta2 0.98, eps 1e-9; the learning rate is set every step) in the implementation
    `cfg.adam_impl` names: the same update up to float rounding."""
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9,
                            **ADAM_IMPLS[cfg.adam_impl])


def wrap_for_training(net: torch.nn.Module, cfg: TrainConfig, device: torch.device,
                      distributed: bool = False) -> torch.nn.Module:
    """The module a step runs: compiled if asked (shapes dynamic: batches differ in rows and
    lengths), under DDP when launched by torchrun."""
    if cfg.compile:
        net = torch.compile(net, dynamic=True)
    if distributed:
        net = torch.nn.parallel.DistributedDataParallel(
            net, device_ids=[device.index] if device.type == "cuda" else None)
    return net


def update(net: torch.nn.Module, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
           cfg: TrainConfig, batch: Batch, step: int) -> LossTerms:
    """One update of `model` through `net` (its BatchLoss, maybe compiled or under DDP) on a
    batch already on the device: the scheduled learning rate for update `step + 1`, forward
    and loss, backward, clipping and the optimizer step. Nothing is read back."""
    for group in optimizer.param_groups:
        group["lr"] = noam_lr(cfg, step + 1)
    total, loss, nll_sum, correct = net(batch)
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
    optimizer.step()
    return LossTerms(loss.detach(), nll_sum, correct, batch.target_tokens)


def noam_lr(cfg: TrainConfig, step: int) -> float:
    step = max(step, 1)
    return cfg.lr * cfg.d_model ** -0.5 * min(step ** -0.5, step * cfg.warmup ** -1.5)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


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
        out = discounted_loss(logits, batch.tgt_out, batch.weights, batch.current, 0.0,
                              batch.current_index)
        nll, correct, tokens = nll + out.nll_sum, correct + out.correct, tokens + out.tokens
    return nll, correct, tokens


@dataclass
class TrainState:
    """Where training stands: what a checkpoint saves besides weights, optimizer and RNG."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0  # batches of `epoch` taken so far
    best_dev: float = math.inf
    bad_evals: int = 0  # evaluations since the dev NLL last improved

    def judge(self, dev_nll: float | None) -> None:
        """Count one evaluation for early stopping (with no dev set, each one improves)."""
        if dev_nll is None or dev_nll < self.best_dev:
            self.best_dev = self.best_dev if dev_nll is None else dev_nll
            self.bad_evals = 0
        else:
            self.bad_evals += 1

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainState:
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def _sum(values: list) -> float | int:
    """Left-to-right plain addition (Python's sum() compensates floats since 3.12)."""
    return reduce(operator.add, values, 0)


@dataclass
class Window:
    """Training metrics since the last record: each step's loss, NLL sum and hits stay on the
    device until `record` reads them all at once (one host sync per record); the token counts
    are the host's. The sums are the same, in the same order, as adding each step's values
    on the host."""

    losses: list[torch.Tensor] = field(default_factory=list)
    nlls: list[torch.Tensor] = field(default_factory=list)
    hits: list[torch.Tensor] = field(default_factory=list)
    tokens: int = 0  # current-sentence target tokens
    real: int = 0  # positions that are not padding (src, tgt_in, ctx)
    positions: int = 0  # every position computed on, padding included
    steps: int = 0
    start: float = field(default_factory=time.monotonic)

    def add(self, out: LossTerms, batch: Batch) -> None:
        """Count one step (nothing is read from the device)."""
        self.losses.append(out.loss)
        self.nlls.append(out.nll_sum)
        self.hits.append(out.correct)
        self.tokens += out.tokens
        self.real += batch.real_tokens
        self.positions += batch.positions_total
        self.steps += 1

    def tokens_per_s(self) -> float:
        return self.tokens / max(time.monotonic() - self.start, 1e-9)

    def padding(self) -> float:
        """Padded positions / all positions the network computed on (src, tgt_in, ctx)."""
        return 1.0 - self.real / max(1, self.positions)

    def record(self) -> dict[str, float]:
        """Mean loss, NLL and accuracy per current-sentence token, the speed and the padding
        share (reads the steps' values: a host sync)."""
        steps, tokens = max(1, self.steps), max(1, self.tokens)
        loss, nll, correct = ([] if not values else torch.stack(values).tolist()
                              for values in (self.losses, self.nlls, self.hits))
        return {"loss": _sum(loss) / steps, "nll": _sum(nll) / tokens,
                "acc": _sum(correct) / tokens, "target_tokens_per_s": self.tokens_per_s(),
                "padding": self.padding()}


class StepLog:
    """Progress: a bar on a terminal, a line about every 100 steps in a log file; called only
    on the steps that read the loss (`log_every`)."""

    def __init__(self, quiet: bool, total: int, completed: int):
        self.quiet = quiet
        self.printed = completed
        self.progress = Progress(TextColumn("[bold]train[/bold] step {task.completed}"),
                                 BarColumn(), TextColumn("{task.fields[status]}"),
                                 TimeElapsedColumn(), console=console, disable=quiet)
        self.task = self.progress.add_task("train", total=total, completed=completed,
                                           status="")

    def __enter__(self) -> StepLog:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def step(self, step: int, loss: float, lr: float, window: Window) -> None:
        status = f"loss {loss:.3f} lr {lr:.2e}"
        self.progress.update(self.task, completed=step, status=status)
        if not console.is_terminal and not self.quiet and step // 100 > self.printed // 100:
            self.printed = step
            console.print(f"step {step}  {status}  {window.tokens_per_s():.0f} target tokens/s")


def _format(record: dict) -> str:
    keys = ["step", "epoch", "loss", "nll", "acc", "dev_nll", "dev_ppl", "dev_acc",
            "target_tokens_per_s", "elapsed_min"]
    return "  ".join(f"{k}={record[k]:.4g}" if isinstance(record[k], float) else f"{k}={record[k]}"
                     for k in keys if k in record)


def resumed_record(before: dict, now: dict, step: int) -> dict:
    """A resumed run's config.json: the new record, with the run's start (`init_from`) kept
    where this resume names none, and under `resumed` each resume that changed settings: its
    step and {field: [before, after]} (the training config's fields and the hardware)."""
    changed = {k: [v, now["train"].get(k)] for k, v in before.get("train", {}).items()
               if now["train"].get(k) != v}
    if before.get("hardware") != now["hardware"]:
        changed["hardware"] = [before.get("hardware"), now["hardware"]]
    record = {**now, "init_from": now["init_from"] or before.get("init_from"),
              "pretraining": now.get("pretraining") or before.get("pretraining") or []}
    resumes = list(before.get("resumed") or [])
    if changed:
        resumes.append({"at_step": step, "changed": changed})
    if resumes:
        record["resumed"] = resumes
    return record


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) \
        else str(value)


def changed_settings(changed: dict) -> str:
    """'FIELD before → after, ...' of a resume's changed settings, as the model card shows
    them (a new time budget is not a change of settings)."""
    return ", ".join(f"{k} {_shown(a)} → {_shown(b)}" for k, (a, b) in changed.items()
                     if k != "budget_minutes")


def warn(message: str) -> None:
    """One line on the console (stderr), never wrapped nor read as markup."""
    console.print(f"warning: {message}", markup=False, highlight=False, soft_wrap=True)


def shape_differences(before: dict, now: dict) -> str:
    """'d_model 32 → 64, ...': the shape fields (ModelShape, vocab_size) two model configs
    differ in, dropout aside ('' where none does)."""
    keys = [k for k in now if k not in ("dropout", "pad_id")]
    return ", ".join(f"{k} {before[k]} → {now[k]}" for k in keys
                     if k in before and before[k] != now[k])


def misfits(weights: dict[str, torch.Tensor], own: dict[str, torch.Tensor]) -> list[str]:
    """'NAME (A×B, the model's C×D)' for each tensor both have in different shapes."""
    def dims(t: torch.Tensor) -> str:
        return "×".join(map(str, t.shape)) or "scalar"

    return [f"{k} ({dims(v)}, the model's {dims(own[k])})" for k, v in weights.items()
            if k in own and own[k].shape != v.shape]


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
        self.init_from = init_from
        self.info = init_distributed()
        self.device = resolve_device(device)
        share_gpu(self.device)
        self.bf16 = use_bf16(cfg.precision, self.device)  # probes the CPU: once, not per step
        self.quiet = quiet or not self.info.main
        seed_everything(cfg.seed)
        train_docs, self.filter_counts = filter_documents(train_docs)
        if cfg.direction == "ru-en":
            train_docs, dev_docs = reverse_documents(train_docs), reverse_documents(dev_docs)
        self.sp = self._tokenizer(train_docs, init_from, spm_model)
        self.ids = SpecialIds.of(self.sp)
        self.train_examples = tokenize_documents(train_docs, self.sp, cfg.max_k, cfg.max_gap,
                                                 weights=cfg.corpus_weights,
                                                 control_share=cfg.control_share, seed=cfg.seed)
        self.dev_examples = tokenize_documents(dev_docs, self.sp, cfg.max_k, cfg.max_gap)[:1000]
        self.data = data_summary(train_docs, self.train_examples, sources or [])
        self.model_cfg = model_config(cfg, self.sp.get_piece_size())
        self.model = build_model(cfg, self.model_cfg).to(self.device)
        self.renderer = make_renderer(cfg, self.ids.sep, self.ids.ctx_bos)
        self.optimizer = make_optimizer(cfg, self.model)
        self.state = TrainState()
        if init_from is not None and not self.checkpoints():
            self._initialize(init_from)
        self._resume()
        self.net = self._wrap(BatchLoss(self.model, cfg.label_smoothing, self._autocast))
        self.window = Window()

    def _tokenizer(self, train_docs: list[Document], init_from: Path | None,
                   spm_model: Path | None) -> spm.SentencePieceProcessor:
        """The run's SentencePiece model (made by the main process), with the trainer's ids."""
        path = self.run_dir / "spm.model"
        if self.info.main:
            ensure_tokenizer(self.run_dir, train_docs, self.cfg, init_from, spm_model)
        if self.info.distributed:
            dist.barrier()
        sp = spm.SentencePieceProcessor(model_file=str(path))
        ids = SpecialIds.of(sp)
        if (ids.pad, ids.unk, ids.bos, ids.eos) != (PAD, UNK, BOS, EOS):
            raise ValueError(f"{path}: special ids differ from the trainer's "
                             f"({PAD}, {UNK}, {BOS}, {EOS}); train the tokenizer with subctx")
        return sp

    def _wrap(self, net: torch.nn.Module) -> torch.nn.Module:
        """The module a step runs: compiled if asked, under DDP when launched by torchrun."""
        net = wrap_for_training(net, self.cfg, self.device, self.info.distributed)
        if self.info.distributed and not self.quiet:
            console.print(f"DDP: {self.info.world} process(es), {dist.get_backend()}")
        return net

    # -- checkpoints -------------------------------------------------------------------------
    @property
    def checkpoint_dir(self) -> Path:
        return self.run_dir / "checkpoints"

    def checkpoints(self) -> list[Path]:
        return list_checkpoints(self.run_dir)

    def _initialize(self, init_from: Path) -> None:
        """Start from `init_from`'s weights: every tensor of the same name (after the model's
        `adapt_state`, e.g. the context encoder's layers seeded from a sentence-level
        encoder's) is copied; tensors only this model has (a context path) start fresh, as do
        the embedding rows of pieces appended to the vocabulary (control tags). A tensor both
        have in another shape is refused (RunError): a model of another shape, not a start."""
        weights, self.state.step = initial_weights(init_from)
        if hasattr(self.model, "adapt_state"):
            weights = self.model.adapt_state(weights)
        own = self.model.state_dict()
        weights = self._grown_vocabulary(weights, own)
        wrong = misfits(weights, own)
        if wrong:
            theirs = run_record(init_run_dir(init_from)).get("model") or {}
            shape = shape_differences(theirs, self.model_cfg.to_dict())
            raise RunError(f"--init-from {init_from}: a model of another shape "
                           f"({shape or 'tensors: ' + ', '.join(wrong[:2])}): it starts a run "
                           "of its own shape only (give the same shape, or no --init-from)")
        copied = {k: v for k, v in weights.items() if k in own}
        if not copied:
            raise RunError(f"--init-from {init_from}: no parameter fits this model")
        self.model.load_state_dict(copied, strict=False)
        if self.grown and not self.quiet:
            console.print(f"the vocabulary grew by {self.grown} pieces: their embedding rows "
                          "start fresh")
        if not self.quiet:
            fresh = sum(v.numel() for k, v in own.items() if k not in copied)
            console.print(f"initialised {len(copied)}/{len(own)} tensors from {init_from} "
                          f"(step {self.state.step}); {fresh / 1e6:.1f}M parameters start fresh")

    def _grown_vocabulary(self, weights: dict[str, torch.Tensor],
                          own: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """`weights` with the shared embedding grown to this model's vocabulary where the
        tokenizer has pieces appended after the init run's (its rows first, a fresh row
        for each new piece, as `unbundle --control-tags` adds them)."""
        self.grown = 0
        theirs, mine = weights.get("embed.weight"), own.get("embed.weight")
        if theirs is None or mine is None or theirs.dim() != 2 or \
                theirs.shape[1] != mine.shape[1] or theirs.shape[0] >= mine.shape[0]:
            return weights
        self.grown = mine.shape[0] - theirs.shape[0]
        return {**weights, "embed.weight": with_new_rows(theirs, self.grown, self.cfg.seed)}

    def _resume(self) -> None:
        found = self.checkpoints()
        if not found:
            return
        meta = read_meta(found[-1])
        state = load_model_state(found[-1])
        own = self.model.state_dict()
        if set(state) != set(own) or misfits(state, own):
            shape = shape_differences(meta.get("model") or {}, self.model_cfg.to_dict())
            before = (meta.get("config") or {}).get("architecture")
            arch = (f"architecture {before} → {self.cfg.architecture}"
                    if before and before != self.cfg.architecture else "")
            why = shape or arch or "other tensors"
            raise RunError(f"{self.run_dir}: its checkpoint {found[-1].name} is of another "
                           f"model ({why}): resume it with its own settings, or give a new "
                           "--run")
        self.model.load_state_dict(state)
        saved = load_optimizer_state(found[-1])
        for group in saved["param_groups"]:  # this run's implementation, whatever saved it
            group.update(ADAM_IMPLS[self.cfg.adam_impl])
        self.optimizer.load_state_dict(saved)
        self.state = TrainState.from_dict(meta)
        torch.set_rng_state(torch.tensor(meta["torch_rng"], dtype=torch.uint8))
        if not self.quiet:
            console.print(f"resumed from {found[-1]} (step {self.state.step})")

    def save(self) -> Path:
        """A checkpoint: weights, optimizer, the TrainState, the RNG and both configs."""
        meta = {**self.state.to_dict(), "torch_rng": torch.get_rng_state().tolist(),
                "config": self.cfg.to_dict(), "model": self.model_cfg.to_dict()}
        path = save_checkpoint(self.checkpoint_dir / f"step-{self.state.step:07d}", self.model,
                               self.optimizer, meta)
        for old in self.checkpoints()[: -self.cfg.keep_last]:
            shutil.rmtree(old, ignore_errors=True)
        return path

    def _write_run_config(self) -> None:
        """config.json, the run's record for its model card: the resolved config, the model's,
        where it started from, the data and the machine. Written when training starts, not by
        every Trainer: `finalize` builds one without the data, maybe on another machine."""
        record = {"train": self.cfg.to_dict(), "model": self.model_cfg.to_dict(),
                  "init_from": str(self.init_from) if self.init_from else None,
                  # the runs it began from, as they are now (the folders may not travel)
                  "pretraining": chain_from(self.init_from) if self.init_from else [],
                  "data": self.data, "hardware": describe_hardware(self.device, self.info.world)}
        path = self.run_dir / "config.json"
        if self.state.step and path.exists():  # resumed: keep where the run began, and say
            # which settings changed from here on
            record = resumed_record(json.loads(path.read_text()), record, self.state.step)
            last = (record.get("resumed") or [{}])[-1]
            changed = changed_settings(last.get("changed", {})) \
                if last.get("at_step") == self.state.step else ""
            if changed:
                warn(f"{self.run_dir} resumes at step {self.state.step} with other settings "
                     f"than it had: {changed} (config.json records it)")
        write_atomically(path, lambda tmp: tmp.write_text(
            json.dumps(record, indent=1, ensure_ascii=False)))

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

    @property
    def _autocast(self):
        return autocast_for(self.device, self.bf16)

    # -- training ----------------------------------------------------------------------------
    def train(self) -> Path:
        """Train until max_steps, the budget or early stopping; return the final weights."""
        cfg, state = self.cfg, self.state
        self.started = time.monotonic()
        deadline = self.started + cfg.budget_minutes * 60 if cfg.budget_minutes else math.inf
        if self.info.main:
            self._write_run_config()
        self.model.train()
        self.window, reason = Window(), "max_steps"
        with StepLog(self.quiet, cfg.max_steps, state.step) as log, \
                Prefetcher(self._batches(), depth=8) as batches:
            for state.epoch, state.batch_in_epoch, batch in batches:
                if state.step >= cfg.max_steps:
                    break
                out = self._step(batch)
                self.window.add(out, batch)
                evaluate = state.step % cfg.eval_every == 0 or state.step >= cfg.max_steps
                logged = evaluate or state.step % cfg.log_every == 0
                if logged:  # reads this step's loss: the device catches up (a host sync)
                    log.step(state.step, out.loss.item(), noam_lr(cfg, state.step),
                             self.window)
                patience_over = False
                if evaluate:
                    self._evaluate_and_save()
                    patience_over = state.bad_evals >= cfg.patience
                # under DDP the ranks agree on stopping (a sync): only on logged steps
                if (logged or not self.info.distributed) and \
                        (reason := self._stop_reason(deadline, patience_over)):
                    break
        return self._finish(reason)

    def _batches(self) -> Iterator[tuple[int, int, Batch]]:
        """This rank's batches from where the state stands, epoch after epoch."""
        cfg = self.cfg
        return batch_stream(self.train_examples, self.state.epoch, self.state.batch_in_epoch,
                            cfg.seed, cfg.max_tokens, cfg.k_probs, self.renderer,
                            self.info.rank, self.info.world, pin=self.device.type == "cuda",
                            order=cfg.batch_order)

    def _step(self, batch: Batch) -> LossTerms:
        """One update (see `update`): the batch to the device (from pinned memory, without
        blocking), forward under autocast, the loss, backward, clipping, the optimizer."""
        out = update(self.net, self.model, self.optimizer, self.cfg, batch.to(self.device),
                     self.state.step)
        self.state.step += 1
        return out

    def _evaluate_and_save(self) -> None:
        """Record the window and the dev scores, count the evaluation for early stopping,
        save a checkpoint, and start a new window."""
        record = {**self._record(), **self.evaluate()}
        self.state.judge(record.get("dev_nll"))
        if self.info.main:
            self._write(record)
            if not self.quiet:
                console.print(_format(record))
        self.window = Window()

    def _stop_reason(self, deadline: float, patience_over: bool) -> str | None:
        """Why training stops after this step (the same on every rank), or None."""
        if self.state.step >= self.cfg.max_steps:
            return "max_steps"
        over = time.monotonic() > deadline
        if any_rank(over or patience_over, self.info, self.device):
            return "early stopping" if patience_over and not over else "budget"
        return None

    def _record(self) -> dict:
        return {"step": self.state.step, "epoch": self.state.epoch,
                "lr": noam_lr(self.cfg, self.state.step), **self.window.record(),
                "precision": "bf16" if self.bf16 else "fp32",
                "elapsed_min": (time.monotonic() - self.started) / 60}

    def _write(self, record: dict) -> None:
        """Append a record to metrics.jsonl and save a checkpoint (main rank)."""
        with open(self.run_dir / "metrics.jsonl", "a", encoding="utf-8") as metrics:
            metrics.write(json.dumps(record) + "\n")
        self.save()

    def _finish(self, reason: str) -> Path:
        """A last record of the steps since the last one, then the final weights; a run
        without any checkpoint (nothing trained: max_steps at or below the step it started
        from) raises NothingTrained, on the main rank, once the ranks are done."""
        if self.info.main and self.window.steps:
            self._write({**self._record(), **self.evaluate()})
        if not self.quiet:
            console.print(f"stopped after step {self.state.step}: {reason}")
        nothing: NothingTrained | None = None
        if self.info.main:
            try:
                self.finalize()
            except NothingTrained as err:
                nothing = err
            else:
                plot_metrics(self.run_dir / "metrics.jsonl", self.run_dir / "training.png")
        if self.info.distributed:
            dist.barrier()
            dist.destroy_process_group()
        if nothing is not None:
            raise nothing
        return self.run_dir / "final.safetensors"

    def finalize(self) -> dict:
        """Write final.safetensors: the last checkpoint or an average of the last 2..keep_last,
        whichever has the lowest dev NLL (averaging early checkpoints of a short run hurts);
        final.json says which. Both are written atomically. NothingTrained where the run has
        no checkpoint (no weights were trained: no final weights are written)."""
        from safetensors.torch import save_file

        found = self.checkpoints()
        if not found:
            raise NothingTrained(
                f"{self.run_dir}: nothing trained, no final weights written (no checkpoint; "
                f"step {self.state.step}, max_steps {self.cfg.max_steps})")
        if self.cfg.keep_last < 1:
            warn(f"keep_last {self.cfg.keep_last}: the final weights are the last checkpoint's")
        current = {k: v.clone() for k, v in self.model.state_dict().items()}
        results = []
        for n in range(1, max(1, min(self.cfg.keep_last, len(found))) + 1):
            state = average_states(found[-n:])
            self.model.load_state_dict(state)
            dev = self.evaluate().get("dev_nll", 0.0)
            results.append((dev, n, state))
        dev, n, state = min(results, key=lambda r: (r[0], r[1]))
        write_atomically(self.run_dir / "final.safetensors",
                         lambda tmp: save_file(state, str(tmp)))
        self.model.load_state_dict(current)
        choice = {"averaged_checkpoints": [p.name for p in found[-n:]], "dev_nll": dev,
                  "candidates": {f"last {m}": d for d, m, _ in results}}
        write_atomically(self.run_dir / "final.json",
                         lambda tmp: tmp.write_text(json.dumps(choice, indent=1)))
        return choice


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
