"""How context and the current sentence are laid out as model input — one place used by both
the trainer (token ids) and the engine (SentencePiece pieces).

Encoder: ctx_k <sep> ... ctx_1 <sep> current </s>   (oldest context first)
Multi-encoder models (context encoder, capsule): current </s> as the source, and apart
    <ctx> ctx_k </s> ... ctx_1 </s>   with each token's sentence distance
Decoder: <s> tctx_k <sep> ... tctx_1 <sep> current </s>   (target side 'prefix': the context part
is forced at inference and discounted in the training loss)
Target side 'encoder': the previous translations go to the encoder, each after its source,
    ctx_k <sep> tctx_k <sep> ... ctx_1 <sep> tctx_1 <sep> current </s>   and the decoder reads
    <s> current </s>: context costs the encoder a longer input, not the decoder a forced prefix
    step by step (the embedding matrix is shared, so Russian pieces are known to the encoder).
Target side 'none': source-side context only (sKto1).

With a segment shift, encoder position i of segment s (0 = oldest) is i + s * shift. CTranslate2
receives these positions as a second source stream of tokens 'p<position>' (FEATURE_SEPARATOR).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

FEATURE_SEPARATOR = "\uffe8"
T = TypeVar("T")


@dataclass(frozen=True)
class TargetSide:
    """Where a concatenation model reads the previous translations (a manifest's
    context.target_side, a training config's target_context)."""

    name: str
    reads: bool  # it reads them at all: then each cue's translation waits for its context's
    prefix: bool  # as the decoder's forced prefix (else in the encoder, after each source)
    description: str  # what happens to the previous translations, for the model card

    def context_segments(self, src_ctx: Sequence[Sequence[T]],
                         tgt_ctx: Sequence[Sequence[T]]) -> list[Sequence[T]]:
        """The encoder's context segments, oldest first: the sources, and in the 'encoder'
        layout each followed by its translation."""
        if self.reads and not self.prefix:
            return [seg for pair in zip(src_ctx, tgt_ctx, strict=True) for seg in pair]
        return list(src_ctx)


TARGET_SIDES: dict[str, TargetSide] = {side.name: side for side in (
    TargetSide("prefix", True, True, "forced as the decoder's prefix"),
    TargetSide("encoder", True, False,
               "read by the encoder, each after its source"),
    TargetSide("none", False, False, "not read (source-side context only)"),
)}


def encoder_tokens(context: Sequence[Sequence[T]], current: Sequence[T], sep: T, eos: T,
                   ) -> tuple[list[T], list[int]]:
    """Return the encoder sequence and each token's segment number (0 = oldest)."""
    out: list[T] = []
    segments: list[int] = []
    for s, pieces in enumerate(context):
        out += [*pieces, sep]
        segments += [s] * (len(pieces) + 1)
    out += [*current, eos]
    segments += [len(context)] * (len(current) + 1)
    return out, segments


def shifted_positions(segments: Sequence[int], shift: int) -> list[int]:
    return [i + s * shift for i, s in enumerate(segments)]


def separate_context(context: Sequence[Sequence[T]], ctx_bos: T, eos: T
                     ) -> tuple[list[T], list[int]]:
    """Multi-encoder models' context input: <ctx> s_k </s> ... s_1 </s> (oldest first), and
    each token's sentence distance (1 = the previous sentence; 0 for <ctx>)."""
    out: list[T] = [ctx_bos]
    distance = [0]
    k = len(context)
    for i, pieces in enumerate(context):
        out += [*pieces, eos]
        distance += [k - i] * (len(pieces) + 1)
    return out, distance


def decoder_prefix(context: Sequence[Sequence[T]], sep: T) -> list[T]:
    """Target-side context forced before the current sentence (no <s>: the decoder adds it)."""
    out: list[T] = []
    for pieces in context:
        out += [*pieces, sep]
    return out


def concat_input(sources: Sequence[Sequence[T]], translations: Sequence[Sequence[T] | None],
                 current: Sequence[T], side: TargetSide, sep: T, eos: T,
                 ) -> tuple[list[T], list[int], list[T]]:
    """A concatenation model's input for these context sentences (oldest first) and their
    translations: (encoder tokens, their segments, forced prefix). The translations are read
    where `side` puts them only when every context sentence has one; else the context is
    source-side only."""
    both_sides = (side.reads and len(sources) > 0 and len(translations) == len(sources)
                  and all(t is not None for t in translations))
    context = side.context_segments(sources, translations) if both_sides else sources
    tokens, segments = encoder_tokens(context, current, sep, eos)
    prefix = decoder_prefix(translations, sep) if both_sides and side.prefix else []
    return tokens, segments, prefix


def fit_context(src_ctx: Sequence[Sequence[T]], tgt_ctx: Sequence[Sequence[T] | None],
                current: Sequence[T], k: int, sep: T, eos: T, shift: int, limit: int,
                budget: int, side: TargetSide) -> tuple[list[T], list[int], list[T]]:
    """A concatenation model's input with the last `k` context sentences (and, where `side`
    reads them, their last `k` translations), dropping them oldest first until the encoder's
    last position and the forced prefix plus the current sentence's decoding `budget` fit
    `limit` positions: (encoder tokens, their segments, prefix)."""
    while True:
        tokens, segments, prefix = concat_input(
            src_ctx[len(src_ctx) - k:], tgt_ctx[len(tgt_ctx) - k:] if k else [], current,
            side, sep, eos)
        last_position = shifted_positions(segments, shift)[-1]
        if k == 0 or (last_position < limit and limit - 1 - len(prefix) >= budget):
            return tokens, segments, prefix
        k -= 1


def current_part(output: Sequence[T], prefix_len: int, sep: T) -> list[T]:
    """The current sentence of a decoder output that starts with a forced prefix; after a stray
    separator, what follows the last one."""
    current = list(output[prefix_len:])
    if sep in current:
        current = current[len(current) - current[::-1].index(sep):]
    return current


_WORD_EDGE = ".,!?;:\"'()[]…-«»"


def piece_words(pieces: Sequence[str]) -> list[tuple[str, list[int]]]:
    """Group SentencePiece pieces into words, stripped of punctuation: (word, piece indices).
    Pieces that are only punctuation or special tokens form no word."""
    words: list[tuple[str, list[int]]] = []
    for i, piece in enumerate(pieces):
        if piece.startswith("\u2581") or not words or piece.startswith("<"):
            words.append((piece.lstrip("\u2581"), [i]))
        else:
            words[-1] = (words[-1][0] + piece, [*words[-1][1], i])
    cleaned = [(w.strip(_WORD_EDGE), idx) for w, idx in words if not w.startswith("<")]
    return [(w, idx) for w, idx in cleaned if any(ch.isalnum() for ch in w)]


def ct2_source(tokens: list[str], segments: list[int], shift: int) -> list[str]:
    """Encoder tokens as CTranslate2 wants them: with position features when shifted."""
    if not shift:
        return tokens
    positions = shifted_positions(segments, shift)
    return [f"{t}{FEATURE_SEPARATOR}p{p}" for t, p in zip(tokens, positions, strict=True)]
