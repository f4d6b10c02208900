"""The context guard: notice a translation made with context that is not a translation of its
own cue, and fall back to the cue's translation without context.

A concatenation model decodes after its own earlier translation; when that prefix is incomplete
it can go on translating the previous cue, or repeat it. Each context translation is compared
with the same cue translated without context:
- empty output, or one that repeats the previous translation while the plain one does not;
- an output much longer or shorter than the plain one;
- an output the model itself, reading the cue alone, finds much less likely than the plain one
  (average log-probability per token, both scored without context): a ты/вы or gender choice
  costs a little, a sentence borrowed from the previous cue costs a lot.

Its scope says what context may change at all: 'all', or 'agreement' (subctx.agreement): a
context translation that differs from the plain one only in wording, not in ты/вы or a
pronoun, and fills in no elided verb, is replaced by the plain one. A bundle chooses its scope
on dev; the checks above apply to what the scope lets through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from subctx.agreement import keeps
from subctx.contract import Hypothesis

_WORD = re.compile(r"\w+", re.UNICODE)
OUT_OF_SCOPE = "changes no pronoun or ты/вы"  # a verdict of the scope, not a failure


@dataclass(frozen=True)
class GuardSettings:
    margin: float = 1.0  # nats per token the context translation may lose to the plain one
    # characters, either way, against the plain translation (tuned on friends_dev: 2.0 / 1.5 /
    # 1.3 -> chrF 25.72 / 26.40 / 26.76 with 6 / 18 / 31 % of cues falling back; 1.5 keeps
    # most context translations and catches the ones cut short after a forced prefix)
    max_length_ratio: float = 1.5
    max_overlap: float = 0.6  # share of word pairs found in the previous translation
    enabled: bool = True  # the checks
    scope: str = "all"  # what context may change: "all" or "agreement"

    @property
    def needs_plain(self) -> bool:
        """Whether context translations are compared with plain ones at all."""
        return self.enabled or self.scope == "agreement"


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
            settings: GuardSettings, source: str = "") -> str | None:
    """Why the context translation should be replaced by the plain one, or None to keep it.
    `previous` are the target-side context translations; the scores are both without context;
    `source` is the cue (the 'agreement' scope reads it)."""
    if with_context == plain:
        return None
    if settings.scope == "agreement" and not keeps(source, plain, with_context, previous):
        return OUT_OF_SCOPE
    if not settings.enabled:
        return None
    if not with_context.strip():
        return "empty"
    last = previous[-1] if previous else ""
    if last and overlap(with_context, last) >= settings.max_overlap > overlap(plain, last):
        return "repeats the previous line"
    a, b = len(with_context), max(1, len(plain))
    if a / b > settings.max_length_ratio or b / max(1, a) > settings.max_length_ratio:
        return "length"
    scored = scored_context is not None and scored_plain is not None
    if scored and per_token(scored_plain) - per_token(scored_context) > settings.margin:
        return "not a translation of the cue"
    return None
