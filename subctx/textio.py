"""Bytes to text with encoding detection, and atomic file writes."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from charset_normalizer import from_bytes

from subctx.errors import InputError

# Legacy encodings that real subtitle files use, most likely first. Short texts defeat generic
# detectors (a Russian cp1251 line easily "is" mac_cyrillic), so these are ranked by plausibility
# of the decoded text; a generic detector is only asked when none of them reads well.
LEGACY_ENCODINGS = ["cp1251", "cp1252", "koi8_r", "cp866", "iso8859_5", "mac_cyrillic", "cp1250"]
_MAGIC = [
    (b"\x89PNG", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"PK\x03\x04", "ZIP archive"), (b"\x1aE\xdf\xa3", "Matroska video"),
    (b"RIFF", "RIFF media"), (b"ID3", "MP3 audio"), (b"\x7fELF", "executable"),
    (b"%PDF", "PDF document"), (b"\x1f\x8b", "gzip archive"), (b"Rar!", "RAR archive"),
]
_BOMS = [
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
]


def _looks_like_bomless_utf16(data: bytes) -> str | None:
    """Return 'utf-16-le'/'utf-16-be' when ASCII-range text shows NULs at every other byte."""
    sample = data[:4000]
    if len(sample) < 4:
        return None
    even_nul = sample[0::2].count(0) / max(1, len(sample[0::2]))
    odd_nul = sample[1::2].count(0) / max(1, len(sample[1::2]))
    if odd_nul > 0.4 and even_nul < 0.05:
        return "utf-16-le"
    if even_nul > 0.4 and odd_nul < 0.05:
        return "utf-16-be"
    return None


def _implausibility(text: str) -> float:
    """How unlikely `text` is as Russian/English/Western subtitles (lower is better).

    Penalises rare symbols, control characters, words mixing Latin and Cyrillic letters, and
    capitals inside words (the signature of a wrong Cyrillic code page).
    """
    penalty = 0.0
    for word in text.split():
        letters = [ch for ch in word if ch.isalpha()]
        latin = any("a" <= ch.lower() <= "z" for ch in letters)
        cyrillic = any("\u0400" <= ch <= "\u04ff" for ch in letters)
        if latin and cyrillic:
            penalty += 2
        penalty += sum(1 for a, b in zip(letters, letters[1:], strict=False)
                       if a.islower() and b.isupper())
        for ch in word:
            if ch.isascii() or "\u0410" <= ch <= "\u044f" or ch in "Ёё«»–—…№“”„’‘♪♫":
                continue
            penalty += 0.5 if ch.isalpha() else 3
    return penalty / max(1, len(text))


def _guess_legacy(data: bytes) -> str:
    scored = []
    for rank, name in enumerate(LEGACY_ENCODINGS):
        try:
            scored.append((_implausibility(data.decode(name)), rank, name))
        except UnicodeDecodeError:
            continue
    latin = _implausibility(data.decode("latin_1"))
    scored.append((latin, len(LEGACY_ENCODINGS), "latin_1"))
    best = min(scored)
    if best[0] > 0.05:  # nothing reads well: ask a generic detector
        match = from_bytes(data).best()
        if match is not None:
            return match.encoding
    return best[2]


def _control_ratio(text: str) -> float:
    bad = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\r\n\f")
    return bad / max(1, len(text))


_ESCAPED = re.compile("[\udc80-\udcff]")


def _utf8_with_strays(data: bytes) -> tuple[str, int] | None:
    """UTF-8 that has a few bytes that are not (a stray cp1252 'é' in a UTF-8 file): the text
    with each such byte replaced by U+FFFD, and how many there were. None when the bytes read
    as some other encoding rather: no valid multi-byte UTF-8 character, more bad bytes than
    good characters, or more than 3 bad bytes where under 99 % of the non-ASCII characters are
    valid UTF-8 (a legacy code page makes a valid sequence now and then, and many bad ones)."""
    text = data.decode("utf-8", errors="surrogateescape")
    bad = len(_ESCAPED.findall(text))
    good = sum(1 for ch in text if ord(ch) > 127) - bad
    if good == 0 or bad > good or bad > max(3, good // 99):
        return None
    return _ESCAPED.sub("\ufffd", text), bad


def _stray_warning(bad: int) -> str:
    return (f"not valid UTF-8 at {bad} byte(s), each replaced by '\ufffd' (the rest is UTF-8; "
            "give --encoding if the file is in another encoding)")


def decode_text(data: bytes, encoding: str | None = None,
                warnings: list[str] | None = None) -> tuple[str, str]:
    """Decode subtitle bytes; return (text, encoding used). `encoding` overrides detection.
    What the reader should know (bytes that were not valid in the encoding found, replaced)
    is added to `warnings`."""
    notes = warnings if warnings is not None else []
    if encoding:
        try:
            return data.decode(encoding), encoding
        except LookupError:
            raise InputError(f"unknown encoding '{encoding}'") from None
        except UnicodeDecodeError as err:
            raise InputError(f"not valid {encoding} (byte {err.start}); try another --encoding")\
                from None
    for bom, name in _BOMS:
        if data.startswith(bom):
            if name == "utf-8-sig":
                text = data.decode(name, errors="surrogateescape")
                bad = len(_ESCAPED.findall(text))
                if bad:
                    text = _ESCAPED.sub("\ufffd", text)
                    notes.append(_stray_warning(bad))
            else:
                text = data.decode(name, errors="replace")
            return text.lstrip("\ufeff"), name
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            raise InputError(f"binary file ({kind}), not subtitles")
    if b"\x00" in data[:4000]:
        utf16 = _looks_like_bomless_utf16(data)
        if utf16 is None:
            raise InputError("binary file, not subtitles")
        return data.decode(utf16, errors="replace"), utf16
    try:
        text, used = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        strays = _utf8_with_strays(data)
        if strays is not None:
            (text, bad), used = strays, "utf-8"
            notes.append(_stray_warning(bad))
        else:
            used = _guess_legacy(data)
            text = data.decode(used, errors="replace")
    if _control_ratio(text) > 0.02:
        raise InputError("binary file, not subtitles")
    return text, used


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_TEMP_SUFFIX = ".part"
_TEMP_RANDOM = 8  # the characters mkstemp puts between prefix and suffix


def _name_max(folder: Path) -> int:
    """The longest file name (in bytes) the folder's file system takes."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _temp_prefix(path: Path) -> str:
    """'.<name>.' for the temporary file beside `path`, its name cut short enough that the
    whole temporary name ('.<name>.XXXXXXXX.part') fits the file system's limit."""
    room = _name_max(path.parent) - len(b"..") - _TEMP_RANDOM - len(_TEMP_SUFFIX)
    name = path.name
    while name and len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}."


def _kept_mode(path: Path) -> int:
    """The permission bits the written file gets: an existing file's own (a chmod 444 or 600
    output stays so), a new one's those any new file of the user gets. An existing file the
    user may not write is refused (PermissionError naming it), not replaced."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return 0o666 & ~current_umask()
    if not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "permission denied (the file is read-only for you;"
                              " it was left as it was)", str(path))
    return stat.S_IMODE(info.st_mode) & 0o777


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `path` through a temporary file and a rename, so that a crash or Ctrl-C
    leaves either the old file or the new one, never half of one. The file keeps the
    permission bits it had (see _kept_mode); one the user may not write is not replaced."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _kept_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=_TEMP_SUFFIX, dir=path.parent)
    try:
        # mkstemp makes the file 0600: give it the mode it is to have
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
