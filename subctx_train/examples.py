"""Training examples with context, and token-budget batches bucketed by length.

Context follows the app's rule (subctx.context): up to `max_k` preceding segments, stopping at
a time gap > max_gap on timed documents, in document order on untimed ones. Each epoch draws
every example's K from `k_probs` (so one model serves K = 0..max_k) and lays it out with
subctx.layout; target-side context tokens get loss weight `cd_weight` (context discounting).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, fields
from itertools import chain

import numpy as np
import sentencepiece as spm
import torch

from subctx.bundle import SpecialTokens
from subctx.context import context_indices
from subctx.contract import MAX_SENTENCE_PIECES
from subctx.layout import (
    TARGET_SIDES,
    TargetSide,
    fit_context,
    separate_context,
    shifted_positions,
)
from subctx_train.data import DataError, Document, unmatched_weights, warn, weight_of
from subctx_train.tokenizer import BOS, EOS, PAD  # the ids our tokenizers give them


@dataclass(slots=True)
class Example:
    """Token ids of a current pair and of its available context (oldest first)."""

    src: list[int]
    tgt: list[int]
    src_ctx: list[list[int]]
    tgt_ctx: list[list[int] | None]
    weight: float = 1.0  # expected copies per epoch (corpus weighting)
    mt_ctx: list[list[int] | None] = field(default_factory=list)  # own translations of ctx


@dataclass(slots=True)
class Rendered:
    src: list[int]
    positions: list[int]
    tgt: list[int]  # <s> ... </s>
    weights: list[float]  # one per predicted token (len(tgt) - 1)
    prefix_len: int = 0  # predicted tokens that are target-side context, not the current pair
    ctx: list[int] = field(default_factory=list)  # separate context (multi-encoder models)
    ctx_dist: list[int] = field(default_factory=list)  # each context token's sentence distance

    @property
    def size(self) -> int:
        return max(len(self.src) + len(self.ctx), len(self.tgt))


def tokenize_documents(docs: list[Document], sp: spm.SentencePieceProcessor, max_k: int,
                       max_gap: float | None = 7.0, max_len: int = MAX_SENTENCE_PIECES,
                       weights: dict[str, float] | None = None, control_share: float = 0.0,
                       seed: int = 0) -> list[Example]:
    """One example per segment that has a target; context by the app's rule. Sources of
    synthetic documents start with the back-translation tag (tagged back-translation). With
    `control_share` > 0, the current source of an example whose target is labelled (ты / вы,
    the speaker's gender: subctx_train.labels) starts, after any <bt>, with the tag of each
    label with that chance, a draw fixed by `seed` and the segment; context sources never do.
    Tagging here, once, keeps batches, epochs and resumption as they are: 0 changes nothing."""
    examples: list[Example] = []
    tag = sp.piece_to_id(SpecialTokens().bt_tag)
    if control_share > 0:
        from subctx_train import labels

        control_ids = labels.tag_ids(sp)
    kept = [(doc, w) for doc in docs if (w := weight_of(doc, weights or {})) > 0]
    if weights:
        unmatched = unmatched_weights(docs, weights)
        if unmatched:
            warn(unmatched)
        if docs and not kept:
            raise DataError(f"every document has weight 0 under the corpus weights "
                            f"({', '.join(f'{k}={v:g}' for k, v in weights.items())}): no "
                            "training example")
    encoded = _encode_all(sp, [t for doc, _ in kept for s in doc.segments
                               for t in (s.src, s.tgt, s.mt) if t])
    if control_share > 0:  # every target's labels, in the order of the loop below
        found = iter(labels.all_labels([(s.tgt, s.src) for doc, _ in kept
                                        for s in doc.segments if s.tgt is not None]))
    for doc, weight in kept:
        src_ids, tgt_ids, mt_ids = [], [], []
        for s in doc.segments:  # in the order _encode_all was given them
            src_ids.append(next(encoded) if s.src else [])
            tgt_ids.append(next(encoded) if s.tgt else [] if s.tgt is not None else None)
            mt_ids.append(_clip(next(encoded), max_len) if s.mt else None)
        if doc.synthetic:
            if tag == sp.unk_id():
                raise ValueError(f"{doc.doc_id} is synthetic but the tokenizer has no "
                                 f"{SpecialTokens().bt_tag} piece")
            src_ids = [[tag, *ids] for ids in src_ids]
        # clipped once: an example's context shares its neighbours' lists instead of copies
        src_ids = [_clip(ids, max_len) for ids in src_ids]
        tgt_ids = [_clip(ids, max_len) if ids is not None else None for ids in tgt_ids]
        gap = max_gap if doc.timed else None
        for i, target in enumerate(tgt_ids):
            if target is None:
                continue
            src = src_ids[i]
            if control_share > 0:
                tags = labels.control_prefix(next(found), control_ids, control_share, seed,
                                             doc.doc_id, i)
                if tags:  # untagged, the source stays the list the next examples' context share
                    src = [*src[:int(doc.synthetic)], *tags, *src[int(doc.synthetic):]][:max_len]
            ctx = context_indices(doc.segments, i, max_k, gap)
            examples.append(Example(src, target, [src_ids[c] for c in ctx],
                                    [tgt_ids[c] for c in ctx], weight, [mt_ids[c] for c in ctx]))
    return examples


def _clip(ids: list[int], max_len: int) -> list[int]:
    """The first `max_len` ids: the list itself when it is no longer (no copy)."""
    return ids if len(ids) <= max_len else ids[:max_len]


ENCODE_BATCH = 200_000  # texts a call: the ids of one batch at a time besides the examples


def _encode_all(sp: spm.SentencePieceProcessor, texts: list[str]) -> Iterator[list[int]]:
    """The ids of every text, in order, from batched calls on all cores (one call a text was
    most of the time a GPU run spent loading its data). Each id is the one int object of its
    value (a list per vocabulary), not a new one per token: 8 bytes a token, not 36."""
    threads = os.cpu_count() or 1
    interned = list(range(sp.get_piece_size())).__getitem__
    for start in range(0, len(texts), ENCODE_BATCH):
        for ids in sp.encode(texts[start:start + ENCODE_BATCH], num_threads=threads):
            yield list(map(interned, ids))


@dataclass(frozen=True)
class ContextNoise:
    """How target-side context is shown in training, so that it looks like inference, where
    the context is the model's own (imperfect, sometimes incomplete) earlier translation:
    `own` is the chance of taking the model's own translation (Example.mt_ctx) where there is
    one, `noisy` the chance of perturbing the context (cut short, or words dropped)."""

    own: float = 0.0
    noisy: float = 0.0


def perturb(ids: list[int], rng: random.Random) -> list[int]:
    """An imperfect translation: cut after 30-90 % of its tokens, or with 15 % of them gone."""
    if len(ids) < 2:
        return ids
    if rng.random() < 0.5:
        return ids[: max(1, round(len(ids) * rng.uniform(0.3, 0.9)))]
    kept = [t for t in ids if rng.random() >= 0.15]
    return kept or ids[:1]


def shown_target_context(ex: Example, k: int, noise: ContextNoise | None,
                   rng: random.Random | None) -> list[list[int] | None]:
    """The last `k` target-side context sentences as this example shows them."""
    gold = ex.tgt_ctx[len(ex.tgt_ctx) - k:]
    if rng is None or noise is None or k == 0:
        return gold
    own = ex.mt_ctx[len(ex.mt_ctx) - k:] if ex.mt_ctx else [None] * k
    out = []
    for g, m in zip(gold, own, strict=True):
        chosen = m if m is not None and rng.random() < noise.own else g
        if chosen is not None and rng.random() < noise.noisy:
            chosen = perturb(chosen, rng)
        out.append(chosen)
    return out


def render(ex: Example, k: int, sep: int, cd_weight: float, shift: int,
           side: TargetSide = TARGET_SIDES["prefix"], noise: ContextNoise | None = None,
           rng: random.Random | None = None, limit: int | None = None) -> Rendered:
    """Lay out an example with its last `k` context segments (fewer if not available), their
    translations where `side` puts them (subctx.layout; side 'none' is the sKto1 layout).
    With `rng` (training), a context translation may be the model's own or a perturbed one.
    With `limit` (the model's positions), context is dropped oldest first until both sides
    fit, as the app's input does (layout.fit_context)."""
    k = min(k, len(ex.src_ctx))
    tgt_ctx = shown_target_context(ex, k, noise, rng)
    # the decoding budget of fit_context: the current sentence and </s> after <s> and prefix
    src, segments, prefix = fit_context(ex.src_ctx, tgt_ctx, ex.src, k, sep, EOS, shift,
                                        sys.maxsize if limit is None else limit,
                                        len(ex.tgt) + 1, side)
    tgt = [BOS, *prefix, *ex.tgt, EOS]
    weights = [cd_weight] * len(prefix) + [1.0] * (len(ex.tgt) + 1)
    return Rendered(src, shifted_positions(segments, shift), tgt, weights,
                    prefix_len=len(prefix))


def render_separate(ex: Example, k: int, ctx_bos: int, rng: random.Random | None = None
                    ) -> Rendered:
    """Layout for multi-encoder models: the current pair as a sentence-level example, and the
    last `k` source context sentences apart: <ctx> s_k </s> ... s_1 </s>, each token tagged with
    its sentence's distance (1 = the previous sentence; 0 for <ctx>)."""
    k = min(k, len(ex.src_ctx))
    ctx, dist = separate_context(ex.src_ctx[len(ex.src_ctx) - k:], ctx_bos, EOS)
    src = [*ex.src, EOS]
    return Rendered(src, list(range(len(src))), [BOS, *ex.tgt, EOS], [1.0] * (len(ex.tgt) + 1),
                    ctx=ctx, ctx_dist=dist)


@dataclass
class Batch:
    src: torch.Tensor
    positions: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    weights: torch.Tensor
    current: torch.Tensor  # bool: predicted tokens of the current sentence (not context, pad)
    ctx: torch.Tensor
    ctx_dist: torch.Tensor
    current_index: torch.Tensor  # flat positions of `current` in (B, T), found on the host
    real_tokens: int = 0  # positions of src, tgt_in and ctx that are not padding

    def _map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Batch:
        return Batch(**{f.name: fn(value) if isinstance(value, torch.Tensor) else value
                        for f in fields(self) for value in (getattr(self, f.name),)})

    def pin_memory(self) -> Batch:
        """Page-locked copies, so that `to(cuda)` copies without blocking."""
        return self._map(torch.Tensor.pin_memory)

    def to(self, device: torch.device | str) -> Batch:
        return self._map(lambda t: t.to(device, non_blocking=True))

    @property
    def target_tokens(self) -> int:
        """Current-sentence tokens (from the index's shape: no device sync)."""
        return self.current_index.numel()

    @property
    def positions_total(self) -> int:
        """Every position the network computes on: src, tgt_in and ctx, padding included."""
        return self.src.numel() + self.tgt_in.numel() + self.ctx.numel()


def _rows(rows: list[list], width: int, fill, dtype) -> tuple[np.ndarray, np.ndarray]:
    """Lists of unequal length as one (len(rows), width) array padded with `fill` (one
    vectorised copy instead of a slice assignment per row), and their lengths."""
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    out = np.full((len(rows), width), fill, dtype=dtype)
    flat = np.fromiter(chain.from_iterable(rows), dtype=dtype, count=int(lengths.sum()))
    out[np.arange(width) < lengths[:, None]] = flat
    return out, lengths


def collate(items: list[Rendered]) -> Batch:
    n = len(items)
    rows = np.arange(n)
    src, src_len = _rows([r.src for r in items], max(len(r.src) for r in items), PAD, np.int64)
    pos, _ = _rows([r.positions for r in items], src.shape[1], 0, np.int64)
    t = max(len(r.tgt) for r in items) - 1
    full, tgt_len = _rows([r.tgt for r in items], t + 1, PAD, np.int64)
    tout = full[:, 1:]  # what follows each input token (PAD past the end)
    tin = full[:, :-1].copy()
    fed = tgt_len - 1 < t  # rows whose </s> lies inside tin: it is predicted, never fed
    tin[rows[fed], tgt_len[fed] - 1] = PAD
    w, w_len = _rows([r.weights for r in items], t, 0.0, np.float32)
    prefix = np.fromiter((r.prefix_len for r in items), dtype=np.int64, count=n)
    columns = np.arange(t)
    cur = (columns >= prefix[:, None]) & (columns < w_len[:, None])
    ctx, ctx_len = _rows([r.ctx for r in items], max(len(r.ctx) for r in items), PAD, np.int64)
    dist, _ = _rows([r.ctx_dist for r in items], ctx.shape[1], 0, np.int64)
    real = int(src_len.sum() + (tgt_len - 1).sum() + ctx_len.sum())
    tensors = (torch.from_numpy(np.ascontiguousarray(a))
               for a in (src, pos, tin, tout, w, cur, ctx, dist, np.flatnonzero(cur)))
    return Batch(*tensors, real_tokens=real)


Renderer = Callable[..., Rendered]  # (example, k, rng=None) -> Rendered


def epoch_sample(examples: list[Example], rng: random.Random) -> list[Example]:
    """The examples of one epoch under corpus weighting (all of them once when unweighted)."""
    if all(ex.weight == 1.0 for ex in examples):
        return examples
    out = []
    for ex in examples:
        copies = int(ex.weight) + (rng.random() < ex.weight - int(ex.weight))
        out += [ex] * copies
    return out


BATCH_ORDERS = ("size", "sides")  # how epoch_batches sorts examples before cutting batches


def _sort_key(order: str) -> Callable[[Rendered], tuple[int, ...]]:
    """size: the longer side alone (examples of one size and different sides share a batch);
    sides: the longer side, then the encoder's length, then the decoder's, so that rows of
    one batch also agree on their shorter side (less padding; the same random tie-break)."""
    if order == "size":
        return lambda r: (r.size,)
    if order == "sides":
        return lambda r: (r.size, len(r.src) + len(r.ctx), len(r.tgt))
    raise ValueError(f"batch order is one of {', '.join(BATCH_ORDERS)}, not {order!r}")


def _plan(examples: list[Example], epoch: int, seed: int, max_tokens: int,
          k_probs: list[float], renderer: Renderer, order: str, chunk: int
          ) -> Generator[None, None, list[list[Rendered]]]:
    """epoch_batches' work in steps: yields after every `chunk` rendered examples, returns the
    batches (the same random draws in the same order however it is driven)."""
    key = _sort_key(order)
    rng = random.Random(seed * 1_000_003 + epoch)
    examples = epoch_sample(examples, rng)
    ks = rng.choices(range(len(k_probs)), weights=k_probs, k=len(examples))
    rendered: list[Rendered] = []
    for begin in range(0, len(examples), max(1, chunk)):
        end = begin + max(1, chunk)
        rendered += [renderer(ex, k, rng=rng)
                     for ex, k in zip(examples[begin:end], ks[begin:end], strict=True)]
        yield
    order_of = sorted(range(len(rendered)), key=lambda i: (*key(rendered[i]), rng.random()))
    batches: list[list[Rendered]] = []
    current: list[Rendered] = []
    longest = 0
    for i in order_of:
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


def _finish(plan: Generator[None, None, list[list[Rendered]]]) -> list[list[Rendered]]:
    """Drive a plan to its end."""
    while True:
        try:
            next(plan)
        except StopIteration as done:
            return done.value


def epoch_batches(examples: list[Example], epoch: int, seed: int, max_tokens: int,
                  k_probs: list[float], renderer: Renderer, order: str = "size"
                  ) -> list[list[Rendered]]:
    """Deterministic (seed, epoch) -> list of batches, each within `max_tokens` padded tokens
    on either side; similar lengths are grouped (`order`, BATCH_ORDERS), then batch order is
    shuffled. An example of weight w appears floor(w) times, and once more with probability
    w - floor(w)."""
    return _finish(_plan(examples, epoch, seed, max_tokens, k_probs, renderer, order,
                         len(examples)))


def batch_stream(examples: list[Example], epoch: int, start: int, seed: int, max_tokens: int,
                 k_probs: list[float], renderer: Renderer, rank: int = 0, world: int = 1,
                 pin: bool = False, order: str = "size") -> Iterator[tuple[int, int, Batch]]:
    """Collated batches from epoch `epoch`, batch `start` on, epoch after epoch, as
    (epoch, batches of that epoch taken so far, batch): what a checkpoint stores to resume.
    Each of `world` ranks gets an equal share of every epoch (DDP steps in lockstep).

    The next epoch is planned a slice at a time while this one's batches are handed out (its
    examples rendered over this epoch's batches), so that no epoch starts with a stall of
    rendering every example at once (seconds on a full corpus, while the GPU waits)."""
    batches = epoch_batches(examples, epoch, seed, max_tokens, k_probs, renderer, order)
    while True:
        usable = len(batches) - len(batches) % world
        mine = batches[:usable][rank::world]
        if not mine:
            raise ValueError("no training batch: too few examples for the number of ranks")
        chunk = -(-len(examples) // max(1, len(mine) - start))
        plan = _plan(examples, epoch + 1, seed, max_tokens, k_probs, renderer, order, chunk)
        following = None
        for index in range(start, len(mine)):
            batch = collate(mine[index])
            yield epoch, index + 1, batch.pin_memory() if pin else batch
            if following is None:
                try:
                    next(plan)
                except StopIteration as done:
                    following = done.value
        batches = following if following is not None else _finish(plan)
        epoch, start = epoch + 1, 0
