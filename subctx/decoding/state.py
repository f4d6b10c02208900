"""The state of one decoding call over many documents: each unit's context, its translation so
far, which translations are final, and progress. Schedules (subctx.decoding.schedules) advance
it; this module knows how to translate a set of units and how to settle them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from subctx.context import build_request, document_contexts
from subctx.contract import Hypothesis, Request, Translation, Translator
from subctx.controls import for_line
from subctx.decoding.scope import OUT_OF_SCOPE
from subctx.guard import verdict
from subctx.units import DocumentPlan, render_cues
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH

if TYPE_CHECKING:
    from subctx.decoding.options import DecodeOptions

Unit = tuple[int, int]  # (document, unit)


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

    def copy(self) -> DocumentResult:
        """Another result with the same translations, whose list can change on its own."""
        return DocumentResult(self.plan, list(self.translations), self.contexts,
                              list(self.warnings))

    def broken_fallbacks(self) -> int:
        """Cues whose context translation the guard found broken and replaced."""
        return sum(t.fallback is not None and t.fallback.broken for t in self.translations)


UnitsDone = Callable[[int, list[int]], None]
DocumentDone = Callable[[int, DocumentResult], None]


class Run:
    """Plans being translated, and everything the schedules share about them."""

    def __init__(self, plans: Sequence[DocumentPlan], translator: Translator,
                 options: DecodeOptions, on_units_done: UnitsDone | None = None,
                 on_document_done: DocumentDone | None = None):
        self.plans, self.translator, self.options = plans, translator, options
        self.on_units_done, self.on_document_done = on_units_done, on_document_done
        self.k = max(0, min(options.context, translator.max_context))
        self.contexts = [document_contexts(plan.units, self.k, options.max_gap)
                         for plan in plans]
        self.done: list[list[Translation | None]] = [[None] * len(p.units) for p in plans]
        self.final = [[False] * len(p.units) for p in plans]
        self.reported = [[False] * len(p.units) for p in plans]
        self.results: list[DocumentResult | None] = [None] * len(plans)
        self.plain: dict[Unit, Translation] = {}  # translations without context
        self.plain_scores: dict[Unit, Hypothesis] = {}  # and their scores (the guard's)
        self.dependents: list[list[list[int]]] = []  # the units that read each unit
        for ctx in self.contexts:
            deps: list[list[int]] = [[] for _ in ctx]
            for later, units in enumerate(ctx):
                for u in units:
                    deps[u].append(later)
            self.dependents.append(deps)

    # -- what a unit is ------------------------------------------------------------------------
    def units(self) -> list[Unit]:
        return [(d, u) for d, p in enumerate(self.plans) for u in range(len(p.units))]

    @property
    def dependent(self) -> bool:
        """Whether units wait for their context's translations (a prefix-reading model)."""
        return self.translator.uses_target_context and self.k > 0

    def source(self, unit: Unit) -> str:
        return self.plans[unit[0]].units[unit[1]].text

    def alone(self, unit: Unit) -> bool:
        """Translated without context: no context, or nothing the scope could change."""
        d, u = unit
        return not self.contexts[d][u] or not self.options.scope.needs_context(self.source(unit))

    def request(self, unit: Unit) -> Request:
        d, u = unit
        return build_request(self.plans[d].units, self.contexts[d], u, self.done[d],
                             self.options.controls, self.options.carry)

    def plain_request(self, unit: Unit) -> Request:
        """The request for a unit read alone (no context)."""
        text = self.source(unit)
        return Request(text, controls=for_line(self.options.controls, text))

    def previous(self, unit: Unit) -> list[str]:
        """The translations a unit reads as its context, as they stand."""
        d, u = unit
        return [t.text for c in self.contexts[d][u] if (t := self.done[d][c]) is not None]

    def told(self, unit: Unit) -> list[str]:
        """What the scope weighs a unit's context translation against: the translations it
        reads, and before them, under `--formality auto`, the earlier one whose register its
        tag carries (the scene's ты/вы may have been set further back than the context)."""
        previous = self.previous(unit)
        carry = self.options.carry
        if carry is not None:
            d, u = unit
            carried = carry.told_by(self.contexts[d], u, self.done[d])
            if carried is not None and carried not in previous:
                previous.insert(0, carried)
        return previous

    # -- translating ---------------------------------------------------------------------------
    def translate(self, units: list[Unit], with_context: bool) -> list[Translation]:
        """Translations of `units`, in calls of the schedule's chunk size."""
        opts = self.options
        requests = [self.request(unit) if with_context else self.plain_request(unit)
                    for unit in units]
        step = opts.schedule.chunk(opts.batch_size)
        out: list[Translation] = []
        for i in range(0, len(requests), step):
            out += self.translator.translate(
                requests[i:i + step], beam_size=opts.beam_size,
                num_hypotheses=opts.num_hypotheses, return_attention=opts.return_attention)
        return out

    def translate_plain(self, units: list[Unit]) -> None:
        """Translate `units` without context: what the scope and the guard compare the context
        translations with, and what a schedule's guesses start from."""
        self.plain = dict(zip(units, self.translate(units, with_context=False), strict=True))

    def score_plain(self, units: list[Unit]) -> None:
        """The plain translations' own scores (cue alone), in one large batch: the guard
        compares every context translation with them."""
        if not units:
            return
        requests = [self.plain_request(unit) for unit in units]
        hyps = self.translator.score(requests, [self.plain[unit].text for unit in units])
        self.plain_scores = dict(zip(units, hyps, strict=True))

    def decode(self, units: list[Unit]) -> list[Translation]:
        """Each unit translated with its context as it stands, as the scope and the guard
        allow: the one step every schedule takes."""
        return self._guarded(units, self._with_context(units))

    def _with_context(self, units: list[Unit]) -> list[Translation]:
        """Each unit translated with its context, except where the scope could keep nothing
        of it (`worth_asking`): there the plain translation stands."""
        scope = self.options.scope
        if not scope.compares_plain:
            return self.translate(units, with_context=True)
        asked = [unit for unit in units if scope.worth_asking(
            self.source(unit), self.plain[unit].text, self.told(unit))]
        out = dict(zip(asked, self.translate(asked, with_context=True), strict=True))
        return [out.get(unit, self.plain[unit]) for unit in units]

    def _guarded(self, units: list[Unit], outputs: list[Translation]) -> list[Translation]:
        """Each context translation, or the plain one where the scope does not keep it or
        the guard finds it broken."""
        scope, guard = self.options.scope, self.options.guard
        if not (scope.compares_plain or guard.enabled):
            return outputs
        differ = [i for i, (unit, out) in enumerate(zip(units, outputs, strict=True))
                  if out.text != self.plain[unit].text]
        previous = {i: self.previous(units[i]) for i in differ}
        kept = [i for i in differ if scope.keeps(self.source(units[i]),
                                                 self.plain[units[i]].text, outputs[i].text,
                                                 self.told(units[i]))]
        scores: dict[int, tuple[Hypothesis, Hypothesis]] = {}
        if kept and self.plain_scores and guard.enabled:
            hyps = self.translator.score([self.plain_request(units[i]) for i in kept],
                                         [outputs[i].text for i in kept])
            scores = {i: (hyp, self.plain_scores[units[i]])
                      for i, hyp in zip(kept, hyps, strict=True)}
        guarded = list(outputs)
        for i in differ:
            plain = self.plain[units[i]]
            with_ctx, without = scores.get(i, (None, None))
            reason = verdict(outputs[i].text, plain.text, previous[i], with_ctx, without,
                             guard) if i in kept else OUT_OF_SCOPE
            if reason:
                guarded[i] = Translation(plain.text, plain.score, plain.alternatives,
                                         plain.attention, plain.context_attention,
                                         fallback=reason)
        return guarded

    # -- bookkeeping ---------------------------------------------------------------------------
    def consistent(self, redo: set[Unit]) -> list[tuple[Unit, Translation]]:
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

    def settle(self, finished: list[tuple[Unit, Translation]]) -> None:
        """Mark units final, report them, and finish the documents that are complete."""
        by_doc: dict[int, list[int]] = {}
        for (d, u), out in finished:
            if self.final[d][u]:
                continue
            self.done[d][u] = out
            self.final[d][u] = True
            by_doc.setdefault(d, []).append(u)
        for d, units in by_doc.items():
            self.report(d, units)
            if all(self.final[d]):
                self.finish(d)

    def settle_rest(self) -> None:
        """Every unit not final yet is, as it stands."""
        self.settle([((d, u), self.done[d][u]) for d, p in enumerate(self.plans)
                     for u in range(len(p.units)) if not self.final[d][u]])

    def report(self, d: int, units: list[int]) -> None:
        """Progress: each unit once, when it first has a translation."""
        new = [u for u in units if not self.reported[d][u]]
        for u in new:
            self.reported[d][u] = True
        if new and self.on_units_done:
            self.on_units_done(d, new)

    def finish(self, d: int) -> None:
        plan = self.plans[d]
        result = DocumentResult(plan, self.done[d], self.contexts[d])  # type: ignore[arg-type]
        for u, t in enumerate(result.translations):
            if not t.text.strip():
                result.warnings.append(
                    f"cue {plan.units[u].cue + 1}: empty translation, English kept")
                t.text = plan.units[u].text
        self.results[d] = result
        if self.on_document_done:
            self.on_document_done(d, result)

    def finished(self) -> list[DocumentResult]:
        assert all(r is not None for r in self.results), "context graph left units untranslated"
        return self.results  # type: ignore[return-value]
