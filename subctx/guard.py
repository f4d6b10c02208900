"""The context guard: notice a translation made with context that is not a translation of its
own cue, and fall back to the cue's translation without context.

A concatenation model decodes after its own earlier translation; when that prefix is incomplete
it can go on translating the previous cue, or repeat it. Each context translation that differs
from the same cue translated without context (and that the context scope keeps) is checked:
- empty output, or one that repeats the previous translation while the plain one does not;
- an output much longer or shorter than the plain one;
- an output the model itself, reading the cue alone, finds much less likely than the plain one
  (average log-probability per token, both scored without context): a ты/вы or gender choice
  costs a little, a sentence borrowed from the previous cue costs a lot.
A bundle says whether the guard is on by default (chosen on dev: it costs decoding time).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from subctx.contract import Fallback, Hypothesis

_WORD = re.compile(r"\w+", re.UNICODE)
EMPTY = Fallback("empty")
REPEATS = Fallback("repeats the previous line")
LENGTH = Fallback("length")
UNLIKELY = Fallback("not a translation of the cue")


@dataclass(frozen=True)
class GuardSettings:
    margin: float = 1.0  # nats per token the context translation may lose to the plain one
    # characters, either way, against the plain translation (tuned on friends_dev: 2.0 / 1.5 /
    # 1.3 -> chrF 25.72 / 26.40 / 26.76 with 6 / 18 / 31 % of cues falling back; 1.5 keeps
    # most context translations and catches the ones cut short after a forced prefix)
    max_length_ratio: float = 1.5
    max_overlap: float = 0.6  # share of word pairs found in the previous translation
    enabled: bool = True  # the checks


def _pairs(text: str) -> list[tuple[str, str]]:
    words = [w.lower() for w in _WORD.findall(text)]
    return list(zip(words, words[1:], strict=False))


def overlap(text: str, context: str) -> float:
    """Share of the word pairs of `text` that also occur in `context` (0 for < 3 words)."""
    pairs = _pairs(text)
    if len(pairs) < 2:
        return 0.0
    seen = set(_pairs(context))
    return sum(p in seen for p in pairs) / len(pairs)


def per_token(h: Hypothesis) -> float:
    return h.log_prob / max(1, h.tokens)


def verdict(with_context: str, plain: str, previous: Sequence[str],
            scored_context: Hypothesis | None, scored_plain: Hypothesis | None,
            settings: GuardSettings) -> Fallback | None:
    """Why the context translation should be replaced by the plain one, or None to keep it.
    `previous` are the target-side context translations; the scores are both without context
    (None: no score check)."""
    if with_context == plain or not settings.enabled:
        return None
    if not with_context.strip():
        return EMPTY
    last = previous[-1] if previous else ""
    if last and overlap(with_context, last) >= settings.max_overlap > overlap(plain, last):
        return REPEATS
    a, b = len(with_context), max(1, len(plain))
    if a / b > settings.max_length_ratio or b / max(1, a) > settings.max_length_ratio:
        return LENGTH
    scored = scored_context is not None and scored_plain is not None
    if scored and per_token(scored_plain) - per_token(scored_context) > settings.margin:
        return UNLIKELY
    return None
