"""How context and the current sentence are laid out as model input — one place used by both
the trainer (token ids) and the engine (SentencePiece pieces).

Encoder: ctx_k <sep> ... ctx_1 <sep> current </s>   (oldest context first)
Multi-encoder models (context encoder, capsule): current </s> as the source, and apart
    <ctx> ctx_k </s> ... ctx_1 </s>   with each token's sentence distance
Decoder: <s> tctx_k <sep> ... tctx_1 <sep> current </s>   (target side 'prefix': the context part
is forced at inference and discounted in the training loss)

With a segment shift, encoder position i of segment s (0 = oldest) is i + s * shift. CTranslate2
receives these positions as a second source stream of tokens 'p<position>' (FEATURE_SEPARATOR).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from subctx.bundle import ContextSettings

FEATURE_SEPARATOR = "\uffe8"
T = TypeVar("T")


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


def fit_context(src_ctx: Sequence[Sequence[T]], tgt_ctx: Sequence[Sequence[T]],
                current: Sequence[T], k: int, sep: T, eos: T, shift: int, limit: int,
                budget: int, with_prefix: bool) -> tuple[list[T], list[int], list[T]]:
    """A concatenation model's input with the last `k` context sentences, dropping them oldest
    first until the encoder's last position and the forced prefix plus the current sentence's
    decoding `budget` fit `limit` positions: (encoder tokens, their segments, prefix)."""
    while True:
        tokens, segments = encoder_tokens(src_ctx[len(src_ctx) - k:], current, sep, eos)
        prefix = decoder_prefix(tgt_ctx[len(tgt_ctx) - k:], sep) if with_prefix and k else []
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


def ct2_source(tokens: list[str], segments: list[int], settings: ContextSettings) -> list[str]:
    """Encoder tokens as CTranslate2 wants them: with position features when shifted."""
    if not settings.segment_shift:
        return tokens
    positions = shifted_positions(segments, settings.segment_shift)
    return [f"{t}{FEATURE_SEPARATOR}p{p}" for t, p in zip(tokens, positions, strict=True)]
