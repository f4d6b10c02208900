"""The translate service that the command line and the review screen share: a person's choices
(model, device, context, scope...) turned into a loaded model and decoding options, and files
read, translated together and written out atomically as each one is complete.

No printing here: callers get warnings, failures and per-file reports back and show them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from subctx.backends import backend_for, open_backend
from subctx.bundle import Bundle, default_bundle_path, load_bundle
from subctx.contract import BATCH_SIZE, Translator
from subctx.controls import AUTO, control_pieces, gender_tags, register_carry
from subctx.decoding import DecodeOptions, DocumentResult, translate_documents
from subctx.errors import BundleError, SubctxError
from subctx.files import Job, format_mismatch
from subctx.formats import SubtitleFile, read_subtitles
from subctx.names import DEFAULT_NAMES, Glossary, NameRule, settle_names
from subctx.reading import DEFAULT_FIT, ReadingFit, fit_reading_speed
from subctx.textio import atomic_write_text
from subctx.units import DocumentPlan, plan_document
from subctx.verbatim import restore_document
from subctx.wrap import Layout, readability

Failure = tuple[Path, str]  # a file and why it was not translated


@dataclass(frozen=True)
class ModelChoice:
    """Which model, where and how to decode (None: the bundle's own default)."""

    model: Path | None = None  # a bundle folder; None: the embedded one
    device: str = "auto"
    compute_type: str = "auto"
    threads: int = 0
    context: int | None = None
    max_gap: float | None = None
    beam: int = 4
    guard: bool | None = None
    scope: str | None = None
    schedule: str | None = None
    formality: str = AUTO  # control tags (subctx.controls): 'auto' asks nothing
    speaker_gender: str = AUTO
    batch_size: int = BATCH_SIZE  # cues decoded together

    def bundle(self) -> Bundle:
        """The chosen bundle, checked (its manifest and files) before any input is read."""
        try:
            bundle = load_bundle(self.model if self.model is not None else default_bundle_path())
        except BundleError as problem:
            if self.model is None and os.environ.get("SUBCTX_MODEL"):
                raise BundleError(f"$SUBCTX_MODEL ({default_bundle_path()}): {problem}"
                                  ) from None
            if self.model is None and not default_bundle_path().exists():
                raise BundleError("no model installed: the embedded default bundle is missing "
                                  f"({default_bundle_path()}); pass --model DIR") from None
            raise
        backend_for(bundle)
        self._controls(bundle)  # a model that cannot take the tags asked says so now
        return bundle

    def _controls(self, bundle: Bundle) -> tuple[str, ...]:
        return control_pieces(bundle.manifest, self.formality, self.speaker_gender)

    def options(self, bundle: Bundle, **rest) -> DecodeOptions:
        return DecodeOptions.for_model(bundle.manifest.context, self.context, self.max_gap,
                                       self.guard, self.scope, self.schedule,
                                       beam_size=self.beam, controls=self._controls(bundle),
                                       carry=register_carry(bundle.manifest, self.formality),
                                       genders=gender_tags(bundle.manifest),
                                       batch_size=self.batch_size, **rest)

    def translator(self, bundle: Bundle) -> Translator:
        return open_backend(bundle, device=self.device, compute_type=self.compute_type,
                            threads=self.threads, batch_size=self.batch_size)


DEFAULT_LAYOUT = Layout()


@dataclass
class Loaded:
    """An input read and planned, with where its translation goes."""

    job: Job
    sub: SubtitleFile
    plan: DocumentPlan
    warnings: list[str] = field(default_factory=list)
    glossary: Glossary = field(default_factory=Glossary)  # the one beside the film


@dataclass
class Written:
    """One translated file."""

    source: Path
    output: Path
    cues: int
    seconds: float  # since the run started (files are translated together)
    over_lines: list[int]  # cue indices over Layout.max_lines lines
    too_fast: list[int]  # cue indices over Layout.max_cps
    fallbacks: int  # cues whose context translation the guard found broken and replaced
    warnings: list[str]  # what the translation left to look at (an empty translation...)
    shortened: list[int] = field(default_factory=list)  # cues given a shorter translation
    names: dict[str, str] = field(default_factory=dict)  # each name's one rendering
    renamed: list[int] = field(default_factory=list)  # cues whose names were rewritten
    glossary_missing: list[tuple[int, str]] = field(default_factory=list)  # (cue, entry)


def load(jobs: list[Job], encoding: str | None = None) -> tuple[list[Loaded], list[Failure]]:
    """Read and plan each input, with the glossary.tsv beside it; a file (or its glossary)
    that cannot be read, or whose format is not the one its named output says, is a failure,
    not an exception."""
    loaded, failed = [], []
    for job in jobs:
        try:
            sub = read_subtitles(job.source, encoding)
            glossary = Glossary.beside(job.source)
        except SubctxError as problem:
            failed.append((job.source, str(problem)))
            continue
        # a file -o named must say the format the translation is written in (the input's,
        # known only now for an input whose extension is not a subtitle one)
        if job.named and (mismatch := format_mismatch(job.output, sub.format, job.source)):
            failed.append((job.source, mismatch))
            continue
        plan = plan_document(sub)
        loaded.append(Loaded(job, sub, plan, [*sub.warnings, *plan.warnings], glossary))
    return loaded, failed


def translate_files(loaded: list[Loaded], translator: Translator, options: DecodeOptions,
                    layout: Layout = DEFAULT_LAYOUT,
                    on_units_done: Callable[[int], None] | None = None,
                    on_written: Callable[[Written | None], None] | None = None,
                    fit: ReadingFit = DEFAULT_FIT, names: NameRule = DEFAULT_NAMES,
                    ) -> tuple[list[Written], list[Failure]]:
    """Translate the files together (their cues share batches) and write each translation
    atomically as soon as its file is complete, its cues over the layout's limits given
    shorter translations first where `fit` says (subctx.reading), then its names and glossary
    entries settled as `names` says (subctx.names; the glossary beside a film adds to
    `names.glossary`, which wins where both have an entry). `on_units_done(n)` counts
    translated units; `on_written(w)` follows every file (None when it could not be written)."""
    written: list[Written] = []
    failed: list[Failure] = []
    start = time.perf_counter()

    def document_done(doc: int, result: DocumentResult) -> None:
        item = loaded[doc]
        timings = [(c.start, c.end) for c in item.sub.cues]
        fitted = fit_reading_speed(result, timings, translator, options, layout, fit)
        rule = replace(names, glossary=item.glossary.merged(names.glossary))
        named = settle_names(result, translator, options, rule)
        restore_document(result)  # addresses and long numbers as the English has them
        cue_of = [unit.cue for unit in result.plan.units]
        try:
            lines = result.cue_lines(layout.width, layout.max_lines)
            atomic_write_text(item.job.output, item.sub.render(lines))
        except OSError as problem:
            failed.append((item.job.source, f"cannot write {item.job.output}: "
                                            f"{problem.strerror or problem}"))
            if on_written:
                on_written(None)
            return
        checks = readability(timings, lines, layout.max_lines, layout.max_cps)
        written.append(Written(item.job.source, item.job.output, len(item.sub.cues),
                               time.perf_counter() - start, checks.over_lines,
                               checks.too_fast, result.broken_fallbacks(), result.warnings,
                               fitted.shortened, named.renderings,
                               sorted({cue_of[u] for u in named.changed}),
                               [(cue_of[u], entry) for u, entry in named.missing]))
        if on_written:
            on_written(written[-1])

    translate_documents([item.plan for item in loaded], translator, options,
                        on_units_done=(lambda d, units: on_units_done(len(units)))
                        if on_units_done else None,
                        on_document_done=document_done)
    return written, failed
