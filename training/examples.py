"""Training examples with context, and token-budget batches bucketed by length.

Context follows the app's rule (subctx.context): up to `max_k` preceding segments, stopping at
a time gap > max_gap on timed documents, in document order on untimed ones. Each epoch draws
every example's K from `k_probs` (so one model serves K = 0..max_k) and lays it out with
subctx.layout; target-side context tokens get loss weight `cd_weight` (context discounting).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sentencepiece as spm
import torch

from subctx.context import context_indices
from subctx.layout import decoder_prefix, encoder_tokens, shifted_positions
from training.data import Document

PAD, UNK, BOS, EOS = 0, 1, 2, 3


@dataclass
class Example:
    """Token ids of a current pair and of its available context (oldest first)."""

    src: list[int]
    tgt: list[int]
    src_ctx: list[list[int]]
    tgt_ctx: list[list[int] | None]


@dataclass
class Rendered:
    src: list[int]
    positions: list[int]
    tgt: list[int]  # <s> ... </s>
    weights: list[float]  # one per predicted token (len(tgt) - 1)
    ctx: list[int] = field(default_factory=list)  # separate context (multi-encoder models)
    ctx_dist: list[int] = field(default_factory=list)  # each context token's sentence distance

    @property
    def size(self) -> int:
        return max(len(self.src) + len(self.ctx), len(self.tgt))


def tokenize_documents(docs: list[Document], sp: spm.SentencePieceProcessor, max_k: int,
                       max_gap: float | None = 7.0, max_len: int = 200) -> list[Example]:
    """One example per segment that has a target; context by the app's rule."""
    examples: list[Example] = []
    for doc in docs:
        src_ids = sp.encode([s.src for s in doc.segments])
        tgt_ids = [sp.encode(s.tgt) if s.tgt is not None else None for s in doc.segments]
        gap = max_gap if doc.timed else None
        for i, target in enumerate(tgt_ids):
            if target is None:
                continue
            ctx = context_indices(doc.segments, i, max_k, gap)
            examples.append(Example(src_ids[i][:max_len], target[:max_len],
                                    [src_ids[c][:max_len] for c in ctx],
                                    [tgt_ids[c][:max_len] if tgt_ids[c] is not None else None
                                     for c in ctx]))
    return examples


def render(ex: Example, k: int, sep: int, cd_weight: float, shift: int,
           target_context: bool = True) -> Rendered:
    """Lay out an example with its last `k` context segments (fewer if not available);
    `target_context=False` gives the sKto1 layout (source-side context only)."""
    k = min(k, len(ex.src_ctx))
    src_ctx = ex.src_ctx[len(ex.src_ctx) - k:]
    tgt_ctx = ex.tgt_ctx[len(ex.tgt_ctx) - k:]
    src, segments = encoder_tokens(src_ctx, ex.src, sep, EOS)
    positions = shifted_positions(segments, shift) if shift else list(range(len(src)))
    # target-side context only when every context segment has a translation
    both_sides = target_context and k and all(t is not None for t in tgt_ctx)
    prefix = decoder_prefix(tgt_ctx, sep) if both_sides else []
    tgt = [BOS, *prefix, *ex.tgt, EOS]
    weights = [cd_weight] * len(prefix) + [1.0] * (len(ex.tgt) + 1)
    return Rendered(src, positions, tgt, weights)


def render_separate(ex: Example, k: int, ctx_bos: int) -> Rendered:
    """Layout for multi-encoder models: the current pair as a sentence-level example, and the
    last `k` source context sentences apart: <ctx> s_k </s> ... s_1 </s>, each token tagged with
    its sentence's distance (1 = the previous sentence; 0 for <ctx>)."""
    k = min(k, len(ex.src_ctx))
    ctx, dist = [ctx_bos], [0]
    for i, sentence in enumerate(ex.src_ctx[len(ex.src_ctx) - k:]):
        ctx += [*sentence, EOS]
        dist += [k - i] * (len(sentence) + 1)
    src = [*ex.src, EOS]
    return Rendered(src, list(range(len(src))), [BOS, *ex.tgt, EOS], [1.0] * (len(ex.tgt) + 1),
                    ctx, dist)


@dataclass
class Batch:
    src: torch.Tensor
    positions: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    weights: torch.Tensor
    ctx: torch.Tensor
    ctx_dist: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(*(t.to(device, non_blocking=True) for t in
                       (self.src, self.positions, self.tgt_in, self.tgt_out, self.weights,
                        self.ctx, self.ctx_dist)))

    @property
    def target_tokens(self) -> int:
        return int((self.weights == 1.0).sum())


def collate(items: list[Rendered]) -> Batch:
    n = len(items)
    s = max(len(r.src) for r in items)
    t = max(len(r.tgt) for r in items) - 1
    src = np.full((n, s), PAD, dtype=np.int64)
    pos = np.zeros((n, s), dtype=np.int64)
    tin = np.full((n, t), PAD, dtype=np.int64)
    tout = np.full((n, t), PAD, dtype=np.int64)
    w = np.zeros((n, t), dtype=np.float32)
    c = max(len(r.ctx) for r in items)
    ctx = np.full((n, c), PAD, dtype=np.int64)
    dist = np.zeros((n, c), dtype=np.int64)
    for i, r in enumerate(items):
        src[i, : len(r.src)] = r.src
        pos[i, : len(r.positions)] = r.positions
        tin[i, : len(r.tgt) - 1] = r.tgt[:-1]
        tout[i, : len(r.tgt) - 1] = r.tgt[1:]
        w[i, : len(r.weights)] = r.weights
        ctx[i, : len(r.ctx)] = r.ctx
        dist[i, : len(r.ctx_dist)] = r.ctx_dist
    return Batch(*(torch.from_numpy(a) for a in (src, pos, tin, tout, w, ctx, dist)))


Renderer = Callable[[Example, int], Rendered]


def epoch_batches(examples: list[Example], epoch: int, seed: int, max_tokens: int,
                  k_probs: list[float], renderer: Renderer) -> list[list[Rendered]]:
    """Deterministic (seed, epoch) -> list of batches, each within `max_tokens` padded tokens
    on either side; similar lengths are grouped, then batch order is shuffled."""
    rng = random.Random(seed * 1_000_003 + epoch)
    ks = rng.choices(range(len(k_probs)), weights=k_probs, k=len(examples))
    rendered = [renderer(ex, k) for ex, k in zip(examples, ks, strict=True)]
    order = sorted(range(len(rendered)), key=lambda i: (rendered[i].size, rng.random()))
    batches: list[list[Rendered]] = []
    current: list[Rendered] = []
    longest = 0
    for i in order:
        r = rendered[i]
        size = r.size
        if current and max(longest, size) * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(r)
        longest = max(longest, size)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches
