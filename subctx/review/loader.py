"""Open a film for review: read it, translate it (or read a translation), analyse choices."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
from subctx.review.session import ReviewSession, SavedReview, read_saved_review
from subctx.units import CueLayout, DocumentPlan, plan_document, read_cue


def translated_cues(plan: DocumentPlan, translation_path: Path, encoding: str | None
                    ) -> list[list[str]]:
    """The lines of each cue of an existing translation of the film."""
    try:
        sub = read_subtitles(translation_path, encoding)
    except InputError as err:
        raise InputError(str(err), path=translation_path) from None
    if len(sub.cues) != len(plan.layouts):
        raise InputError(f"it has {len(sub.cues)} cues, the English {len(plan.layouts)}; "
                         "they do not belong together", path=translation_path)
    return [list(cue.lines) for cue in sub.cues]


@dataclass
class Reading:
    """What an existing translation gives a review: unit texts (None: translate it), the
    lines a person wrote outside the review or the review made theirs, and the cues whose
    lines are kept as written (they do not split into the English cue's turns)."""

    texts: list[str | None]
    yours: set[int] = field(default_factory=set)
    as_written: dict[int, list[str]] = field(default_factory=dict)


def read_translation(plan: DocumentPlan, cues: list[list[str]],
                     saved: SavedReview | None = None) -> Reading:
    """Unit texts from a translation's cues. A cue as the last save wrote it takes the saved
    texts (exact, whatever the layout); one changed since (edited in another program) is
    read back turn by turn and its lines become a person's (never translated again); one
    that does not split into its turns is kept as written. Without a saved review the cues
    are read turn by turn, and the units of a cue that does not split are translated."""
    reading = Reading([None] * len(plan.units))
    for index, (layout, lines) in enumerate(zip(plan.layouts, cues, strict=True)):
        if saved is not None and lines == saved.cue_lines(plan, index):
            for u in layout.units:
                reading.texts[u] = saved.texts[u]
            if index in saved.as_written:
                reading.as_written[index] = lines
            continue
        found = read_cue(layout, lines)
        if saved is not None:  # changed since the review saved it: a person's lines
            reading.yours.update(layout.units)
            if found is None:
                reading.as_written[index] = lines
                found = _whole_cue(layout, lines)
        for u, text in (found or {}).items():
            reading.texts[u] = text
    return reading


def _whole_cue(layout: CueLayout, lines: list[str]) -> dict[int, str]:
    """A cue kept as written, shown (and given as context) as one text on its first unit."""
    words = " ".join(m.text for m in map(split_tags, lines) if m.text)
    units = layout.units
    return {u: (words if i == 0 else "") for i, u in enumerate(units)}


def open_session(source: Path, translation: Path | None, bundle: Bundle, choice: ModelChoice,
                 encoding: str | None, console: Console, names: NameRule = DEFAULT_NAMES,
                 log: Path | None = None) -> ReviewSession:
    """Read the film, translate what the given translation lacks (with the same service and
    options as `subctx translate`, names settled as `names` says with the glossary.tsv beside
    the film added, as there), and find the choices to review. The names' renderings are kept
    in the lines the review translates again. `log`: the review log of an earlier review of
    the translation, whose last save says which lines are as it wrote them (`read_translation`;
    `ReviewSession.resume` takes up its decisions)."""
    sub = read_subtitles(source, encoding)
    rule = replace(names, glossary=Glossary.beside(source).merged(names.glossary))
    plan = plan_document(sub)
    engine = choice.translator(bundle)
    options = choice.options(bundle)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        console=console, transient=True)
    with progress:
        saved = read_saved_review(log, plan) if translation and log else None
        # the translation's own encoding (subctx writes UTF-8), not the English file's
        reading = (read_translation(plan, translated_cues(plan, translation, None), saved)
                   if translation else Reading([None] * len(plan.units)))
        given = reading.texts
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
        session = ReviewSession(sub, plan, engine, options, texts, renderings, rule.glossary,
                                reading.as_written)
        session.accepted |= reading.yours
        ambiguous = [u for u, unit in enumerate(plan.units) if ambiguous_words(unit.text)]
        task = progress.add_task("finding choices to review", total=len(ambiguous))
        for u in ambiguous:
            session.analyze(u)
            progress.advance(task)
    return session
