"""What the review screen shows, as plain functions of a `ReviewSession`: no Textual here.

Row order and cells of the cue table, the flag cell, the detail pane's text, the preview of
changed lines, notices and the title lines. `detail_text` calls `session.analyze(unit)`, which
is cached once a line is analysed. Film text is shown verbatim: it goes into rich `Text`
objects, never through markup ("[inaudible]", "[/смеётся]" are words of the film).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from subctx.review.session import Change, ReviewSession


def clock(seconds: float | None) -> str:
    """mm:ss of a cue's start; '--:--' for an untimed unit (a sound annotation)."""
    if seconds is None:
        return "--:--"
    return f"{int(seconds // 60):02d}:{int(seconds % 60):02d}"


def unit_rows(session: ReviewSession) -> list[int]:
    """The units in table order: cue order, a cue's sound annotation (an untimed unit after
    all the sentences) before its words."""
    units = session.plan.units
    return sorted(range(len(units)), key=lambda u: (units[u].cue, units[u].start is not None, u))


def cue_numbers(session: ReviewSession) -> dict[int, str]:
    """Each unit's cue label as the file writes it (a number, or a WebVTT id such as 'intro'),
    its position where it has none."""
    return {u: session.sub.cues[unit.cue].number or str(unit.cue + 1)
            for u, unit in enumerate(session.plan.units)}


def flag_cell(session: ReviewSession, unit: int) -> Text:
    """⚑ a choice to review, ✓ a line a person decided, else blank."""
    review = session.reviews.get(unit)
    if review and review.flagged:
        return Text("⚑", style="bold yellow")
    if unit in session.accepted:
        return Text("✓", style="green")
    return Text(" ")


def row_cells(session: ReviewSession, unit: int, cue: str) -> tuple[Text, Text, str, Text, Text]:
    """A unit's row: flag, cue label, start time, English, Russian (the texts verbatim)."""
    entry = session.plan.units[unit]
    return (flag_cell(session, unit), Text(cue), clock(entry.start), Text(entry.text),
            russian_cell(session, unit))


def russian_cell(session: ReviewSession, unit: int) -> Text:
    """A unit's current Russian, verbatim."""
    return Text(session.texts[unit])


def detail_text(session: ReviewSession, unit: int) -> Text:
    """The detail pane: context lines, the English with its ambiguous words marked, the
    Russian, up to nine numbered alternatives, why the current line is not the top one, and
    the context words the model attended to."""
    review = session.analyze(unit)
    english = Text(session.plan.units[unit].text)
    for start, end, _ in review.ambiguous:
        english.stylize("bold reverse yellow", start, end)
    out = Text()
    ctx = session.contexts[unit]
    if ctx:
        for c in ctx:
            out.append("context  ", style="dim")
            out.append(f"{session.plan.units[c].text}  →  {session.texts[c]}\n", style="dim")
    else:
        out.append("context  (none: first line of a scene)\n", style="dim")
    out.append("English  ", style="bold")
    out.append(english)
    kinds = sorted({k for _, _, k in review.ambiguous})
    if kinds:
        out.append(f"   [{', '.join(kinds)}]", style="yellow")
    out.append("\nRussian  ", style="bold")
    out.append(session.texts[unit] + "\n")
    for i, alt in enumerate(review.alternatives[:9], 1):
        chosen = alt.text == session.texts[unit]
        out.append(f"  {i} ", style="bold cyan")
        out.append(f"{alt.share:5.1%} ", style="cyan")
        out.append(alt.text, style="bold" if chosen else "")
        out.append(f"  ({alt.origin})\n" if not chosen else "  ◀ current\n", style="dim")
    top = review.alternatives[0].text if review.alternatives else session.texts[unit]
    if top != session.texts[unit]:
        why = ("your line" if unit in session.accepted else
               "beam search picks by probability per word (with a length penalty), this "
               "list ranks whole lines")
        out.append(f"◀ current is not the most probable line: {why}\n", style="dim")
    if review.hint:
        words = ", ".join(f"{w} ({s:.0%})" for w, s in review.hint)
        out.append(f"attended in context: {words}\n", style="magenta")
    return out


DECIDED = {"edit": "edited by you", "pick": "picked by you", "accept": "accepted by you",
           "speaker": "speaker set by you"}


def decided(session: ReviewSession, unit: int) -> str:
    """How a person decided a line, from the review log (an undo takes its entry back):
    'edited by you', 'picked by you'..., else 'yours' (as where the log does not say)."""
    verbs: list[str] = []
    for entry in session.log:
        if entry.unit == unit:
            verbs = verbs[:-1] if entry.action == "undo" else [*verbs, entry.action.split()[0]]
    return next((DECIDED[v] for v in reversed(verbs) if v in DECIDED), "yours")


def changes_text(changes: list[Change], cue_of: dict[int, str],
                 kept: list[tuple[int, str, str]]) -> Text:
    """The preview of re-translated lines (before in red, after in green) and of the person's
    lines left alone, given as (unit, text, how it was decided)."""
    out = Text()
    out.append(f"{len(changes)} later line(s) of this scene changed:", style="bold")
    out.append("\n\n")
    for c in changes:
        out.append(f"cue {cue_of[c.unit]}: ")
        out.append(f"- {c.before}\n", style="red")
        out.append(" " * (len(cue_of[c.unit]) + 6))
        out.append(f"+ {c.after}\n", style="green")
    for unit, text, how in kept:
        out.append(f"cue {cue_of[unit]}: ")
        out.append(f"kept ({how})", style="bold")
        out.append(f" {text}\n")
    out.rstrip()
    return out


def save_error(output: Path, problem: OSError) -> str:
    """One line for a save that failed: the file it was writing (the subtitles or the review
    log beside them) and the operating system's reason."""
    log = output.with_suffix(".review.json")
    failed = Path(problem.filename or output).name
    path = log if failed == log.name or failed.startswith(f".{log.name}.") else output
    return f"could not save {path}: {problem.strerror or problem}"


def title(name: str, flagged: int) -> str:
    """The header's title: the film and how many choices are left to review."""
    return f"{name} — {flagged} choice{'s' if flagged != 1 else ''} to review"


def sub_title(output: str, unsaved: bool, status: str) -> str:
    """The header's sub-title: the output file, '[unsaved]', and the last status word."""
    return f"{output}{' [unsaved]' if unsaved else ''}{'  ' + status if status else ''}"
