"""How much the previous translation helps a concatenation model score the current one.

Teacher-forced dev NLL of the current sentence, on the same examples, with no context, with
the gold previous translation as target-side prefix, and with the model's own previous
translation (the `mt` field that `subctx-train self-translate` writes). At inference the
prefix is always the model's own, so `own - gold` is what training on gold context alone
leaves unlearnt, and `none - own` is what context is worth where it is used.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import sentencepiece as spm
import torch

from subctx.contract import SpecialIds
from subctx.nn.transformer import Transformer
from subctx_train.config import TrainConfig
from subctx_train.data import Document
from subctx_train.examples import ContextNoise, Example, render, tokenize_documents
from subctx_train.train import current_sentence_loss, load_final_model

OWN = ContextNoise(own=1.0, noisy=0.0)  # always the own translation, never perturbed


@dataclass
class ContextNll:
    examples: int  # current sentences scored (each has a previous line in context)
    none: float
    gold: float
    own: float | None  # None: the documents carry no own translations

    def as_dict(self) -> dict:
        return asdict(self)


def _scored(examples: list[Example], own: bool) -> list[Example]:
    """Examples whose previous line is in context with a gold (and own) translation."""
    return [ex for ex in examples if ex.tgt_ctx and ex.tgt_ctx[-1] is not None
            and (not own or (ex.mt_ctx and ex.mt_ctx[-1] is not None))]


def _nll(model: Transformer, examples: list[Example], k: int, sep: int, shift: int,
         noise: ContextNoise | None, batch_size: int) -> float:
    rng = random.Random(0) if noise else None
    rendered = [render(ex, k, sep, 0.0, shift, noise=noise, rng=rng) for ex in examples]
    total, _, tokens = current_sentence_loss(model, rendered, torch.device("cpu"),
                                             batch_size=batch_size)
    return total / tokens if tokens else math.nan


def context_nll(model: Transformer, cfg: TrainConfig, sp: spm.SentencePieceProcessor,
                docs: list[Document], batch_size: int = 64) -> ContextNll:
    """Dev NLL of the current sentence with none / gold / own previous translation."""
    if cfg.architecture != "concat" or cfg.target_context != "prefix":
        raise ValueError("context-nll needs a concatenation model with target-side context "
                         f"(this run: {cfg.architecture}, target context {cfg.target_context})")
    model.eval()
    sep = SpecialIds.of(sp).sep
    examples = tokenize_documents(docs, sp, 1, cfg.max_gap)
    has_own = any(ex.mt_ctx and ex.mt_ctx[-1] is not None for ex in examples)
    chosen = _scored(examples, has_own)
    if not chosen:
        raise ValueError("no current sentence has its previous line in context")

    def nll(k: int, noise: ContextNoise | None = None) -> float:
        return _nll(model, chosen, k, sep, cfg.segment_shift, noise, batch_size)

    return ContextNll(len(chosen), nll(0), nll(1), nll(1, OWN) if has_own else None)


def run_context_nll(run_dir: Path, docs: list[Document], threads: int = 0) -> ContextNll:
    """context_nll for a run folder's final (averaged) weights, on the CPU."""
    if threads:
        torch.set_num_threads(threads)
    model, cfg = load_final_model(run_dir)
    sp = spm.SentencePieceProcessor(model_file=str(Path(run_dir) / "spm.model"))
    return context_nll(model, cfg, sp, docs)
