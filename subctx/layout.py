"""How context and the current sentence are laid out as model input (one place for both the
trainer and the engine).

Encoder: ctx_k <sep> ... ctx_1 <sep> current </s>   (oldest context first)
Decoder: <s> tctx_k <sep> ... tctx_1 <sep> current </s>   ('prefix' target side; the context part
is forced at inference and discounted in the training loss)

With a segment shift, encoder position i of segment s (0 = oldest) is i + s * shift. CTranslate2
receives these positions as a second source stream of tokens 'p<position>' (FEATURE_SEPARATOR).
"""

from __future__ import annotations

from collections.abc import Sequence

from subctx.bundle import ContextSettings, SpecialTokens

FEATURE_SEPARATOR = "\uffe8"


def encoder_tokens(
    context: Sequence[Sequence[str]], current: Sequence[str], tokens: SpecialTokens,
) -> tuple[list[str], list[int]]:
    """Return the encoder token sequence and each token's segment number (0 = oldest)."""
    out: list[str] = []
    segments: list[int] = []
    for s, pieces in enumerate(context):
        out += [*pieces, tokens.sep]
        segments += [s] * (len(pieces) + 1)
    out += [*current, tokens.eos]
    segments += [len(context)] * (len(current) + 1)
    return out, segments


def shifted_positions(segments: Sequence[int], shift: int) -> list[int]:
    return [i + s * shift for i, s in enumerate(segments)]


def decoder_prefix(context: Sequence[Sequence[str]], tokens: SpecialTokens) -> list[str]:
    """Target-side context forced before the current sentence (no <s>: the decoder adds it)."""
    out: list[str] = []
    for pieces in context:
        out += [*pieces, tokens.sep]
    return out


def ct2_source(tokens: list[str], segments: list[int], settings: ContextSettings) -> list[str]:
    """Encoder tokens as CTranslate2 wants them: with position features when shifted."""
    if not settings.segment_shift:
        return tokens
    positions = shifted_positions(segments, settings.segment_shift)
    return [f"{t}{FEATURE_SEPARATOR}p{p}" for t, p in zip(tokens, positions, strict=True)]
