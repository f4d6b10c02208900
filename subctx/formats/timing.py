"""Timestamps as the formats write them, to seconds: SubRip's (also ASS's, which differ only in
precision) and WebVTT's; and seconds as SubRip writes them."""

from __future__ import annotations

import re

# A timing line as real files write it, malformed ones too: a start that ends in a digit
# ('00:00:01,000', '0:00:01.5', '-00:00:01,000'), an arrow ('-->', '->'), an end that begins with
# one, and whatever follows (SubRip coordinates, WebVTT cue settings); see timing_match.
_TIMING_LINE = re.compile(r"^\s*(?P<start>(?!-\s)[^>]*?\d)\s*-+>\s*(?P<end>-?\d\S*)(?P<rest>.*)$")
_ANY_TIMING_LINE = re.compile(r"^\s*(?P<start>[^>]*?)\s*-+>\s*(?P<end>\S*)(?P<rest>.*)$")
_STAMP = re.compile(r"\d[:.,;]\d")
_STARTS_WITH_STAMP = re.compile(r"^\s*\ufeff?-?\d+[:.,;]\d")


def timing_match(line: str) -> re.Match[str] | None:
    """The match of a timing line (groups start, end, rest), None for a line of text. A line
    that begins with a timestamp ('12:01,5', whole or not) and has an arrow is a timing line,
    and so is one with digits on both sides of the arrow and a timestamp on one side: a timing
    line a tool garbled stays a timing line (kept as is). Prose with an arrow in it ('Turn left
    --> then right.', 'Meet me at 5:30 --> the usual place') is text."""
    if "->" not in line:
        return None
    match = _TIMING_LINE.match(line)
    if match is not None and (_STAMP.search(match["start"].split()[-1])
                              or _STAMP.search(match["end"])):
        return match
    return _ANY_TIMING_LINE.match(line) if _STARTS_WITH_STAMP.match(line) else None


_TIMESTAMP = re.compile(r"^(\d{1,3}):(\d{1,2}):(\d{1,2})(?:[,.:](\d{1,3}))?$")
_VTT_STAMP = re.compile(r"^(?:(\d+):)?([0-5]\d):([0-5]\d)\.(\d{3})$")


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


def parse_signed_timestamp(value: str) -> tuple[float | None, bool]:
    """parse_timestamp that reads a negative time ('-00:00:01,000', written by some tools for
    a cue shifted before the start) as 0; returns (seconds, whether it was negative)."""
    value = value.strip()
    if value.startswith("-"):
        seconds = parse_timestamp(value[1:])
        return (None, False) if seconds is None else (0.0, True)
    return parse_timestamp(value), False


def srt_timestamp(seconds: float) -> str:
    """62.345 seconds -> '00:01:02,345' (parse_timestamp's inverse)."""
    ms = int(round(seconds * 1000))
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def parse_vtt_timestamp(value: str) -> float | None:
    """'01:02.345' or '1:01:02.345' -> seconds; None when it is not a WebVTT timestamp."""
    match = _VTT_STAMP.match(value.strip())
    if not match:
        return None
    hours, minutes, seconds, millis = match.groups()
    return round(int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
                 + int(millis) / 1000, 3)
