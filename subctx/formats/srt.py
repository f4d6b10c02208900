"""SubRip (.srt) parsing that tolerates real-world files (SubtitleFile.render writes them back).

Everything but the cues' text lines is kept verbatim, so the output's numbering and timings are
byte-identical to the input's; the parsed seconds are used only for the context rule.
"""

from __future__ import annotations

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
from subctx.formats.timing import parse_signed_timestamp, timing_match

_NUMBER = re.compile(r"^\s*\d+\s*$")


def _is_timing(line: str) -> bool:
    return "-->" in line and timing_match(line) is not None


def parse_srt_text(text: str, encoding: str = "utf-8") -> SubtitleFile:
    """Parse decoded .srt text. Raises InputError when it holds no subtitles at all."""
    newline, raw_lines, lines = file_lines(text)
    timing_rows = [i for i, line in enumerate(lines) if _is_timing(line)]
    if not timing_rows:
        raise InputError("not a subtitle file (no 'HH:MM:SS,mmm --> HH:MM:SS,mmm' timing line)")
    warnings: list[str] = []
    head = [ln for ln in lines[: timing_rows[0]] if ln.strip()]
    if head and not (len(head) == 1 and _NUMBER.match(head[0].lstrip("\ufeff"))):
        warnings.append(f"{len(head)} line(s) of text before the first cue kept as they are "
                        "(not translated)")

    cues: list[Cue] = []
    template: list[str | int] = []
    done = 0  # raw lines already in the template
    for n, row in enumerate(timing_rows):
        stop = timing_rows[n + 1] if n + 1 < len(timing_rows) else len(lines)
        body_end = stop
        # The next cue's number sits right before its timing line (blank line or not).
        if n + 1 < len(timing_rows) and body_end > row + 1 and _NUMBER.match(lines[body_end - 1]):
            body_end -= 1
        number_line = lines[row - 1] if row > 0 and _NUMBER.match(lines[row - 1]) else None
        filled = [i for i in range(row + 1, body_end) if lines[i].strip()]
        # the text for translation: without zero-width characters (the slot keeps them)
        text_lines = [t for t in (strip_invisible(lines[i]).rstrip() for i in filled)
                      if t.strip()]
        match = timing_match(lines[row])
        assert match is not None
        label = number_line.strip() if number_line else str(n + 1)
        start, negative = parse_signed_timestamp(match["start"])
        end, negative_end = parse_signed_timestamp(match["end"])
        if negative or negative_end:
            warnings.append(f"cue {label}: negative time read as 00:00:00,000 (kept as is)")
        start, end = cue_timing(label, lines[row], start, end, bool(text_lines), warnings)
        # template: everything up to the first text line verbatim, the text lines (without the
        # last one's line ending) as the slot
        first = filled[0] if filled else row + 1
        last = filled[-1] if filled else row
        template.append("".join(raw_lines[done:first]))
        raw = "".join(raw_lines[first:last + 1]) if filled else ""
        ending = len(raw) - len(raw.rstrip("\r\n"))
        if ending:
            raw, tail = raw[:-ending], raw[-ending:]
        else:
            tail = ""
        template.append(len(cues))
        template.append(tail)
        done = last + 1 if filled else row + 1
        cues.append(Cue(number_line.strip() if number_line else None, lines[row].rstrip(),
                        start, end, text_lines, raw))
    template.append("".join(raw_lines[done:]))
    overlaps = sum(
        1 for a, b in zip(cues, cues[1:], strict=False)
        if a.end is not None and b.start is not None and b.start < a.end
    )
    if overlaps:
        warnings.append(f"{overlaps} cue(s) overlap the previous one")
    return SubtitleFile(cues, encoding, newline, warnings, "srt",
                        [p for p in template if p != ""])


SRT = Format("srt", (".srt",), sniff=lambda head: False,  # the fallback: never claimed by sniffing
             parse=parse_srt_text)
