"""Schedules: in what order units are decoded with their context, when each unit's context is
the translations of the units before it (a prefix-reading model).

- `sequential`: a unit is decoded once its context units are final, so every scene chain
  advances one unit per batch (all chains of all files together). The reference.
- `blocks` (default): long chains are cut into blocks that advance side by side (about
  `batch_size` blocks in all), so one long film is decoded in full batches, not one cue at a
  time. A block's first unit starts from a guess (its predecessors' translations without
  context); once every block is done, the units whose guess was wrong are decoded again with
  the real context, and the change is followed down the block until a translation comes out
  unchanged (`fixed_point`). The translations are then those of `sequential`, up to the last
  digits that batch composition changes in int8 (friends_dev as one 1,344-cue film: 99.3 %
  identical, at half the time; bench/context_schedule.py).
Both take every step through `Run.decode`, which applies the context scope and the guard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from subctx.decoding.state import Run, Unit
from subctx.registry import lookup

MIN_BLOCK = 8  # units: shorter blocks would re-decode many block starts for little gain


@dataclass(frozen=True)
class Schedule:
    """A schedule: which units it needs translated without context before it starts (beyond
    the ones that need no context), how it advances the rest, and how many requests go to
    the translator at once."""

    name: str
    guesses: Callable[[Run, list[Unit]], list[Unit]]
    advance: Callable[[Run, list[Unit]], None]
    chunk: Callable[[int], int]  # batch size -> requests per translate call


def sequential(run: Run, later: list[Unit]) -> None:
    """Decode each unit as soon as every unit of its context is final."""
    waiting = {(d, u): sum(not run.final[d][c] for c in run.contexts[d][u]) for d, u in later}
    ready = [(d, u) for d, u in later if all(run.final[d][c] for c in run.contexts[d][u])]
    size = run.options.batch_size
    while ready:
        batch, ready = ready[:size], ready[size:]
        run.settle(list(zip(batch, run.decode(batch), strict=True)))
        for d, u in batch:
            for v in run.dependents[d][u]:
                if (d, v) in waiting:
                    waiting[(d, v)] -= 1
                    if waiting[(d, v)] == 0:
                        ready.append((d, v))


def _cut_blocks(run: Run, later: list[Unit]) -> list[list[Unit]]:
    """The context chains (units in order, each reading the one before it), cut into blocks
    of equal length so that about `batch_size` blocks advance side by side."""
    chains: list[list[Unit]] = []
    head_of: dict[Unit, int] = {}
    for d, u in later:  # `later` is in document order: a unit's context comes before it
        chain = head_of.pop((d, run.contexts[d][u][-1]), None)
        if chain is None:
            chains.append([])
            chain = len(chains) - 1
        chains[chain].append((d, u))
        head_of[(d, u)] = chain
    size = max(MIN_BLOCK, -(-len(later) // max(1, run.options.batch_size)))
    return [chain[i:i + size] for chain in chains for i in range(0, len(chain), size)]


def _guessed(blocks: list[list[Unit]], run: Run) -> list[Unit]:
    """Context units of a block's units that lie before the block: guessed at first."""
    out: list[Unit] = []
    for block in blocks:
        inside = set(block)
        for d, u in block:
            out += [(d, c) for c in run.contexts[d][u] if (d, c) not in inside]
    return list(dict.fromkeys(out))


def block_guesses(run: Run, later: list[Unit]) -> list[Unit]:
    return _guessed(_cut_blocks(run, later), run)


def blocks(run: Run, later: list[Unit]) -> None:
    """Decode the blocks side by side, one unit of each per step, then repair the units that
    read a wrong guess."""
    cut = _cut_blocks(run, later)
    for d, u in _guessed(cut, run):  # a guess until its own block reaches it
        if run.done[d][u] is None:
            run.done[d][u] = run.plain[(d, u)]
    used: dict[Unit, tuple[str, ...]] = {}
    # not final yet: every unit of a block that started from a guess, and every unit not
    # decoded yet (a guessed one holds its guess until its own block reaches it)
    unsure = {unit for block in cut for unit in block}
    read_a_guess = {unit for block in cut if not _starts_chain(run, block[0]) for unit in block}
    for step in range(max((len(b) for b in cut), default=0)):
        batch = [block[step] for block in cut if step < len(block)]
        for unit in batch:
            used[unit] = run.request(unit).target_context
        for (d, u), out in zip(batch, run.decode(batch), strict=True):
            run.done[d][u] = out
        unsure.difference_update(batch)
        # a chain's first block read no guess: its units are final as they come
        run.settle(run.consistent(unsure | read_a_guess))
        for d in {d for d, _ in batch}:  # the others are (almost always) done too
            run.report(d, [u for e, u in batch if e == d])
    wrong = [unit for unit in used if not run.final[unit[0]][unit[1]]
             and used[unit] != run.request(unit).target_context]
    fixed_point(run, wrong)


def _starts_chain(run: Run, unit: Unit) -> bool:
    d, u = unit
    return all(run.final[d][c] for c in run.contexts[d][u])


def fixed_point(run: Run, pending: list[Unit]) -> None:
    """Decode `pending` again, then every unit whose context changed, until none does; then
    every unit is final."""
    while pending:
        changed = []
        for (d, u), out in zip(pending, run.decode(pending), strict=True):
            if run.done[d][u] is None or out.text != run.done[d][u].text:
                changed.append((d, u))
            run.done[d][u] = out
        redo = {(d, v) for d, u in changed for v in run.dependents[d][u]}
        run.settle(run.consistent(redo))
        pending = sorted(redo)
    run.settle_rest()


SCHEDULES: dict[str, Schedule] = {s.name: s for s in (
    Schedule("blocks", block_guesses, blocks, chunk=lambda size: max(size, 256)),
    Schedule("sequential", lambda run, later: [], sequential, chunk=lambda size: size),
)}
BLOCKS = SCHEDULES["blocks"]


def schedule_named(name: str) -> Schedule:
    """The registered schedule of this name; ValueError listing the names otherwise."""
    return lookup(SCHEDULES, name, "schedule")
