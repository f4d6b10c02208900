"""Translating whole documents in order, many documents at once.

A unit can be translated once the units of its context are (their translations are its target
prefix). Units whose context is empty (first cue, after a long pause) or whose model uses no
target-side context are ready at once, so a film yields one independent chain per scene and all
chains of all files advance together, batch by batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from subctx.context import context_indices
from subctx.engine import Request, Translation
from subctx.units import DocumentPlan, render_cues
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH


class Translator(Protocol):
    max_context: int
    uses_target_context: bool

    def translate(self, requests: Sequence[Request], beam_size: int = 4,
                  num_hypotheses: int = 1, return_attention: bool = False
                  ) -> list[Translation]: ...


@dataclass
class DecodeOptions:
    context: int = 1
    max_gap: float | None = 7.0
    beam_size: int = 4
    num_hypotheses: int = 1
    return_attention: bool = False
    batch_size: int = 32


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


def translate_documents(
    plans: Sequence[DocumentPlan], translator: Translator, options: DecodeOptions,
    on_units_done: Callable[[int, list[int]], None] | None = None,
    on_document_done: Callable[[int, DocumentResult], None] | None = None,
) -> list[DocumentResult]:
    """Translate every unit of every plan, respecting context order. Callbacks report progress:
    `on_units_done(doc, units)` after each batch, `on_document_done(doc, result)` when a document
    is complete (so it can be written out before the others finish)."""
    k = max(0, min(options.context, translator.max_context))
    contexts = [document_contexts(plan, k, options.max_gap) for plan in plans]
    done: list[list[Translation | None]] = [[None] * len(p.units) for p in plans]
    waiting: list[list[int]] = []
    ready: list[tuple[int, int]] = []
    for d, ctx in enumerate(contexts):
        needs = [len(c) if translator.uses_target_context else 0 for c in ctx]
        waiting.append(needs)
        ready += [(d, u) for u, n in enumerate(needs) if n == 0]
    remaining = [len(p.units) for p in plans]
    results: list[DocumentResult | None] = [None] * len(plans)

    def finish(d: int) -> None:
        result = DocumentResult(plans[d], done[d], contexts[d])  # type: ignore[arg-type]
        for u, t in enumerate(result.translations):
            if not t.text.strip():
                result.warnings.append(
                    f"cue {plans[d].units[u].cue + 1}: empty translation, English kept")
                t.text = plans[d].units[u].text
        results[d] = result
        if on_document_done:
            on_document_done(d, result)

    for d, plan in enumerate(plans):
        if not plan.units:
            finish(d)
    while ready:
        batch, ready = ready[: options.batch_size], ready[options.batch_size:]
        requests = [build_request(plans[d], contexts[d], u, done[d]) for d, u in batch]
        outputs = translator.translate(
            requests, beam_size=options.beam_size, num_hypotheses=options.num_hypotheses,
            return_attention=options.return_attention)
        finished_docs: dict[int, list[int]] = {}
        for (d, u), output in zip(batch, outputs, strict=True):
            done[d][u] = output
            remaining[d] -= 1
            finished_docs.setdefault(d, []).append(u)
            if translator.uses_target_context:
                for later in range(u + 1, min(u + 1 + k, len(contexts[d]))):
                    if u in contexts[d][later]:
                        waiting[d][later] -= 1
                        if waiting[d][later] == 0:
                            ready.append((d, later))
        for d, units in finished_docs.items():
            if on_units_done:
                on_units_done(d, units)
            if remaining[d] == 0:
                finish(d)
    assert all(r is not None for r in results), "context graph left units untranslated"
    return results  # type: ignore[return-value]
