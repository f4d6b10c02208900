"""Subtitle formats: one module per format (subctx.formats.srt, .vtt, .ass), one registry.

Every format becomes the same `SubtitleFile` (subctx.formats.base): timed cues for the context
rule, the engine and the review, plus the template that writes every byte that is not translated
text back unchanged. A file's format is its extension's, else the first whose `sniff` knows its
first characters, else SubRip (real .srt files come under many names).
"""

from __future__ import annotations

from pathlib import Path

from subctx.errors import InputError
from subctx.formats.ass import ASS
from subctx.formats.base import Cue, Format, SubtitleFile
from subctx.formats.srt import SRT
from subctx.formats.vtt import VTT
from subctx.registry import lookup
from subctx.textio import decode_text

__all__ = ["EXTENSIONS", "FORMATS", "Cue", "Format", "SubtitleFile", "detect_format",
           "parse_subtitles", "read_subtitles"]

FORMATS: dict[str, Format] = {f.name: f for f in (SRT, VTT, ASS)}
EXTENSIONS: dict[str, Format] = {ext: f for f in FORMATS.values() for ext in f.extensions}
MAX_FILE_BYTES = 50 * 1024 * 1024


def format_named(name: str) -> Format:
    """The registered format of this name; ValueError listing the names otherwise."""
    return lookup(FORMATS, name, "subtitle format")


def detect_format(path: Path, text: str) -> Format:
    """The format by extension, or by content for an unknown extension."""
    by_name = EXTENSIONS.get(Path(path).suffix.lower())
    if by_name:
        return by_name
    head = text.lstrip("\ufeff").lstrip()[:200]
    return next((f for f in FORMATS.values() if f.sniff(head)), SRT)


def parse_subtitles(text: str, fmt: Format | str = SRT, encoding: str = "utf-8"
                    ) -> SubtitleFile:
    """Parse decoded text as `fmt` (a Format or its name). Raises InputError."""
    return (format_named(fmt) if isinstance(fmt, str) else fmt).parse(text, encoding)


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
    return detect_format(path, text).parse(text, used)
