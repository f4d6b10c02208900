"""WebVTT (.vtt) parsing (SubtitleFile.render writes it back byte for byte).

The header, NOTE, STYLE and REGION blocks, cue identifiers and timing lines with their cue
settings (`align:start position:10%`) are verbatim; a cue's text lines are its slot. Voice tags
(`<v Mary>`) at the start of a line are kept like any leading tag (subctx.markup).

Blocks are separated by blank lines, and, as WebVTT parsers do, a timing line also starts a new
block where a blank line is missing (a cue right after the `WEBVTT` line, cues one after the
other); a number alone on the line before such a timing line is the new cue's identifier, as in
SubRip (subctx.formats.srt).

A cue's lines are its text as a viewer reads it: character references (`&amp;`, `&lt;`,
`&nbsp;`, `&#39;`) unescaped, zero-width characters left out. A translated line is written
back with `&`, `<` and `>` escaped outside its tags; an untranslated cue is its original bytes.
"""

from __future__ import annotations

import html
import re

from subctx.errors import InputError
from subctx.formats.base import (
    Cue,
    Format,
    SubtitleFile,
    cue_timing,
    file_lines,
    strip_invisible,
)
from subctx.formats.timing import parse_vtt_timestamp, timing_match

_HEADER = re.compile(r"^\ufeff?WEBVTT(?:[ \t].*)?$")
_TIMING = re.compile(r"^\s*(?P<start>\S+)\s+-->\s+(?P<end>\S+)(?P<settings>.*)$")
_NUMBER = re.compile(r"^\s*\d+\s*$")
# the tags a cue's text may hold (WebVTT's, and the <font> that converted SubRip files bring)
_TAG = re.compile(r"</?(?:i|b|u|s|font|v|c|lang|ruby|rt)(?:[.\s][^<>]*)?>|<\d[\d:.]*>",
                  re.IGNORECASE)
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _starts_cue(line: str) -> bool:
    return "-->" in line and timing_match(line) is not None


def _blocks(lines: list[str]) -> list[list[int]]:
    """Indices of the lines of each block: blocks are separated by blank lines, and a timing
    line starts a new block unless it is the second line of one that has no timing yet (an
    identifier and its timing line)."""
    blocks: list[list[int]] = []
    current: list[int] = []
    for i, line in enumerate(lines):
        if not line.strip():
            if current:
                blocks.append(current)
                current = []
            continue
        if current and _starts_cue(line):
            own_id = (len(current) == 1 and current[0] != 0
                      and "-->" not in lines[current[0]])
            if not own_id:
                moved = []
                if len(current) >= 2 and _NUMBER.match(lines[current[-1]]):
                    moved = [current.pop()]  # the next cue's number, as in SubRip
                blocks.append(current)
                current = moved
        current.append(i)
    if current:
        blocks.append(current)
    return blocks


def _outside_tags(line: str, change) -> str:
    """`line` with `change` applied to its text between tags (the tags as they are)."""
    out, done = [], 0
    for tag in _TAG.finditer(line):
        out += [change(line[done:tag.start()]), tag.group(0)]
        done = tag.end()
    out.append(change(line[done:]))
    return "".join(out)


def unescape_text(line: str) -> str:
    """A line of cue text as read: character references unescaped outside tags."""
    return _outside_tags(line, html.unescape) if "&" in line else line


def escape_text(line: str) -> str:
    """A line of cue text as WebVTT writes it: `&`, `<` and `>` outside tags escaped."""
    return _outside_tags(line, lambda text: "".join(_ESCAPES.get(ch, ch) for ch in text))


def parse_vtt_text(text: str, encoding: str = "utf-8") -> SubtitleFile:
    """Parse decoded WebVTT text. Raises InputError when it is not WebVTT."""
    newline, raw_lines, lines = file_lines(text)
    if not _HEADER.match(lines[0]):
        raise InputError("not a WebVTT file (the first line is not 'WEBVTT')")
    cues: list[Cue] = []
    template: list[str | int] = []
    warnings: list[str] = []
    done = 0
    for block in _blocks(lines)[1:]:  # the first block is the header
        timing_at = next((k for k, i in enumerate(block) if "-->" in lines[i]), None)
        if timing_at is None or timing_at > 1 or lines[block[0]].startswith("NOTE"):
            continue  # NOTE, STYLE, REGION or junk: verbatim
        row = block[timing_at]
        match = _TIMING.match(lines[row])
        label = lines[block[0]].strip() if timing_at == 1 else str(len(cues) + 1)
        filled = block[timing_at + 1:]
        # the text as read, for translation (the slot keeps the bytes)
        text_lines = [t for t in (strip_invisible(unescape_text(lines[i])).rstrip()
                                  for i in filled) if t.strip()]
        start, end = cue_timing(label, lines[row],
                                parse_vtt_timestamp(match["start"]) if match else None,
                                parse_vtt_timestamp(match["end"]) if match else None,
                                bool(text_lines), warnings)
        first = filled[0] if filled else row + 1
        last = filled[-1] if filled else row
        template.append("".join(raw_lines[done:first]))
        raw = "".join(raw_lines[first:last + 1])
        stripped = raw.rstrip("\r\n")
        template += [len(cues), raw[len(stripped):]]
        done = last + 1
        cues.append(Cue(lines[block[0]].strip() if timing_at == 1 else None,
                        lines[row].rstrip(), start, end, text_lines, stripped))
    if not cues:
        raise InputError("a WebVTT file without cues")
    template.append("".join(raw_lines[done:]))
    return SubtitleFile(cues, encoding, newline, warnings, "vtt",
                        [p for p in template if p != ""], write_line=escape_text)


VTT = Format("vtt", (".vtt",), sniff=lambda head: head.startswith("WEBVTT"),
             parse=parse_vtt_text)
