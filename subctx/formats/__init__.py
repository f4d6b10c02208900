"""Subtitle formats: one module per format (subctx.formats.srt, .vtt, .ass), one registry.

Every format becomes the same `SubtitleFile` (subctx.formats.base): timed cues for the context
rule, the engine and the review, plus the template that writes every byte that is not translated
text back unchanged. A file's format is its extension's, else the first whose `sniff` knows its
first characters, else SubRip (real .srt files come under many names).
"""

from __future__ import annotations

import codecs
import os
import stat
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


_NOT_FILES = [(stat.S_ISDIR, "is a directory"), (stat.S_ISFIFO, "a named pipe"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
              (stat.S_ISSOCK, "a socket")]


def _not_a_file(mode: int) -> InputError | None:
    """The one-line error for anything that is not a regular file (None for a file)."""
    if stat.S_ISREG(mode):
        return None
    what = next((kind for test, kind in _NOT_FILES if test(mode)), "not a regular file")
    return InputError(what if what == "is a directory" else f"{what}, not a subtitle file")


def _too_big(size: int | None = None) -> InputError:
    """The error for a file over the limit: its size where it tells it truly."""
    return InputError(f"file is {size // 2**20} MiB; not a subtitle file" if size is not None
                      else f"file is over {MAX_FILE_BYTES // 2**20} MiB; not a subtitle file")


def read_bytes(path: Path) -> bytes:
    """A regular file's bytes, at most MAX_FILE_BYTES of them: a pipe, a device or a socket is
    refused before it is read (it could block or never end), and no more is read than the
    limit, whatever size the file claims. Raises InputError with a one-line reason."""
    try:
        problem = _not_a_file(os.stat(path).st_mode)
        if problem:
            raise problem
        # non-blocking: should a pipe take the file's place after the check, opening it does
        # not wait for a writer (it is refused below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            problem = _not_a_file(info.st_mode)
            if problem:
                raise problem
            if info.st_size > MAX_FILE_BYTES:
                raise _too_big(info.st_size)
            data = handle.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise InputError("is a directory") from None
    except OSError as err:
        raise InputError(err.strerror or str(err)) from None
    if len(data) > MAX_FILE_BYTES:  # more than the file said it holds
        raise _too_big()
    return data


def read_subtitles(path: Path, encoding: str | None = None) -> SubtitleFile:
    """Read and parse a subtitle file (.srt, .vtt, .ass/.ssa), detecting its encoding unless
    `encoding` is given. Raises InputError with a one-line reason. A UTF-8 byte order mark is
    not part of the text: the file remembers it and writes it back."""
    path = Path(path)
    data = read_bytes(path)
    warnings: list[str] = []
    text, used = decode_text(data, encoding, warnings)
    bom = data.startswith(codecs.BOM_UTF8) and _is_utf8(used)
    if bom:
        text = text.removeprefix("\ufeff")  # still there when --encoding utf-8 read it
    sub = detect_format(path, text).parse(text, used)
    sub.bom = bom
    sub.warnings[:0] = warnings
    return sub


def _is_utf8(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")
    except LookupError:
        return False
