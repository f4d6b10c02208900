"""Subtitle files of every format as one list of timed cues, written back byte for byte.

A reader (subctx.srt, subctx.vtt, subctx.ass) turns a file into `Cue`s (text lines and timing,
what the context rule, the engine and the review need) and a *template*: the file cut into
verbatim text and one slot per cue's text. Writing fills each slot with a cue's new lines, so
everything that is not translated text (numbering, timing lines and cue settings, headers,
notes, styles, comments, override tags) comes out exactly as it went in; a cue whose lines are
unchanged gets back its original text, so a file written without translation is the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from subctx.errors import InputError
from subctx.textio import decode_text

MAX_FILE_BYTES = 50 * 1024 * 1024
FORMATS = {".srt": "srt", ".vtt": "vtt", ".ass": "ass", ".ssa": "ass"}


@dataclass
class Cue:
    """One subtitle: its number (or id), its raw timing line, parsed times, and text lines."""

    number: str | None
    timing: str
    start: float | None
    end: float | None
    lines: list[str]
    raw: str = ""  # the text exactly as in the file (what the slot held)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class SubtitleFile:
    """A parsed subtitle file with what is needed to write it back the same way."""

    cues: list[Cue]
    encoding: str
    newline: str = "\n"
    warnings: list[str] = field(default_factory=list)
    format: str = "srt"
    template: list[str | int] = field(default_factory=list)  # verbatim text and cue slots
    line_break: str | None = None  # joins a cue's lines in its slot (default: the newline)

    def render(self, texts: list[list[str]]) -> str:
        """The file with each cue's text replaced by `texts[i]` (everything else verbatim)."""
        if len(texts) != len(self.cues):
            raise ValueError("one text per cue is required")
        joiner = self.line_break or self.newline
        out = []
        for piece in self.template:
            if isinstance(piece, str):
                out.append(piece)
                continue
            cue, lines = self.cues[piece], texts[piece]
            if lines == cue.lines:
                out.append(cue.raw)
            elif cue.lines or not lines:
                out.append(joiner.join(lines))
            else:  # text for a cue that had none: its slot had no line of its own
                out.append(joiner.join(lines) + (self.newline if joiner == self.newline else ""))
        return "".join(out)


def detect_format(path: Path, text: str) -> str:
    """The format by extension, or by content for an unknown extension."""
    by_name = FORMATS.get(Path(path).suffix.lower())
    if by_name:
        return by_name
    head = text.lstrip("\ufeff").lstrip()[:200]
    if head.startswith("WEBVTT"):
        return "vtt"
    if head.lower().startswith("[script info]"):
        return "ass"
    return "srt"


def parse_subtitles(text: str, fmt: str, encoding: str = "utf-8") -> SubtitleFile:
    if fmt == "vtt":
        from subctx.vtt import parse_vtt_text

        return parse_vtt_text(text, encoding)
    if fmt == "ass":
        from subctx.ass import parse_ass_text

        return parse_ass_text(text, encoding)
    from subctx.srt import parse_srt_text

    return parse_srt_text(text, encoding)


def read_subtitles(path: Path, encoding: str | None = None) -> SubtitleFile:
    """Read and parse a subtitle file (.srt, .vtt, .ass/.ssa), detecting its encoding unless
    `encoding` is given. Raises InputError with a one-line reason."""
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
    return parse_subtitles(text, detect_format(path, text), used)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept (CRLF, LF or CR; nothing else splits), so that joining
    them gives the text back."""
    return _LINE.findall(text)


def strip_ending(line: str) -> str:
    return line.rstrip("\r\n")


def file_lines(text: str) -> tuple[str, list[str], list[str]]:
    """What every reader starts from: the file's newline, its lines with their endings (for
    the template) and without (for parsing). An empty file is an InputError."""
    if not text.strip():
        raise InputError("empty file")
    raw_lines = split_lines(text)
    return ("\r\n" if "\r\n" in text else "\n"), raw_lines, [strip_ending(x) for x in raw_lines]
