"""What the review screen shows, as plain functions of a `ReviewSession`: no Textual here.

Row order and cells of the cue table, the flag cell, the detail pane's text and the title
lines. `detail_text` calls `session.analyze(unit)`, which is cached once a line is analysed.
"""

from __future__ import annotations

from rich.text import Text

from subctx.review.session import ReviewSession


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


def cue_numbers(session: ReviewSession) -> dict[int, int]:
    """Each unit's cue number as the file writes it (its position where it has none)."""
    return {u: int(session.sub.cues[unit.cue].number or unit.cue + 1)
            for u, unit in enumerate(session.plan.units)}


def flag_cell(session: ReviewSession, unit: int) -> Text:
    """⚑ a choice to review, ✓ a line a person decided, else blank."""
    review = session.reviews.get(unit)
    if review and review.flagged:
        return Text("⚑", style="bold yellow")
    if unit in session.accepted:
        return Text("✓", style="green")
    return Text(" ")


def row_cells(session: ReviewSession, unit: int, cue: int) -> tuple[Text, str, str, str, str]:
    """A unit's row: flag, cue number, start time, English, Russian."""
    entry = session.plan.units[unit]
    return (flag_cell(session, unit), str(cue), clock(entry.start), entry.text,
            session.texts[unit])


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


def title(name: str, flagged: int) -> str:
    """The header's title: the film and how many choices are left to review."""
    return f"{name} — {flagged} choice{'s' if flagged != 1 else ''} to review"


def sub_title(output: str, unsaved: bool, status: str) -> str:
    """The header's sub-title: the output file, '[unsaved]', and the last status word."""
    return f"{output}{' [unsaved]' if unsaved else ''}{'  ' + status if status else ''}"
