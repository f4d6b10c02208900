"""Formatting that must survive translation: tags, sound/music annotations, dialogue dashes."""

from __future__ import annotations

import re
from dataclasses import dataclass

# <i> <b> <u> <s> <font ...> and their closers, WebVTT's <v Mary> <c.yellow> <lang en> <ruby>
# <rt> and inline timestamps <00:01.000>, and ASS override blocks such as {\an8}.
_TAG = (r"(?:</?(?:i|b|u|s|font|v|c|lang|ruby|rt)(?:[.\s][^<>]*)?>|<\d[\d:.]*>"
        r"|\{\\[^{}]*\})")
_LEAD = re.compile(rf"^(?:\s*{_TAG})+\s*", re.IGNORECASE)
_TRAIL = re.compile(rf"\s*(?:{_TAG}\s*)+$", re.IGNORECASE)
_ANY_TAG = re.compile(_TAG, re.IGNORECASE)
_DASH = re.compile(r"^([-\u2010\u2012\u2013\u2014]+\s*)(?=\S)")
_BRACKETS = {"[": "]", "(": ")"}
_NOTES = "\u266a\u266b"


@dataclass(frozen=True)
class MarkedLine:
    """A subtitle line split into leading tags, plain text and trailing tags."""

    lead: str
    dash: str
    text: str
    trail: str
    inline_tags: int  # tags found (and removed) inside the text


def split_tags(line: str) -> MarkedLine:
    """Split off leading/trailing tags and a dialogue dash (before or after the opening tags)."""
    lead_match = _LEAD.match(line)
    lead = lead_match.group(0) if lead_match else ""
    rest = line[len(lead):]
    dash, rest = split_dash(rest)
    if dash:
        more = _LEAD.match(rest)
        if more:
            lead += more.group(0)
            rest = rest[more.end():]
    trail_match = _TRAIL.search(rest)
    trail = trail_match.group(0) if trail_match else ""
    core = rest[: len(rest) - len(trail)] if trail else rest
    inline = len(_ANY_TAG.findall(core))
    core = re.sub(r"\s{2,}", " ", _ANY_TAG.sub("", core)).strip()
    return MarkedLine(lead.strip(), dash, core, trail.strip(), inline)


_HTML_TAG = re.compile(r"<(/?)(i|b|u|s|font)(?:\s[^<>]*)?>", re.IGNORECASE)


def self_contained(lead: str, trail: str) -> bool:
    """True when the tags a line opens (lead) are exactly the ones it closes (trail). ASS
    override blocks ({\\i1} ... {\\i0}) are state switches, not pairs: a line with one in its
    lead or trail is never called self-contained."""
    if "{\\" in lead or "{\\" in trail:
        return False
    opened = [m.group(2).lower() for m in _HTML_TAG.finditer(lead) if not m.group(1)]
    closed = [m.group(2).lower() for m in _HTML_TAG.finditer(trail) if m.group(1)]
    return sorted(opened) == sorted(closed) and "</" not in lead and \
        not any(not m.group(1) for m in _HTML_TAG.finditer(trail))


def balance_tags(lines: list[str]) -> tuple[list[str], int]:
    """Drop every HTML-style tag of a cue that has no partner (an opener never closed, a closer
    never opened), so that a cue is never left with an unbalanced tag. Returns the lines and
    how many tags were dropped."""
    stack: list[tuple[str, int, int, int]] = []  # (name, line, start, end)
    unmatched: set[tuple[int, int, int]] = set()
    for n, line in enumerate(lines):
        for m in _HTML_TAG.finditer(line):
            name = m.group(2).lower()
            if not m.group(1):
                stack.append((name, n, m.start(), m.end()))
            elif stack and stack[-1][0] == name:
                stack.pop()
            else:
                unmatched.add((n, m.start(), m.end()))
    unmatched |= {(n, a, b) for _, n, a, b in stack}
    if not unmatched:
        return lines, 0
    out = []
    for n, line in enumerate(lines):
        for _, a, b in sorted((u for u in unmatched if u[0] == n), reverse=True):
            line = (line[:a] + line[b:]).strip()
        out.append(re.sub(r"\s{2,}", " ", line))
    return out, len(unmatched)


def split_dash(text: str) -> tuple[str, str]:
    """'- Hello.' -> ('- ', 'Hello.'); text without a dialogue dash -> ('', text)."""
    match = _DASH.match(text)
    if not match:
        return "", text
    return match.group(1), text[match.end():]


@dataclass(frozen=True)
class Annotated:
    """Text with an enclosing sound-cue bracket or music notes taken off."""

    before: str
    core: str
    after: str

    def restore(self, translated: str) -> str:
        return f"{self.before}{translated}{self.after}"


# a speaker label in capitals: 'JOHN:', 'MARY ANN:', 'DR. HOUSE:' (kept verbatim)
_LABEL = re.compile(r"^((?:[A-Z][A-Z0-9'.]*)(?:[ -][A-Z][A-Z0-9'.]*){0,3}:\s+)(?=\S)")
# a sound or manner annotation at the start of a turn: '(sighs) ', '[door slams] '
_LEADING_NOTE = re.compile(r"^([\[(])([^\[\]()]{1,60})([\])])\s*(?=\S)")


@dataclass(frozen=True)
class Prefix:
    """What stands before the words of a turn: a speaker label and a sound annotation."""

    label: str = ""
    note: Annotated | None = None


def split_prefix(text: str) -> tuple[Prefix, str]:
    """'JOHN: (sighs) I know.' -> (Prefix('JOHN: ', ('(', 'sighs', ')')), 'I know.').
    A bracket that encloses the whole text is not a prefix (see split_annotation)."""
    label = ""
    match = _LABEL.match(text)
    if match:
        label, text = match.group(1), text[match.end():]
    note = None
    match = _LEADING_NOTE.match(text)
    if match and _BRACKETS[match.group(1)] == match.group(3):
        note = Annotated(match.group(1), match.group(2).strip(), match.group(3))
        text = text[match.end():]
    return Prefix(label, note), text


def is_sound_note(annotated: Annotated) -> bool:
    """A whole text in brackets ('[door slams]', '(laughing)'), not music notes."""
    return annotated.before in _BRACKETS


def split_annotation(text: str) -> Annotated:
    """'[door slams]' -> ('[', 'door slams', ']'); '♪ la la ♪' -> ('♪ ', 'la la', ' ♪')."""
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] in _BRACKETS and stripped[-1] == _BRACKETS[stripped[0]]:
        inner = stripped[1:-1]
        if _BRACKETS[stripped[0]] not in inner[:-1] or inner.count(stripped[0]) == 0:
            return Annotated(stripped[0], inner.strip(), stripped[-1])
    match = re.match(rf"^([{_NOTES}]+\s*)(.*?)(\s*[{_NOTES}]+)?$", stripped)
    if match:
        return Annotated(match.group(1), match.group(2).strip(), match.group(3) or "")
    return Annotated("", stripped, "")


# the dress of a lyric line: tags and music notes (one at a time: no backtracking over a long
# run of notes) with the spaces between them
_DRESS_LEAD = re.compile(rf"^(?:\s*(?:{_TAG}|[{_NOTES}]))+\s*", re.IGNORECASE)
_DRESS_TRAIL = re.compile(rf"\s*(?:(?:{_TAG}|[{_NOTES}])\s*)+$", re.IGNORECASE)


@dataclass(frozen=True)
class Dressed:
    """A line split into its words and what dresses them: the tags, music notes and spaces
    before and after the words, verbatim ('<i>♪ ' / ' ♪</i>', '♪ <i>' / '</i> ♪')."""

    lead: str
    text: str  # the words, inline tags removed
    trail: str
    inline_tags: int

    @property
    def sung(self) -> bool:
        """Whether music notes dress the line (a lyric line)."""
        return has_notes(self.lead + self.trail)


def has_notes(text: str) -> bool:
    return any(c in _NOTES for c in text)


def split_dressing(line: str) -> Dressed:
    """'<i>♪ Hello darkness ♪</i>' -> ('<i>♪ ', 'Hello darkness', ' ♪</i>'); a line of notes
    alone is all lead."""
    match = _DRESS_LEAD.match(line)
    lead = match.group(0) if match else ""
    rest = line[len(lead):]
    match = _DRESS_TRAIL.search(rest)
    trail = match.group(0) if match else ""
    core = rest[: len(rest) - len(trail)]
    inline = len(_ANY_TAG.findall(core))
    core = re.sub(r"\s{2,}", " ", _ANY_TAG.sub("", core)).strip()
    return Dressed(lead, core, trail, inline)


def visible_length(text: str) -> int:
    """Characters a viewer sees: tags and override blocks not counted."""
    return len(_ANY_TAG.sub("", text))


def join_sung(first: str, second: str) -> str:
    """Join two lines of one turn. Music notes where they meet dress the lines, they are not
    words: '♪ Hello darkness, ♪' + '♪ my old friend ♪' -> '♪ Hello darkness, my old friend ♪'."""
    end, start = first.rstrip(), second.lstrip()
    if (end and end[-1] in _NOTES) or (start and start[0] in _NOTES):
        first, second = end.rstrip(_NOTES + " \t"), start.lstrip(_NOTES + " \t")
    return f"{first} {second}".strip()
