"""SubRip (.srt) parsing and rendering that tolerates real-world files.

Timing lines are kept verbatim so that the output's timings are byte-identical to the input's;
the parsed seconds are used only for the context rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from subctx.errors import InputError
from subctx.textio import decode_text

_TIMING_LINE = re.compile(r"^\s*(?P<start>[^\s-][^>]*?)\s*-+>\s*(?P<end>\S+)(?P<rest>.*)$")
_TIMESTAMP = re.compile(r"^(\d{1,3}):(\d{1,2}):(\d{1,2})(?:[,.:](\d{1,3}))?$")
_NUMBER = re.compile(r"^\s*\d+\s*$")
MAX_FILE_BYTES = 50 * 1024 * 1024


@dataclass
class Cue:
    """One subtitle: its raw number and timing lines and its text lines."""

    number: str | None
    timing: str
    start: float | None
    end: float | None
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class SubtitleFile:
    """A parsed .srt file with what is needed to write it back the same way."""

    cues: list[Cue]
    encoding: str
    newline: str = "\n"
    warnings: list[str] = field(default_factory=list)


def parse_timestamp(value: str) -> float | None:
    """'00:01:02,345' -> 62.345 seconds; None when it is not a timestamp."""
    match = _TIMESTAMP.match(value.strip())
    if not match:
        return None
    hours, minutes, seconds, millis = match.groups()
    if int(minutes) > 59 or int(seconds) > 59:
        return None
    fraction = int(millis.ljust(3, "0")) if millis else 0
    return round(int(hours) * 3600 + int(minutes) * 60 + int(seconds) + fraction / 1000, 3)


def _is_timing(line: str) -> bool:
    return "-->" in line and _TIMING_LINE.match(line) is not None


def parse_srt_text(text: str, encoding: str = "utf-8") -> SubtitleFile:
    """Parse decoded .srt text. Raises InputError when it holds no subtitles at all."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    timing_rows = [i for i, line in enumerate(lines) if _is_timing(line)]
    if not timing_rows:
        if not text.strip():
            raise InputError("empty file")
        raise InputError("not a subtitle file (no 'HH:MM:SS,mmm --> HH:MM:SS,mmm' timing line)")
    warnings: list[str] = []
    head = [ln for ln in lines[: timing_rows[0]] if ln.strip()]
    if head and not (len(head) == 1 and _NUMBER.match(head[0])):
        warnings.append(f"ignored {len(head)} line(s) of text before the first cue")

    cues: list[Cue] = []
    for n, row in enumerate(timing_rows):
        stop = timing_rows[n + 1] if n + 1 < len(timing_rows) else len(lines)
        body = lines[row + 1 : stop]
        # The next cue's number sits right before its timing line (blank line or not).
        if n + 1 < len(timing_rows) and body and _NUMBER.match(body[-1]):
            body = body[:-1]
        number_line = lines[row - 1] if row > 0 and _NUMBER.match(lines[row - 1]) else None
        text_lines = [ln.rstrip() for ln in body if ln.strip()]
        match = _TIMING_LINE.match(lines[row])
        assert match is not None
        start, end = parse_timestamp(match["start"]), parse_timestamp(match["end"])
        label = number_line.strip() if number_line else str(n + 1)
        if start is None or end is None:
            warnings.append(f"cue {label}: malformed timestamp '{lines[row].strip()}' "
                            "(kept as is; context does not cross it)")
            start = end = None
        elif end < start:
            warnings.append(f"cue {label}: ends before it starts")
        if not text_lines:
            warnings.append(f"cue {label}: empty (kept as is)")
        cues.append(Cue(number_line.strip() if number_line else None, lines[row].rstrip(),
                        start, end, text_lines))
    overlaps = sum(
        1 for a, b in zip(cues, cues[1:], strict=False)
        if a.end is not None and b.start is not None and b.start < a.end
    )
    if overlaps:
        warnings.append(f"{overlaps} cue(s) overlap the previous one")
    return SubtitleFile(cues, encoding, newline, warnings)


def read_srt(path: Path, encoding: str | None = None) -> SubtitleFile:
    """Read and parse an .srt file, detecting its encoding unless `encoding` is given."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"file is {size // 2**20} MiB; not a subtitle file")
        data = path.read_bytes()
    except IsADirectoryError:
        raise InputError("is a directory") from None
    except OSError as err:
        raise InputError(err.strerror or str(err)) from None
    text, used = decode_text(data, encoding)
    return parse_srt_text(text, used)


def render_srt(sub: SubtitleFile, texts: list[list[str]]) -> str:
    """Serialise `sub` with each cue's text replaced by `texts[i]` (same numbers and timings)."""
    if len(texts) != len(sub.cues):
        raise ValueError("one text per cue is required")
    blocks = []
    for position, (cue, lines) in enumerate(zip(sub.cues, texts, strict=True), start=1):
        block = [cue.number or str(position), cue.timing, *lines]
        blocks.append(sub.newline.join(block))
    return (sub.newline * 2).join(blocks) + sub.newline
