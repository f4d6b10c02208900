"""What every subtitle format becomes: one list of timed cues, written back byte for byte.

A reader (subctx.formats.srt, .vtt, .ass) turns a file into `Cue`s (text lines and timing,
what the context rule, the engine and the review need) and a *template*: the file cut into
verbatim text and one slot per cue's text. Writing fills each slot with a cue's new lines, so
everything that is not translated text (numbering, timing lines and cue settings, headers,
notes, styles, comments, override tags) comes out exactly as it went in; a cue whose lines are
unchanged gets back its original text, so a file written without translation is the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from subctx.errors import InputError


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
    # how a new line is written in the file: a cue's lines are its text as read (WebVTT's
    # character references unescaped, what ASS sets aside wrapped; see the readers), and this
    # writes a line given in that form the way the format wants it (None: as it is)
    write_line: Callable[[str], str] | None = None
    bom: bool = False  # the input began with a UTF-8 byte order mark: so does the output

    def render(self, texts: list[list[str]]) -> str:
        """The file with each cue's text replaced by `texts[i]` (everything else verbatim)."""
        if len(texts) != len(self.cues):
            raise ValueError("one text per cue is required")
        joiner = self.line_break or self.newline
        out = ["\ufeff"] if self.bom else []
        for piece in self.template:
            if isinstance(piece, str):
                out.append(piece)
                continue
            cue, lines = self.cues[piece], texts[piece]
            if lines == cue.lines:
                out.append(cue.raw)
                continue
            if self.write_line is not None:
                lines = [self.write_line(line) for line in lines]
            if cue.raw or not lines:
                out.append(joiner.join(lines))
            else:  # text for a cue that had none: its slot had no line of its own
                out.append(joiner.join(lines) + (self.newline if joiner == self.newline else ""))
        return "".join(out)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept (CRLF, LF or CR; nothing else splits), so that joining
    them gives the text back."""
    return _LINE.findall(text)


def strip_ending(line: str) -> str:
    return line.rstrip("\r\n")


def file_newline(text: str) -> str:
    """The line ending most of the file's lines have: CRLF, LF or CR alone (old Mac files);
    LF for a file of one line."""
    crlf = text.count("\r\n")
    counts = [(crlf, 2, "\r\n"), (text.count("\n") - crlf, 1, "\n"),
              (text.count("\r") - crlf, 0, "\r")]
    best = max(counts)
    return best[2] if best[0] else "\n"


def file_lines(text: str) -> tuple[str, list[str], list[str]]:
    """What every reader starts from: the file's newline, its lines with their endings (for
    the template) and without (for parsing). An empty file is an InputError."""
    if not text.strip():
        raise InputError("empty file")
    raw_lines = split_lines(text)
    return file_newline(text), raw_lines, [strip_ending(x) for x in raw_lines]


# zero-width characters: invisible in a player, junk to a translation model (the text given
# to translation goes without them; a cue that is not translated keeps them, byte for byte)
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


def strip_invisible(text: str) -> str:
    """`text` without zero-width spaces, (non-)joiners, word joiners and stray BOMs."""
    return _INVISIBLE.sub("", text)


def cue_timing(label: str, timing: str, start: float | None, end: float | None,
               has_text: bool, warnings: list[str]) -> tuple[float | None, float | None]:
    """A cue's parsed times as the context rule may use them, warning about what is odd in it:
    a malformed time (no time at all then: context does not cross the cue), an end before the
    start, no text."""
    if start is None or end is None:
        warnings.append(f"cue {label}: malformed timestamp '{timing.strip()}' "
                        "(kept as is; context does not cross it)")
        start = end = None
    elif end < start:
        warnings.append(f"cue {label}: ends before it starts")
    if not has_text:
        warnings.append(f"cue {label}: empty (kept as is)")
    return start, end


@dataclass(frozen=True)
class Format:
    """One subtitle format: its name, the file extensions it owns, how to recognise its text
    under another extension, and its reader (writing is SubtitleFile.render, for all)."""

    name: str
    extensions: tuple[str, ...]
    sniff: Callable[[str], bool]  # the start of a file's text -> whether it is this format
    parse: Callable[[str, str], SubtitleFile]  # (text, encoding) -> the parsed file
