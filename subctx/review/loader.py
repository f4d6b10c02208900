"""Open a film for review: read it, translate it (or read a translation), analyse choices."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from subctx.batch import ModelChoice
from subctx.bundle import Bundle
from subctx.contract import Translation
from subctx.decoding import DocumentResult, translate_documents
from subctx.errors import InputError
from subctx.formats import read_subtitles
from subctx.markup import split_tags
from subctx.names import DEFAULT_NAMES, Glossary, NameRule, forced_names, settle_names
from subctx.review.choices import ambiguous_words
from subctx.review.session import ReviewSession
from subctx.units import plan_document


def texts_from_translation(plan, translation_path: Path, encoding: str | None) -> list[str | None]:
    """Unit texts taken from an existing translation; None where its cue does not line up
    (different cue count, or a different number of dialogue turns)."""
    try:
        sub = read_subtitles(translation_path, encoding)
    except InputError as err:
        raise InputError(str(err), path=translation_path) from None
    texts: list[str | None] = [None] * len(plan.units)
    if len(sub.cues) != len(plan.layouts):
        raise InputError(f"it has {len(sub.cues)} cues, the English {len(plan.layouts)}; "
                         "they do not belong together", path=translation_path)
    for layout, cue in zip(plan.layouts, sub.cues, strict=True):
        units = layout.units
        marked = [split_tags(line) for line in cue.lines]
        if len(units) == 1:
            texts[units[0]] = " ".join(m.text for m in marked if m.text)
        elif len(units) == len(marked):
            for u, m in zip(units, marked, strict=True):
                texts[u] = m.text
    return texts


def open_session(source: Path, translation: Path | None, bundle: Bundle, choice: ModelChoice,
                 encoding: str | None, console: Console, names: NameRule = DEFAULT_NAMES
                 ) -> ReviewSession:
    """Read the film, translate what the given translation lacks (with the same service and
    options as `subctx translate`, names settled as `names` says with the glossary.tsv beside
    the film added, as there), and find the choices to review. The names' renderings are kept
    in the lines the review translates again."""
    sub = read_subtitles(source, encoding)
    rule = replace(names, glossary=Glossary.beside(source).merged(names.glossary))
    plan = plan_document(sub)
    engine = choice.translator(bundle)
    options = choice.options(bundle)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        console=console, transient=True)
    with progress:
        given = (texts_from_translation(plan, translation, encoding) if translation
                 else [None] * len(plan.units))
        missing = [u for u, t in enumerate(given) if t is None]
        texts = [t or "" for t in given]
        if missing:
            task = progress.add_task("translating", total=len(plan.units))
            [result] = translate_documents(
                [plan], engine, options, on_units_done=lambda d, u: progress.advance(task, len(u)))
            settle_names(result, engine, options, rule)
            for u in missing:
                texts[u] = result.texts()[u]
        # the renderings the film's lines settle on (a given translation is only read), and
        # the glossary's names wherever they are
        done = DocumentResult(plan, [Translation(t, 0.0) for t in texts], [])
        renderings = {**settle_names(done, None, options, rule).renderings,
                      **forced_names(rule.glossary)}
        session = ReviewSession(sub, plan, engine, options, texts, renderings, rule.glossary)
        ambiguous = [u for u, unit in enumerate(plan.units) if ambiguous_words(unit.text)]
        task = progress.add_task("finding choices to review", total=len(ambiguous))
        for u in ambiguous:
            session.analyze(u)
            progress.advance(task)
    return session
