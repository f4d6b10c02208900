"""Cues to translation units and back.

A unit is what the model translates in one go: a cue's text, or one speaker turn of a dialogue
cue, without tags, dashes, brackets, music notes, speaker labels or sound annotations. Each unit
inherits its cue's timing, so the context rule applies to units unchanged (turns of one cue
overlap, hence are always context).

Lyrics ('♪ Hello darkness, my old friend ♪' / '♪ I've come to talk with you again ♪') are one
unit without their notes (a sung sentence often runs across the lines); the translation is broken
into as many lines as the cue had, each dressed with that line's notes and tags.

Speaker labels ('JOHN:') are kept verbatim. Sound annotations ('[door slams]', '(sighs)' at the
start of a turn, or a whole cue in brackets) are translated as short phrases in their brackets,
as units of their own that come after the document's sentences and carry no timing: they get
no context and are nobody's context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from subctx.formats import Cue, SubtitleFile
from subctx.markup import (
    Annotated,
    Prefix,
    balance_tags,
    has_notes,
    is_sound_note,
    join_sung,
    self_contained,
    split_annotation,
    split_dash,
    split_dressing,
    split_prefix,
    split_tags,
    visible_length,
)
from subctx.transliterate import KNOWN, WOMEN
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH, wrap_text

MAX_UNIT_CHARS = 400
_LONE_I = re.compile(r"\bi\b")
_WORD = re.compile(r"[^\W\d_]+")
_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?\u2026]\s+)[^\W\d_]")
_POSITION = re.compile(r"\{\\[^{}]*\}")
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class Unit:
    """One piece of text for the model, with the timing of its cue."""

    text: str
    start: float | None
    end: float | None
    cue: int


@dataclass
class Turn:
    """A speaker turn (or the whole cue) and how to dress its translation."""

    lead: str
    dash: str
    annotation: Annotated
    trail: str
    units: list[int] = field(default_factory=list)
    prefix: Prefix = field(default_factory=Prefix)
    note_unit: int | None = None  # the unit translating prefix.note
    capitals: bool = False  # its words were all in capitals (SDH): so is the translation
    note_capitals: bool = False  # and its sound note's


@dataclass
class Lyric:
    """A lyric cue's lines: how each line with words is dressed (the tags, notes and spaces
    before and after its words, verbatim), and the lines of notes alone before and after them."""

    dress: list[tuple[str, str]]
    head: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)

    def lines(self, words: list[str]) -> list[str]:
        """Dress the lines of a translation. Line i wears the dress of the cue's line i; a
        translation with more lines gives the extra ones the dress of a middle line (the
        lead of a line after the first, the trail of one before the last), so that
        '♪ a ♪' / '♪ b ♪' and '♪ a' / 'b ♪' both keep their pattern; fewer lines end with the
        last line's trail."""
        n, m = len(self.dress), len(words)
        out = []
        for i, text in enumerate(words):
            lead = self.dress[min(i, n - 1)][0]
            trail = self.dress[-1][1] if i == m - 1 else self.dress[min(i, max(n - 2, 0))][1]
            out.append(f"{lead}{text}{trail}")
        return [*self.head, *out, *self.tail]


@dataclass
class CueLayout:
    """How to rebuild a cue's lines around the translations of its units."""

    original: list[str]
    position: str
    dialogue: bool  # one output line per turn: dialogue turns, or lines styled one by one
    per_line_tags: bool
    turns: list[Turn]
    lyric: Lyric | None = None  # a lyric: one turn, its translation wrapped into dressed lines

    @property
    def units(self) -> list[int]:
        return [u for turn in self.turns
                for u in ([turn.note_unit] if turn.note_unit is not None else []) + turn.units]


@dataclass
class DocumentPlan:
    layouts: list[CueLayout]
    units: list[Unit]
    warnings: list[str]


def _chunks(text: str, limit: int) -> list[str]:
    """Split an over-long text at sentence ends (or, failing that, between words)."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if pieces and len(pieces[-1]) + 1 + len(sentence) <= limit:
            pieces[-1] = f"{pieces[-1]} {sentence}"
        elif sentence:
            pieces.append(sentence)
    return pieces


def _lyric(lines: list[str]) -> tuple[Lyric, str, int] | None:
    """A cue of sung lines: the dress of its lines, its words and the inline tags dropped; None
    unless notes dress some line and the lines with words are together (notes alone may stand
    before or after them)."""
    dressed = [split_dressing(line) for line in lines]
    worded = [i for i, d in enumerate(dressed) if d.text]
    if not worded or not any(d.sung for d in dressed) or \
            worded != list(range(worded[0], worded[-1] + 1)):
        return None
    sung = [dressed[i] for i in worded]
    lyric = Lyric([(d.lead, d.trail) for d in sung], lines[: worded[0]], lines[worded[-1] + 1:])
    return lyric, " ".join(d.text for d in sung), sum(d.inline_tags for d in sung)


def _sung_and_spoken(lines: list[str]) -> bool:
    """A line sung whole ('♪ Happy birthday to you ♪') next to one spoken ('Thank you!'): two
    utterances, translated line by line like lines styled one by one."""
    dressed = [split_dressing(line) for line in lines]
    return (any(has_notes(d.lead) and has_notes(d.trail) for d in dressed)
            and any(d.text and not d.sung for d in dressed))


def _layout_cue(cue: Cue) -> tuple[CueLayout, list[str], int]:
    """Return the layout, the texts of its turns and the number of inline tags dropped."""
    marked = [split_tags(line) for line in cue.lines]
    position = ""
    leads = []
    for m in marked:
        found = _POSITION.findall(m.lead)
        position = position or "".join(found)
        leads.append(_POSITION.sub("", m.lead))
    trails = [m.trail for m in marked]
    dropped = sum(m.inline_tags for m in marked)
    dashes = [(m.dash, m.text) for m in marked]
    # turns: a dash on a later line, or a speaker label on every line ('JOHN: ...' / 'MARY: ...')
    labelled = len(marked) >= 2 and all(split_prefix(m.text)[0].label for m in marked)
    dialogue = len(marked) >= 2 and (any(dash for dash, _ in dashes[1:]) or labelled)
    # lines styled one by one, not alike ('<i>Previously:</i>' / 'We lost the keys.'): each
    # line is translated on its own so that its tags stay on it
    styled_lines = (not dialogue and len(marked) >= 2
                    and all(self_contained(lead, trail) for lead, trail in zip(leads, trails,
                                                                                strict=True))
                    and (len({(lead, trail) for lead, trail in zip(leads, trails, strict=True)})
                         > 1 or _sung_and_spoken(cue.lines)))

    turns: list[Turn] = []
    turn_texts: list[str] = []
    per_line = False
    # a lyric: one turn whose lines keep their own notes and tags (the first line's dress holds
    # a position block); a dialogue dash or lines styled one by one take the paths below
    sung = (None if dialogue or styled_lines or any(dash for dash, _ in dashes)
            else _lyric(list(cue.lines)))
    lyric: Lyric | None = None
    if sung:
        lyric, text, dropped = sung
        position = ""
        turns.append(Turn("", "", Annotated("", "", ""), ""))
        turn_texts.append(text)
    elif styled_lines:
        for i, (dash, body) in enumerate(dashes):
            turns.append(Turn(leads[i], dash, Annotated("", "", ""), trails[i]))
            turn_texts.append(body)
    elif dialogue:
        for i, (dash, body) in enumerate(dashes):
            if i == 0 or dash or labelled:
                turns.append(Turn(leads[i], dash, Annotated("", "", ""), trails[i]))
                turn_texts.append(body)
            else:
                turns[-1].trail = trails[i]
                turn_texts[-1] = join_sung(turn_texts[-1], body)
    else:
        per_line = len(marked) > 1 and len(set(leads)) == 1 and len(set(trails)) == 1
        lead = leads[0] if marked else ""
        trail = trails[-1] if marked else ""
        if not per_line:
            dropped += sum(1 for x in leads[1:] if x) + sum(1 for x in trails[:-1] if x)
        turns.append(Turn(lead, dashes[0][0] if marked else "", Annotated("", "", ""), trail))
        text = ""
        for _, body in dashes:
            text = join_sung(text, body)
        turn_texts.append(text)
    for turn, text in zip(turns, turn_texts, strict=True):
        turn.prefix, text = split_prefix(text)
        annotation = split_annotation(text)
        if is_sound_note(annotation) and turn.prefix.note is None:
            # a whole turn in brackets: a sound annotation, translated as one
            turn.prefix, annotation = Prefix(turn.prefix.label, annotation), Annotated("", "", "")
        turn.annotation = annotation
    layout = CueLayout(list(cue.lines), position, dialogue or styled_lines, per_line, turns,
                       lyric)
    return layout, [t.annotation.core for t in turns], dropped


def plan_document(sub: SubtitleFile, max_unit_chars: int = MAX_UNIT_CHARS) -> DocumentPlan:
    """Turn a parsed file into translation units plus the layouts to rebuild every cue."""
    layouts: list[CueLayout] = []
    units: list[Unit] = []
    warnings: list[str] = []
    notes: list[tuple[Turn, int]] = []
    names = _names_written(sub)  # what a line in capitals writes in capitals for a name
    for index, cue in enumerate(sub.cues):
        layout, texts, dropped = _layout_cue(cue)
        label = cue.number or str(index + 1)
        if balance_tags(list(cue.lines))[1]:
            warnings.append(f"cue {label}: unbalanced formatting tags in the input; the "
                            "translation keeps only the balanced ones")
        if dropped:
            warnings.append(f"cue {label}: {dropped} formatting tag(s) inside the text "
                            "were dropped")
        for turn, text in zip(layout.turns, texts, strict=True):
            if turn.prefix.note is not None and _LETTER.search(turn.prefix.note.core):
                notes.append((turn, index))
            if not _LETTER.search(text):
                continue  # nothing to translate: music notes, '...', numbers
            turn.capitals = all_capitals(text)
            text = sentence_case(text, names) if turn.capitals else text
            pieces = [text] if len(text) <= max_unit_chars else _chunks(text, max_unit_chars)
            if len(pieces) > 1:
                warnings.append(f"cue {label}: {len(text)} characters; translated in "
                                f"{len(pieces)} pieces")
            for piece in pieces:
                turn.units.append(len(units))
                units.append(Unit(piece, cue.start, cue.end, index))
        layouts.append(layout)
    for turn, index in notes:  # after every sentence, untimed: outside every context chain
        note = turn.prefix.note.core  # type: ignore[union-attr]
        turn.note_unit, turn.note_capitals = len(units), all_capitals(note)
        units.append(Unit(sentence_case(note, names) if turn.note_capitals else note, None,
                          None, index))
    return DocumentPlan(layouts, units, warnings)


def all_capitals(text: str) -> bool:
    """Words written all in capitals ('WHERE ARE YOU GOING?', '[MUSIC PLAYING]'), as
    subtitles for the deaf write them: a model reads them as rare pieces, so they are
    translated in sentence case and the translation is written in capitals."""
    cased = [c for c in text if c.isupper() or c.islower()]
    return len(cased) >= 2 and all(c.isupper() for c in cased)


def sentence_case(text: str, names: frozenset[str] = frozenset()) -> str:
    """'WHERE ARE YOU, BOB? I'M HERE.' -> "Where are you, Bob? I'm here." (`names`: lowercase
    words written as names)."""
    lowered = _LONE_I.sub("I", text.lower())
    lowered = _WORD.sub(lambda m: m.group(0).capitalize() if m.group(0) in names
                        else m.group(0), lowered)
    return _SENTENCE_START.sub(lambda m: m.group(0).upper(), lowered)


# first names that are also common words: not taken for names in a line in capitals
_NAME_WORDS = frozenset({"rose", "grace", "jack", "will", "mark", "bill", "hope", "joy", "faith",
                         "amber"})


def _names_written(sub: SubtitleFile) -> frozenset[str]:
    """Lowercase words a line in capitals should write as names: those the file writes with a
    capital inside a sentence in lines that are not in capitals, and common English first
    names (subctx.transliterate) that are not also common words."""
    found: set[str] = set()
    for cue in sub.cues:
        for line in cue.lines:
            text = split_tags(line).text
            if all_capitals(text):
                continue
            for sentence in _SENTENCE_END.split(text):
                found.update(w.lower() for w in _CAPITALISED.findall(sentence)[1:]
                             if w[1:].islower())
    return frozenset(found | ((KNOWN.keys() | WOMEN) - _NAME_WORDS))


def _turn_lines(turn: Turn, text: str, width: int) -> list[str]:
    """A dialogue turn's lines: its dash and tags around its text, broken into balanced
    lines where it is over `width`."""
    room = max(width - visible_length(turn.lead + turn.dash + turn.trail), 1)
    wrapped = wrap_text(text, room, 1) or [""]
    wrapped[0] = f"{turn.lead}{turn.dash}{wrapped[0]}"
    wrapped[-1] = f"{wrapped[-1]}{turn.trail}"
    return wrapped


def read_cue(layout: CueLayout, lines: list[str]) -> dict[int, str] | None:
    """The unit translations a translated cue holds, the inverse of `render_cue`: its lines
    laid out as the English cue was (labels, sound notes, dashes, tags, brackets and music
    notes taken off), turn by turn; a turn translated in several pieces has its sentences
    spread over them. None where the lines do not line up with the English turns (a dialogue
    cue rewritten as one line)."""
    if not layout.units:
        return {}
    theirs, texts, _ = _layout_cue(Cue(None, "", None, None, list(lines)))
    if len(theirs.turns) != len(layout.turns):
        return None
    found: dict[int, str] = {}
    for ours, turn, text in zip(layout.turns, theirs.turns, texts, strict=True):
        if ours.note_unit is not None:
            if turn.prefix.note is None:
                return None
            found[ours.note_unit] = turn.prefix.note.core
        if ours.units:
            found |= dict(zip(ours.units, _spread(text, len(ours.units)), strict=True))
    return found


def _spread(text: str, pieces: int) -> list[str]:
    """A turn's translation over the units it was translated in: its sentences in order, as
    evenly as they come (a piece may be empty)."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s] or [""]
    out: list[list[str]] = [[] for _ in range(pieces)]
    for i, sentence in enumerate(sentences):
        out[i * pieces // len(sentences)].append(sentence)
    return [" ".join(part) for part in out]

def _written(translation: str) -> str:
    """A translation as cue text: its whitespace, line breaks and line separators (a model's, or
    a reviewer's edit) one space, the layout breaks the lines; '-->' (a timing line to SubRip and
    WebVTT readers, not allowed in WebVTT text) an arrow."""
    return " ".join(translation.split()).replace("-->", "\u2192")


def render_cues(plan: DocumentPlan, translations: list[str], width: int = DEFAULT_WIDTH,
                max_lines: int = DEFAULT_MAX_LINES) -> list[list[str]]:
    """Every cue's lines, from the document's unit translations."""
    return [render_cue(layout, translations, width, max_lines) for layout in plan.layouts]


def render_cue(
    layout: CueLayout, translations: list[str], width: int = DEFAULT_WIDTH,
    max_lines: int = DEFAULT_MAX_LINES,
) -> list[str]:
    """Rebuild a cue's lines; `translations` holds the document's unit translations."""
    if not layout.units:
        return list(layout.original)

    def turn_text(turn: Turn) -> str:
        text = _written(" ".join(translations[u] for u in turn.units))
        text = text.upper() if turn.capitals else text
        if not text:  # nothing to translate, or an empty translation: the English stays
            body = turn.annotation.restore(turn.annotation.core)
        else:
            # dialogue dashes are layout, put back below; a model that writes its own would
            # double them ("- - Нет.")
            body = turn.annotation.restore(split_dash(text)[1])
        note = turn.prefix.note
        if note is not None:
            said = (translations[turn.note_unit] if turn.note_unit is not None else note.core)
            said = said.upper() if turn.note_capitals else said
            inner = _written(said).strip("[]()").strip() or note.core
            body = f"{note.restore(inner)} {body}".strip()
        return f"{turn.prefix.label}{body}"

    if layout.lyric:
        lyric = layout.lyric
        room = width - max(visible_length(lead + trail) for lead, trail in lyric.dress)
        words = wrap_text(turn_text(layout.turns[0]), max(room, 1), max_lines,
                          min_lines=len(lyric.dress))
        lines = lyric.lines(words)
    elif layout.dialogue:  # a line per turn, more where a turn is over the width
        lines = [line for t in layout.turns for line in _turn_lines(t, turn_text(t), width)]
    else:
        turn = layout.turns[0]
        wrapped = wrap_text(turn_text(turn), width, max_lines) or [""]
        wrapped[0] = f"{turn.dash}{wrapped[0]}"
        if layout.per_line_tags:
            lines = [f"{turn.lead}{line}{turn.trail}" for line in wrapped]
        else:
            lines = wrapped
            lines[0] = f"{turn.lead}{lines[0]}"
            lines[-1] = f"{lines[-1]}{turn.trail}"
    if lines:
        lines[0] = f"{layout.position}{lines[0]}"
    # never a blank line (it would end the cue for every reader) nor trailing spaces (readers
    # strip them): what is written is what readers read
    lines = [line.rstrip() for line in balance_tags(lines)[0] if line.strip()]
    return lines or list(layout.original)
