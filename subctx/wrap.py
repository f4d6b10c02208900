"""Balanced line breaking for subtitle text."""

from __future__ import annotations

import math

DEFAULT_WIDTH = 42
DEFAULT_MAX_LINES = 2


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
              max_lines: int = DEFAULT_MAX_LINES) -> list[str]:
    """Break `text` into balanced lines of at most `width` characters, at most `max_lines` lines.

    When the text cannot fit, lines grow longer than `width` rather than more numerous; only text
    over twice the room (`max_lines` x `width` x 2) gets extra lines, so nothing is unreadable.
    """
    words = text.split()
    if not words:
        return []
    total = len(" ".join(words))
    if total <= width or max_lines <= 1:
        return [" ".join(words)]
    lines = max(2, math.ceil(total / width))
    if lines > max_lines:
        lines = max(max_lines, math.ceil(total / (2 * width)))
    if len(words) > 200:  # pathological cue: greedy fill keeps this linear
        return _greedy(words, max(width, math.ceil(total / lines)))
    candidate = _best_split(words, min(lines, len(words)))
    while max(map(len, candidate)) > width and lines < min(max_lines, len(words)):
        lines += 1
        candidate = _best_split(words, lines)
    return candidate


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
