"""Balanced line breaking for subtitle text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

DEFAULT_WIDTH = 42
DEFAULT_MAX_LINES = 2
DEFAULT_MAX_CPS = 17.0  # characters per second a viewer can read (a common subtitling norm)
_TAGS = re.compile(r"</?(?:i|b|u|s|font)(?:\s[^<>]*)?>|\{\\[^{}]*\}", re.IGNORECASE)


def _best_split(words: list[str], lines: int) -> list[str]:
    """Split words into `lines` lines minimising the longest line, then the spread.

    Dynamic programme over break positions; ties prefer breaking after punctuation.
    """
    n = len(words)
    lengths = [len(w) for w in words]

    def span(i: int, j: int) -> int:  # length of words[i:j] joined by spaces
        return sum(lengths[i:j]) + (j - i - 1)

    # best[(i, m)] = (cost, breaks) for words[i:] in m lines
    memo: dict[tuple[int, int], tuple[tuple[int, int, int], list[int]]] = {}

    def solve(i: int, m: int) -> tuple[tuple[int, int, int], list[int]]:
        if m == 1:
            length = span(i, n)
            return (length, length * length, 0), []
        key = (i, m)
        if key in memo:
            return memo[key]
        best: tuple[tuple[int, int, int], list[int]] | None = None
        for j in range(i + 1, n - m + 2):
            length = span(i, j)
            (rest_max, rest_sq, rest_pen), rest_breaks = solve(j, m - 1)
            penalty = 0 if words[j - 1][-1] in ".,!?;:" else 1
            cost = (max(length, rest_max), length * length + rest_sq, penalty + rest_pen)
            if best is None or cost < best[0]:
                best = (cost, [j, *rest_breaks])
        assert best is not None
        memo[key] = best
        return best

    _, breaks = solve(0, lines)
    bounds = [0, *breaks, n]
    return [" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def wrap_text(text: str, width: int = DEFAULT_WIDTH,
              max_lines: int = DEFAULT_MAX_LINES, min_lines: int = 1) -> list[str]:
    """Break `text` into balanced lines of at most `width` characters (a longer single word
    is a line of its own): as few lines as fit, at least 2 once the text is longer than a
    line, and at least `min_lines` while there are words for them (a lyric keeps its lines).
    When more than `max_lines` lines are needed the cue gets them (a reader can follow
    three short lines, not two overlong ones); `readability` counts such cues. A dash that
    stands alone ('- Hi, John. - Hello.') opens the line of the word after it, never ends one."""
    words = _dashes_held(text.split())
    if not words:
        return []
    total = len(" ".join(words))
    if total <= width and min(min_lines, len(words)) <= 1:
        return [" ".join(words)]
    lines = min(max(2 if total > width else 1, math.ceil(total / width), min_lines),
                len(words))
    if len(words) > 200:  # pathological cue: greedy fill keeps this linear
        return _greedy(words, width)
    candidate = _best_split(words, min(lines, len(words)))
    alone = set(words)  # a line of one word is as short as it can be, whatever its length
    while any(len(line) > width and line not in alone for line in candidate) \
            and lines < len(words):
        lines += 1
        candidate = _best_split(words, lines)
    return candidate


_DASHES = frozenset("-\u2013\u2014")


def _dashes_held(words: list[str]) -> list[str]:
    """Words with each lone dash joined to the word after it (one unbreakable 'word')."""
    out: list[str] = []
    for word in words:
        if out and out[-1] in _DASHES:
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


def _greedy(words: list[str], width: int) -> list[str]:
    out: list[str] = []
    line = ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line]


@dataclass(frozen=True)
class Layout:
    """How translated cues are laid out and checked."""

    width: int = DEFAULT_WIDTH  # characters per line, never more
    max_lines: int = DEFAULT_MAX_LINES  # lines a cue should have at most
    max_cps: float = DEFAULT_MAX_CPS  # reading speed a cue should stay under


@dataclass
class Readability:
    """Cues a translator should look at: more lines than wanted, or too fast to read."""

    over_lines: list[int] = field(default_factory=list)  # cue indices
    too_fast: list[int] = field(default_factory=list)

    @property
    def over(self) -> list[int]:
        """Every cue over a limit, in order."""
        return sorted({*self.over_lines, *self.too_fast})


def visible_chars(lines: list[str]) -> int:
    """Characters a viewer reads in a cue: tags and line breaks not counted."""
    return len(" ".join(_TAGS.sub("", line).strip() for line in lines).strip())


def readability(timings: list[tuple[float | None, float | None]], cue_lines: list[list[str]],
                max_lines: int = DEFAULT_MAX_LINES, max_cps: float = DEFAULT_MAX_CPS
                ) -> Readability:
    """Check rendered cues: over `max_lines` lines, or more than `max_cps` characters per
    second of display time (tags and line breaks not counted)."""
    result = Readability()
    for index, ((start, end), lines) in enumerate(zip(timings, cue_lines, strict=True)):
        if len(lines) > max_lines:
            result.over_lines.append(index)
        chars = visible_chars(lines)
        timed = start is not None and end is not None and end > start
        if timed and chars and chars / (end - start) > max_cps:  # type: ignore[operator]
            result.too_fast.append(index)
    return result
