"""Bytes to text with encoding detection, and atomic file writes."""

from __future__ import annotations

import contextlib
import os
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


def decode_text(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """Decode subtitle bytes; return (text, encoding used). `encoding` overrides detection."""
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


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `path` through a temporary file and a rename, so that a crash or Ctrl-C
    leaves either the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        # mkstemp makes the file 0600; give it the mode any new file of the user gets
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
