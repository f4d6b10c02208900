"""The context rule shared by training and inference (docs/design.md), and the requests it
makes of a document's units.

A segment's context is up to `k` preceding segments of the same document, walking backwards and
stopping at the first gap larger than `max_gap` seconds (gap = start of the later segment - end of
the earlier one). Overlapping segments have a negative gap and stay in context. A segment whose
timing is unknown breaks the chain, unless `max_gap` is None (untimed corpora: document order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from subctx.contract import Request, Translation
from subctx.controls import for_line

if TYPE_CHECKING:
    from subctx.controls import RegisterCarry

DEFAULT_K = 1
DEFAULT_MAX_GAP = 7.0
_EPS = 1e-6  # timings are in milliseconds; this absorbs float error at exactly max_gap


class Timed(Protocol):
    start: float | None
    end: float | None


class TimedText(Timed, Protocol):
    text: str


def gap_ok(earlier: Timed, later: Timed, max_gap: float | None) -> bool:
    """True when `earlier` may serve as context for the directly following `later`."""
    if max_gap is None:
        return True
    if earlier.end is None or later.start is None:
        return False
    return later.start - earlier.end <= max_gap + _EPS


def context_indices(
    segments: Sequence[Timed], index: int, k: int = DEFAULT_K,
    max_gap: float | None = DEFAULT_MAX_GAP,
) -> list[int]:
    """Indices of the context segments of `segments[index]`, oldest first."""
    chosen: list[int] = []
    current = index
    while len(chosen) < k and current > 0:
        if not gap_ok(segments[current - 1], segments[current], max_gap):
            break
        current -= 1
        chosen.append(current)
    return chosen[::-1]


def document_contexts(units: Sequence[Timed], k: int, max_gap: float | None
                      ) -> list[list[int]]:
    """Context of every unit; a document without any timing uses document order."""
    if not any(u.start is not None for u in units):
        max_gap = None
    return [context_indices(units, i, k, max_gap) for i in range(len(units))]


def build_request(units: Sequence[TimedText], contexts: Sequence[Sequence[int]], unit: int,
                  translated: Sequence[Translation | None], controls: tuple[str, ...] = (),
                  carry: RegisterCarry | None = None) -> Request:
    """The request for one unit: its context units' English and their translations so far
    (and the control tags asked for the whole run, after the scene's register tag where
    `carry` says: subctx.controls.RegisterCarry)."""
    ctx = contexts[unit]
    target = tuple(translated[c].text if translated[c] else "" for c in ctx)
    carried = carry.piece(contexts, unit, translated) if carry is not None else None
    english = units[unit].text
    return Request(english, tuple(units[c].text for c in ctx), target,
                   controls=for_line((carried, *controls) if carried else controls, english))
