"""Training examples with context, and token-budget batches bucketed by length.

Context follows the app's rule (subctx.context): up to `max_k` preceding segments, stopping at
a time gap > max_gap on timed documents, in document order on untimed ones. Each epoch draws
every example's K from `k_probs` (so one model serves K = 0..max_k) and lays it out with
subctx.layout; target-side context tokens get loss weight `cd_weight` (context discounting).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

import numpy as np
import sentencepiece as spm
import torch

from subctx.bundle import SpecialTokens
from subctx.context import context_indices
from subctx.contract import MAX_SENTENCE_PIECES
from subctx.layout import decoder_prefix, encoder_tokens, separate_context, shifted_positions
from subctx_train.data import Document, weight_of
from subctx_train.tokenizer import BOS, EOS, PAD  # the ids our tokenizers give them


@dataclass
class Example:
    """Token ids of a current pair and of its available context (oldest first)."""

    src: list[int]
    tgt: list[int]
    src_ctx: list[list[int]]
    tgt_ctx: list[list[int] | None]
    weight: float = 1.0  # expected copies per epoch (corpus weighting)
    mt_ctx: list[list[int] | None] = field(default_factory=list)  # own translations of ctx


@dataclass
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
    for doc in docs:
        weight = weight_of(doc, weights or {})
        if weight <= 0:
            continue
        src_ids = sp.encode([s.src for s in doc.segments])
        if doc.synthetic:
            if tag == sp.unk_id():
                raise ValueError(f"{doc.doc_id} is synthetic but the tokenizer has no "
                                 f"{SpecialTokens().bt_tag} piece")
            src_ids = [[tag, *ids] for ids in src_ids]
        tgt_ids = [sp.encode(s.tgt) if s.tgt is not None else None for s in doc.segments]
        mt_ids = [sp.encode(s.mt)[:max_len] if s.mt else None for s in doc.segments]
        gap = max_gap if doc.timed else None
        for i, target in enumerate(tgt_ids):
            if target is None:
                continue
            src = src_ids[i]
            if control_share > 0:
                segment = doc.segments[i]
                tags = labels.control_prefix(segment.tgt, segment.src, control_ids,
                                             control_share, seed, doc.doc_id, i)
                src = [*src[:int(doc.synthetic)], *tags, *src[int(doc.synthetic):]]
            ctx = context_indices(doc.segments, i, max_k, gap)
            examples.append(Example(src[:max_len], target[:max_len],
                                    [src_ids[c][:max_len] for c in ctx],
                                    [tgt_ids[c][:max_len] if tgt_ids[c] is not None else None
                                     for c in ctx], weight, [mt_ids[c] for c in ctx]))
    return examples


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
           target_context: bool = True, noise: ContextNoise | None = None,
           rng: random.Random | None = None) -> Rendered:
    """Lay out an example with its last `k` context segments (fewer if not available);
    `target_context=False` gives the sKto1 layout (source-side context only). With `rng`
    (training), target-side context may be the model's own or a perturbed translation."""
    k = min(k, len(ex.src_ctx))
    src_ctx = ex.src_ctx[len(ex.src_ctx) - k:]
    tgt_ctx = shown_target_context(ex, k, noise, rng)
    src, segments = encoder_tokens(src_ctx, ex.src, sep, EOS)
    positions = shifted_positions(segments, shift) if shift else list(range(len(src)))
    # target-side context only when every context segment has a translation
    both_sides = target_context and k and all(t is not None for t in tgt_ctx)
    prefix = decoder_prefix(tgt_ctx, sep) if both_sides else []
    tgt = [BOS, *prefix, *ex.tgt, EOS]
    weights = [cd_weight] * len(prefix) + [1.0] * (len(ex.tgt) + 1)
    return Rendered(src, positions, tgt, weights, prefix_len=len(prefix))


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

    def _map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Batch:
        return Batch(*(fn(getattr(self, f.name)) for f in fields(self)))

    def pin_memory(self) -> Batch:
        """Page-locked copies, so that `to(cuda)` copies without blocking."""
        return self._map(torch.Tensor.pin_memory)

    def to(self, device: torch.device | str) -> Batch:
        return self._map(lambda t: t.to(device, non_blocking=True))

    @property
    def target_tokens(self) -> int:
        return int(self.current.sum())


def collate(items: list[Rendered]) -> Batch:
    n = len(items)
    s = max(len(r.src) for r in items)
    t = max(len(r.tgt) for r in items) - 1
    src = np.full((n, s), PAD, dtype=np.int64)
    pos = np.zeros((n, s), dtype=np.int64)
    tin = np.full((n, t), PAD, dtype=np.int64)
    tout = np.full((n, t), PAD, dtype=np.int64)
    w = np.zeros((n, t), dtype=np.float32)
    cur = np.zeros((n, t), dtype=bool)
    c = max(len(r.ctx) for r in items)
    ctx = np.full((n, c), PAD, dtype=np.int64)
    dist = np.zeros((n, c), dtype=np.int64)
    for i, r in enumerate(items):
        src[i, : len(r.src)] = r.src
        pos[i, : len(r.positions)] = r.positions
        tin[i, : len(r.tgt) - 1] = r.tgt[:-1]
        tout[i, : len(r.tgt) - 1] = r.tgt[1:]
        w[i, : len(r.weights)] = r.weights
        cur[i, r.prefix_len: len(r.weights)] = True
        ctx[i, : len(r.ctx)] = r.ctx
        dist[i, : len(r.ctx_dist)] = r.ctx_dist
    return Batch(*(torch.from_numpy(a) for a in (src, pos, tin, tout, w, cur, ctx, dist)))


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


def epoch_batches(examples: list[Example], epoch: int, seed: int, max_tokens: int,
                  k_probs: list[float], renderer: Renderer) -> list[list[Rendered]]:
    """Deterministic (seed, epoch) -> list of batches, each within `max_tokens` padded tokens
    on either side; similar lengths are grouped, then batch order is shuffled. An example of
    weight w appears floor(w) times, and once more with probability w - floor(w)."""
    rng = random.Random(seed * 1_000_003 + epoch)
    examples = epoch_sample(examples, rng)
    ks = rng.choices(range(len(k_probs)), weights=k_probs, k=len(examples))
    rendered = [renderer(ex, k, rng=rng) for ex, k in zip(examples, ks, strict=True)]
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



def batch_stream(examples: list[Example], epoch: int, start: int, seed: int, max_tokens: int,
                 k_probs: list[float], renderer: Renderer, rank: int = 0, world: int = 1,
                 pin: bool = False) -> Iterator[tuple[int, int, Batch]]:
    """Collated batches from epoch `epoch`, batch `start` on, epoch after epoch, as
    (epoch, batches of that epoch taken so far, batch): what a checkpoint stores to resume.
    Each of `world` ranks gets an equal share of every epoch (DDP steps in lockstep)."""
    while True:
        batches = epoch_batches(examples, epoch, seed, max_tokens, k_probs, renderer)
        usable = len(batches) - len(batches) % world
        batches = batches[:usable][rank::world]
        if not batches:
            raise ValueError("no training batch: too few examples for the number of ranks")
        for index in range(start, len(batches)):
            batch = collate(batches[index])
            yield epoch, index + 1, batch.pin_memory() if pin else batch
        epoch, start = epoch + 1, 0
