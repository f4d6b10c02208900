"""Timestamps as the formats write them, to seconds: SubRip's (also ASS's, which differ only in
precision) and WebVTT's; and seconds as SubRip writes them."""

from __future__ import annotations

import re

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
