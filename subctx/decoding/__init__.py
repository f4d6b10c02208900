"""Translating whole documents in order, many documents at once.

A unit's context translations are its decoder prefix (target-side context), so each unit
depends on the ones before it. Units with no context, or with nothing the context scope could
change, are translated without context in one large pass; a schedule
(subctx.decoding.schedules) decodes the rest in an order that respects their context; every
translation made with context passes the scope (subctx.decoding.scope) and the guard
(subctx.guard), which fall back to the plain translation where context was not for the better.
"""

from __future__ import annotations

from collections.abc import Sequence

from subctx.contract import Translation, Translator
from subctx.decoding.options import DecodeOptions
from subctx.decoding.schedules import SCHEDULES, Schedule, schedule_named
from subctx.decoding.scope import OUT_OF_SCOPE, SCOPES, ContextScope, scope_named
from subctx.decoding.state import DocumentDone, DocumentResult, Run, UnitsDone
from subctx.units import DocumentPlan

__all__ = ["OUT_OF_SCOPE", "SCHEDULES", "SCOPES", "ContextScope", "DecodeOptions",
           "DocumentResult", "Schedule", "schedule_named", "scope_named", "translate_again",
           "translate_documents"]


def translate_documents(plans: Sequence[DocumentPlan], translator: Translator,
                        options: DecodeOptions, on_units_done: UnitsDone | None = None,
                        on_document_done: DocumentDone | None = None) -> list[DocumentResult]:
    """Translate every unit of every plan, respecting context order. Callbacks report progress:
    `on_units_done(doc, units)` once for each unit, when it has its translation (under
    'blocks', a unit may still be repaired after that), `on_document_done(doc, result)` when a
    document is complete and final (so it can be written out before the others finish)."""
    run = Run(plans, translator, options, on_units_done, on_document_done)
    for d, plan in enumerate(plans):
        if not plan.units:
            run.finish(d)
    units = run.units()
    if not units:
        return run.finished()
    if not run.dependent:  # no unit waits for another: one pass over everything
        run.settle(list(zip(units, run.translate(units, with_context=run.k > 0), strict=True)))
        return run.finished()
    first = [unit for unit in units if run.alone(unit)]
    later = [unit for unit in units if not run.alone(unit)]
    schedule, compared = options.schedule, options.scope.compares_plain or options.guard.enabled
    run.translate_plain(units if compared else
                        list(dict.fromkeys(first + schedule.guesses(run, later))))
    if options.guard.enabled:
        run.score_plain(later)
    run.settle([(unit, run.plain[unit]) for unit in first])
    schedule.advance(run, later)
    return run.finished()


def translate_again(plan: DocumentPlan, translator: Translator, options: DecodeOptions,
                    texts: Sequence[str], units: Sequence[int]) -> list[Translation]:
    """Some units of one document translated again, each with its context as `texts` have
    it, as `translate_documents` would: a unit the scope leaves alone without context, the
    others through the scope and the guard (what a review does after a person's change)."""
    run = Run([plan], translator, options)
    run.done[0] = [Translation(t, 0.0) for t in texts]
    keys = [(0, u) for u in units]
    if not keys:
        return []
    if not run.k:
        return run.translate(keys, with_context=False)
    run.translate_plain(keys)
    asked = [unit for unit in keys if not run.alone(unit)]
    if options.guard.enabled:
        run.score_plain(asked)
    decoded = dict(zip(asked, run.decode(asked), strict=True)) if asked else {}
    return [decoded.get(unit, run.plain[unit]) for unit in keys]
