from dataclasses import dataclass

from subctx.context import context_indices


@dataclass
class Seg:
    start: float | None
    end: float | None


def chain(*pairs):
    return [Seg(s, e) for s, e in pairs]


def test_first_cue_has_no_context():
    assert context_indices(chain((0, 1), (2, 3)), 0) == []


def test_gap_exactly_max_gap_is_context_and_just_over_is_not():
    segs = chain((0.0, 1.0), (8.0, 9.0), (16.001, 17.0))
    assert context_indices(segs, 1, k=1, max_gap=7.0) == [0]
    assert context_indices(segs, 2, k=1, max_gap=7.0) == []


def test_millisecond_float_error_at_the_boundary():
    # 0.1 + 7.0 and friends are not exact in binary floating point
    segs = chain((0.0, 0.1), (7.1, 8.0))
    assert context_indices(segs, 1, k=1, max_gap=7.0) == [0]


def test_overlapping_cues_are_context():
    segs = chain((0.0, 5.0), (4.0, 6.0))
    assert context_indices(segs, 1) == [0]


def test_k_walks_back_and_stops_at_first_large_gap():
    segs = chain((0, 1), (20, 21), (22, 23), (24, 25))
    assert context_indices(segs, 3, k=3) == [1, 2]
    assert context_indices(segs, 3, k=1) == [2]
    assert context_indices(segs, 3, k=0) == []


def test_unknown_timing_breaks_context_unless_untimed_corpus():
    segs = chain((0, 1), (None, None), (2, 3))
    assert context_indices(segs, 2, k=2) == []
    assert context_indices(segs, 1, k=2) == []
    untimed = chain((None, None), (None, None), (None, None))
    assert context_indices(untimed, 2, k=2, max_gap=None) == [0, 1]
