"""WebVTT (.vtt) parsing (SubtitleFile.render writes it back byte for byte).

The header, NOTE, STYLE and REGION blocks, cue identifiers and timing lines with their cue
settings (`align:start position:10%`) are verbatim; a cue's text lines are its slot. Voice tags
(`<v Mary>`) at the start of a line are kept like any leading tag (subctx.markup).
"""

from __future__ import annotations

import re

from subctx.errors import InputError
from subctx.formats.base import Cue, Format, SubtitleFile, cue_timing, file_lines
from subctx.formats.timing import parse_vtt_timestamp

_HEADER = re.compile(r"^\ufeff?WEBVTT(?:[ \t].*)?$")
_TIMING = re.compile(r"^\s*(?P<start>\S+)\s+-->\s+(?P<end>\S+)(?P<settings>.*)$")


def _blocks(lines: list[str]) -> list[list[int]]:
    """Indices of the lines of each block (blocks are separated by blank lines)."""
    blocks: list[list[int]] = []
    current: list[int] = []
    for i, line in enumerate(lines):
        if line.strip():
            current.append(i)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


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
        start, end = cue_timing(label, lines[row],
                                parse_vtt_timestamp(match["start"]) if match else None,
                                parse_vtt_timestamp(match["end"]) if match else None,
                                bool(filled), warnings)
        first = filled[0] if filled else row + 1
        last = filled[-1] if filled else row
        template.append("".join(raw_lines[done:first]))
        raw = "".join(raw_lines[first:last + 1])
        stripped = raw.rstrip("\r\n")
        template += [len(cues), raw[len(stripped):]]
        done = last + 1
        cues.append(Cue(lines[block[0]].strip() if timing_at == 1 else None,
                        lines[row].rstrip(), start, end,
                        [lines[i].rstrip() for i in filled], stripped))
    if not cues:
        raise InputError("a WebVTT file without cues")
    template.append("".join(raw_lines[done:]))
    return SubtitleFile(cues, encoding, newline, warnings, "vtt",
                        [p for p in template if p != ""])


VTT = Format("vtt", (".vtt",), sniff=lambda head: head.startswith("WEBVTT"),
             parse=parse_vtt_text)
