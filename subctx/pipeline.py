"""Translating whole documents in order, many documents at once.

A unit's context translations are its decoder prefix (target-side context), so each unit
depends on the ones before it. Two schedules give the same translations:
- 'batched': every unit is translated without context in one batched pass (the
  first unit of each scene is then done), then every unit with context is translated with the
  current translations of its context units as prefix, in batches; the passes repeat for the
  units whose prefix changed, until none does (a fixed point: each unit then has exactly the
  prefix the sequential schedule would give it). A film becomes large batches instead of one
  batch per cue, but a model whose output follows its prefix closely needs many passes
  (friends_dev, embedded model: 14 passes, 3.4x the cue translations of no context, slower
  than sequential; bench/context_schedule.py measures it).
- 'sequential': a unit is translated once its context units are final, so every
  scene chain advances one unit per batch (all chains of all files together).
- 'blocks' (default): the sequential schedule with long chains cut into blocks that advance
  side by side (about `batch_size` blocks in all), so one long film is decoded in full
  batches, not one cue at a time. A block's first cue starts from a guess (its predecessors'
  translations without context); once every block is done, the cues whose guess was wrong are
  translated again with the real prefix, and the change is followed down the block until a
  translation comes out unchanged (the fixed point above, started from an almost consistent
  state). The translations are then those of the sequential schedule, up to the last digits
  that batch composition changes in int8 (friends_dev as one 1,344-cue film: 99.3 % identical,
  2.17x no context against 3.97x sequential; bench/context_schedule.py --film).
- 'two-pass': the batched schedule stopped after its first context pass: each cue's prefix is
  the previous cue's translation *without* context. Not what the sequential decoder gives
  (bench/context_schedule.py measures how far), but two batched passes in all.
Translations made with context pass the guard (subctx.guard), which falls back to the plain
translation for a cue whose context translation is not a translation of it, or (in the
'agreement' scope) changes nothing context is for: ты/вы, a pronoun, an elided verb.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from subctx.agreement import keeps, needs_context, worth_asking
from subctx.bundle import ContextSettings
from subctx.context import context_indices
from subctx.contract import Hypothesis, Request, Translation, Translator
from subctx.guard import GuardSettings, verdict
from subctx.units import DocumentPlan, render_cues
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH

SCHEDULES = ("sequential", "blocks", "batched", "two-pass")
MIN_BLOCK = 8  # cues: shorter blocks would re-translate many block starts for little gain


@dataclass
class DecodeOptions:
    context: int = 1
    max_gap: float | None = 7.0
    beam_size: int = 4
    num_hypotheses: int = 1
    return_attention: bool = False
    batch_size: int = 32
    schedule: str = "blocks"
    guard: GuardSettings = field(default_factory=GuardSettings)

    @classmethod
    def for_model(cls, settings: ContextSettings, context: int | None = None,
                  max_gap: float | None = None, guard: bool | None = None,
                  scope: str | None = None,
                  **rest) -> DecodeOptions:
        """The app's options for a bundle: its context rule, guard and scope unless given."""
        return cls(context=settings.default_k if context is None else context,
                   max_gap=settings.max_gap if max_gap is None else max_gap,
                   guard=GuardSettings(enabled=settings.guard if guard is None else guard,
                                       scope=settings.scope if scope is None else scope),
                   **rest)


@dataclass
class DocumentResult:
    """Unit translations of one document plus the context each was translated with."""

    plan: DocumentPlan
    translations: list[Translation]
    contexts: list[list[int]]
    warnings: list[str] = field(default_factory=list)

    def texts(self) -> list[str]:
        return [t.text for t in self.translations]

    def cue_lines(self, width: int = DEFAULT_WIDTH, max_lines: int = DEFAULT_MAX_LINES
                  ) -> list[list[str]]:
        return render_cues(self.plan, self.texts(), width, max_lines)


def document_contexts(plan: DocumentPlan, k: int, max_gap: float | None) -> list[list[int]]:
    """Context of every unit; a document without any timing uses document order."""
    if not any(u.start is not None for u in plan.units):
        max_gap = None
    return [context_indices(plan.units, i, k, max_gap) for i in range(len(plan.units))]


def build_request(plan: DocumentPlan, contexts: list[list[int]], unit: int,
                  translated: Sequence[Translation | None]) -> Request:
    ctx = contexts[unit]
    target = tuple(translated[c].text if translated[c] else "" for c in ctx)
    return Request(plan.units[unit].text, tuple(plan.units[c].text for c in ctx), target)


Unit = tuple[int, int]  # (document, unit)


def translate_documents(
    plans: Sequence[DocumentPlan], translator: Translator, options: DecodeOptions,
    on_units_done: Callable[[int, list[int]], None] | None = None,
    on_document_done: Callable[[int, DocumentResult], None] | None = None,
) -> list[DocumentResult]:
    """Translate every unit of every plan, respecting context order. Callbacks report progress:
    `on_units_done(doc, units)` once for each unit, when it has its translation (under
    'blocks', a unit may still be repaired after that), `on_document_done(doc, result)` when a
    document is complete and final (so it can be written out before the others finish)."""
    if options.schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {options.schedule!r}")
    return _Scheduler(plans, translator, options, on_units_done, on_document_done).run()


class _Scheduler:
    def __init__(self, plans, translator, options, on_units_done, on_document_done):
        self.plans, self.translator, self.options = plans, translator, options
        self.on_units_done, self.on_document_done = on_units_done, on_document_done
        self.k = max(0, min(options.context, translator.max_context))
        self.contexts = [document_contexts(plan, self.k, options.max_gap) for plan in plans]
        self.done: list[list[Translation | None]] = [[None] * len(p.units) for p in plans]
        self.final = [[False] * len(p.units) for p in plans]
        self.reported = [[False] * len(p.units) for p in plans]
        self.results: list[DocumentResult | None] = [None] * len(plans)
        self.plain_scores: dict[Unit, Hypothesis] = {}
        self.dependents: list[list[list[int]]] = []
        for ctx in self.contexts:
            deps: list[list[int]] = [[] for _ in ctx]
            for later, units in enumerate(ctx):
                for u in units:
                    deps[u].append(later)
            self.dependents.append(deps)

    # -- translating -------------------------------------------------------------------------
    def _translate(self, units: list[Unit], with_context: bool) -> list[Translation]:
        opts = self.options
        requests = [self._request(d, u) if with_context else
                    Request(self.plans[d].units[u].text) for d, u in units]
        out: list[Translation] = []
        step = opts.batch_size if opts.schedule == "sequential" else max(opts.batch_size, 256)
        for i in range(0, len(requests), step):
            out += self.translator.translate(
                requests[i:i + step], beam_size=opts.beam_size,
                num_hypotheses=opts.num_hypotheses, return_attention=opts.return_attention)
        return out

    def _with_context(self, units: list[Unit], plain: dict[Unit, Translation]) -> list[Translation]:
        """Each unit translated with its context; in the 'agreement' scope, a cue keeps its
        plain translation where nothing the scope keeps could come of context (`worth_asking`:
        you / an order, and the context translations tell no ты/вы, or the plain one's)."""
        if self.options.guard.scope != "agreement":
            return self._translate(units, with_context=True)
        asked = [(d, u) for d, u in units if worth_asking(
            self.plans[d].units[u].text, plain[(d, u)].text, self._previous(d, u))]
        out = dict(zip(asked, self._translate(asked, with_context=True), strict=True))
        return [out.get(unit, plain[unit]) for unit in units]

    def _previous(self, d: int, u: int) -> list[str]:
        """The translations a unit reads as its context, as they stand."""
        return [t.text for c in self.contexts[d][u] if (t := self.done[d][c]) is not None]

    def _request(self, d: int, u: int) -> Request:
        return build_request(self.plans[d], self.contexts[d], u, self.done[d])

    def _guarded(self, units: list[Unit], outputs: list[Translation],
                 plain: dict[Unit, Translation]) -> list[Translation]:
        """Each context translation, or the plain one where the guard finds it broken."""
        settings = self.options.guard
        if not settings.needs_plain:
            return outputs
        differ = [i for i, (unit, out) in enumerate(zip(units, outputs, strict=True))
                  if out.text != plain[unit].text]
        source = [self.plans[d].units[u].text for d, u in units]
        previous = {i: self._previous(*units[i]) for i in differ}
        scores: dict[int, tuple[Hypothesis, Hypothesis]] = {}
        checked: list[int] = []  # scored: what the scope lets through to the checks
        if self.plain_scores and settings.enabled:
            checked = [i for i in differ if settings.scope != "agreement"
                       or keeps(source[i], plain[units[i]].text, outputs[i].text, previous[i])]
        if checked:
            requests = [Request(source[i]) for i in checked]
            hyps = self.translator.score(requests, [outputs[i].text for i in checked])
            scores = {i: (hyp, self.plain_scores[units[i]])
                      for i, hyp in zip(checked, hyps, strict=True)}
        guarded = list(outputs)
        for i in differ:
            with_ctx, without = scores.get(i, (None, None))
            reason = verdict(outputs[i].text, plain[units[i]].text, previous[i], with_ctx,
                             without, settings, source[i])
            if reason:
                fallback = plain[units[i]]
                guarded[i] = Translation(fallback.text, fallback.score, fallback.alternatives,
                                         fallback.attention, fallback.context_attention,
                                         fallback=reason)
        return guarded

    def _score_plain(self, units: list[Unit], plain: dict[Unit, Translation]) -> None:
        """The plain translations' own scores (cue alone), in one large batch: the guard
        compares every context translation with them. Translators that cannot score get no
        score check (the other checks still apply)."""
        if not units or not hasattr(self.translator, "score"):
            return
        requests = [Request(self.plans[d].units[u].text) for d, u in units]
        hyps = self.translator.score(requests, [plain[unit].text for unit in units])
        self.plain_scores = dict(zip(units, hyps, strict=True))

    # -- schedules ---------------------------------------------------------------------------
    def run(self) -> list[DocumentResult]:
        all_units = [(d, u) for d, p in enumerate(self.plans) for u in range(len(p.units))]
        for d, plan in enumerate(self.plans):
            if not plan.units:
                self._finish(d)
        if not all_units:
            return self._results()
        dependent = self.translator.uses_target_context and self.k > 0
        if not dependent:  # no unit waits for another: one pass over everything
            outputs = self._translate(all_units, with_context=self.k > 0)
            self._settle(list(zip(all_units, outputs, strict=True)))
            return self._results()
        alone = self._alone(all_units)
        first = [unit for unit in all_units if unit in alone]
        later = [unit for unit in all_units if unit not in alone]
        blocks = self._cut_blocks(later) if self.options.schedule == "blocks" else []
        guessed = self._guessed(blocks)  # their plain translations start the blocks
        batched = self.options.schedule not in ("sequential", "blocks")
        plain_units = (all_units if self.options.guard.needs_plain or batched
                       else list(dict.fromkeys(first + guessed)))
        plain = dict(zip(plain_units, self._translate(plain_units, with_context=False),
                         strict=True))
        if self.options.guard.enabled:
            self._score_plain(later, plain)
        if self.options.schedule == "blocks":
            self._settle([(unit, plain[unit]) for unit in first])
            self._blocks(blocks, guessed, plain)
        elif not batched:
            self._settle([(unit, plain[unit]) for unit in first])
            self._sequential(later, plain)
        else:
            for d, u in plain_units:
                self.done[d][u] = plain[(d, u)]
            self._settle([(unit, plain[unit]) for unit in first])
            self._fixed_point(later, plain)
        return self._results()

    def _sequential(self, later: list[Unit], plain: dict[Unit, Translation]) -> None:
        waiting = {(d, u): sum(not self.final[d][c] for c in self.contexts[d][u])
                   for d, u in later}
        ready = [unit for unit in later
                 if all(self.final[unit[0]][c] for c in self.contexts[unit[0]][unit[1]])]
        while ready:
            batch, ready = ready[: self.options.batch_size], ready[self.options.batch_size:]
            outputs = self._guarded(batch, self._with_context(batch, plain), plain)
            self._settle(list(zip(batch, outputs, strict=True)))
            for d, u in batch:
                for v in self.dependents[d][u]:
                    if (d, v) not in waiting:
                        continue
                    waiting[(d, v)] -= 1
                    if waiting[(d, v)] == 0:
                        ready.append((d, v))

    def _cut_blocks(self, later: list[Unit]) -> list[list[Unit]]:
        """The context chains (units in order, each reading the one before it), cut into
        blocks of equal length so that about `batch_size` blocks advance side by side."""
        chains: list[list[Unit]] = []
        head_of: dict[Unit, int] = {}
        for d, u in later:  # `later` is in document order: a unit's context comes before it
            previous = (d, self.contexts[d][u][-1])
            chain = head_of.pop(previous, None)
            if chain is None:
                chains.append([])
                chain = len(chains) - 1
            chains[chain].append((d, u))
            head_of[(d, u)] = chain
        size = max(MIN_BLOCK, -(-len(later) // max(1, self.options.batch_size)))
        return [chain[i:i + size] for chain in chains for i in range(0, len(chain), size)]

    def _guessed(self, blocks: list[list[Unit]]) -> list[Unit]:
        """Context units of a block's cues that lie before the block: guessed at first."""
        out: list[Unit] = []
        for block in blocks:
            inside = set(block)
            for d, u in block:
                out += [(d, c) for c in self.contexts[d][u] if (d, c) not in inside]
        return list(dict.fromkeys(out))

    def _blocks(self, blocks: list[list[Unit]], guessed: list[Unit],
                plain: dict[Unit, Translation]) -> None:
        for unit in guessed:  # a guess until its own block reaches it
            d, u = unit
            if self.done[d][u] is None:
                self.done[d][u] = plain[unit]
        used: dict[Unit, tuple[str, ...]] = {}
        # not final yet: every cue of a block that started from a guess, and every cue not
        # translated yet (a guessed one holds its guess until its own block reaches it)
        unsure = {unit for block in blocks for unit in block}
        later_blocks = {unit for block in blocks if not self._starts_chain(block[0])
                        for unit in block}
        for step in range(max((len(b) for b in blocks), default=0)):
            batch = [block[step] for block in blocks if step < len(block)]
            for d, u in batch:
                used[(d, u)] = self._request(d, u).target_context
            outputs = self._guarded(batch, self._with_context(batch, plain), plain)
            for (d, u), out in zip(batch, outputs, strict=True):
                self.done[d][u] = out
            unsure.difference_update(batch)
            # a chain's first block read no guess: its cues are final as they come
            self._settle(self._consistent(unsure | later_blocks))
            for d in {d for d, _ in batch}:  # the others are (almost always) done too
                self._report(d, [u for e, u in batch if e == d])
        wrong = [unit for unit in used if not self.final[unit[0]][unit[1]]
                 and used[unit] != self._request(*unit).target_context]
        self._fixed_point(wrong, plain)

    def _alone(self, units: list[Unit]) -> set[Unit]:
        """Units translated without context: those with no context, and in the 'agreement'
        scope those whose source has nothing context could change (subctx.agreement)."""
        agreement = self.options.guard.scope == "agreement"
        return {(d, u) for d, u in units if not self.contexts[d][u]
                or (agreement and not needs_context(self.plans[d].units[u].text))}

    def _starts_chain(self, unit: Unit) -> bool:
        d, u = unit
        return all(self.final[d][c] for c in self.contexts[d][u])

    def _fixed_point(self, pending: list[Unit], plain: dict[Unit, Translation]) -> None:
        passes = 1 if self.options.schedule == "two-pass" else None
        while pending and passes != 0:
            passes = None if passes is None else passes - 1
            outputs = self._guarded(pending, self._with_context(pending, plain), plain)
            changed = []
            for (d, u), out in zip(pending, outputs, strict=True):
                if self.done[d][u] is None or out.text != self.done[d][u].text:
                    changed.append((d, u))
                self.done[d][u] = out
            redo = set((d, v) for d, u in changed for v in self.dependents[d][u])
            self._settle(self._consistent(redo))
            pending = sorted(redo)
        self._settle([((d, u), self.done[d][u]) for d, p in enumerate(self.plans)
                      for u in range(len(p.units)) if not self.final[d][u]])

    def _consistent(self, redo: set[Unit]) -> list[tuple[Unit, Translation]]:
        """Units that will not be translated again and whose context is final, in order (a
        unit made final lets the next one of its chain follow)."""
        out = []
        for d, plan in enumerate(self.plans):
            final = list(self.final[d])
            for u in range(len(plan.units)):
                if not final[u] and (d, u) not in redo and self.done[d][u] is not None \
                        and all(final[c] for c in self.contexts[d][u]):
                    final[u] = True
                    out.append(((d, u), self.done[d][u]))
        return out

    # -- bookkeeping -------------------------------------------------------------------------
    def _settle(self, finished: list[tuple[Unit, Translation]]) -> None:
        """Mark units final, report them, and finish the documents that are complete."""
        by_doc: dict[int, list[int]] = {}
        for (d, u), out in finished:
            if self.final[d][u]:
                continue
            self.done[d][u] = out
            self.final[d][u] = True
            by_doc.setdefault(d, []).append(u)
        for d, units in by_doc.items():
            self._report(d, units)
            if all(self.final[d]):
                self._finish(d)

    def _report(self, d: int, units: list[int]) -> None:
        """Progress: each unit once, when it first has a translation."""
        new = [u for u in units if not self.reported[d][u]]
        for u in new:
            self.reported[d][u] = True
        if new and self.on_units_done:
            self.on_units_done(d, new)

    def _finish(self, d: int) -> None:
        plans = self.plans
        result = DocumentResult(plans[d], self.done[d], self.contexts[d])  # type: ignore[arg-type]
        for u, t in enumerate(result.translations):
            if not t.text.strip():
                result.warnings.append(
                    f"cue {plans[d].units[u].cue + 1}: empty translation, English kept")
                t.text = plans[d].units[u].text
        self.results[d] = result
        if self.on_document_done:
            self.on_document_done(d, result)

    def _results(self) -> list[DocumentResult]:
        assert all(r is not None for r in self.results), "context graph left units untranslated"
        return self.results  # type: ignore[return-value]
