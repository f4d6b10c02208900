"""Advanced SubStation Alpha (.ass, and .ssa) parsing (SubtitleFile.render writes it back byte
for byte).

Only the Text field of `Dialogue:` events in [Events] is translated; [Script Info], styles, every
other event field, `Comment:` events and everything else are verbatim. A cue's lines are its
Text split at `\\N` (and the soft `\\n`); written back they are joined with `\\N`. Override
blocks at the start or end of a line (`{\\i1}`, `{\\an8\\pos(10,20)}`) are kept like leading and
trailing tags (subctx.markup). Events keep their file order for the context rule.
"""

from __future__ import annotations

import re

from subctx.errors import InputError
from subctx.formats.base import Cue, Format, SubtitleFile, file_lines
from subctx.formats.timing import parse_timestamp

_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")
_FORMAT = re.compile(r"^\s*Format\s*:\s*(?P<fields>.*)$", re.IGNORECASE)
_DIALOGUE = re.compile(r"^(?P<key>\s*Dialogue\s*:\s*)(?P<rest>.*)$", re.IGNORECASE)
_BREAK = re.compile(r"\\[Nn]")
DEFAULT_FIELDS = ["Layer", "Start", "End", "Style", "Name", "MarginL", "MarginR", "MarginV",
                  "Effect", "Text"]


def parse_ass_text(text: str, encoding: str = "utf-8") -> SubtitleFile:
    """Parse decoded ASS/SSA text. Raises InputError when it is not a script with events."""
    newline, raw_lines, lines = file_lines(text)
    first = next((ln for ln in lines if ln.strip()), "").lstrip("\ufeff").strip()
    if first.lower() != "[script info]":
        raise InputError("not an ASS/SSA script (no [Script Info] at the top)")
    cues: list[Cue] = []
    template: list[str | int] = []
    warnings: list[str] = []
    section = ""
    fields = DEFAULT_FIELDS
    done = 0  # characters of the text already in the template
    position = 0
    for raw, line in zip(raw_lines, lines, strict=True):
        here = position
        position += len(raw)
        header = _SECTION.match(line)
        if header:
            section = header["name"].strip().lower()
            continue
        if section != "events":
            continue
        fmt = _FORMAT.match(line)
        if fmt:
            fields = [f.strip() for f in fmt["fields"].split(",")]
            continue
        dialogue = _DIALOGUE.match(line)
        if not dialogue:
            continue  # Comment:, blank lines and anything else: verbatim
        values = dialogue["rest"].split(",", len(fields) - 1)
        label = str(len(cues) + 1)
        if len(values) != len(fields) or fields[-1].lower() != "text":
            warnings.append(f"event {label}: not in the Format of [Events] (kept as is)")
            continue
        named = {name.lower(): value for name, value in zip(fields, values, strict=True)}
        start = parse_timestamp(named.get("start", ""))
        end = parse_timestamp(named.get("end", ""))
        if start is None or end is None:
            warnings.append(f"event {label}: malformed time (kept as is; context does not "
                            "cross it)")
            start = end = None
        body = values[-1]
        body_at = here + len(line) - len(body)
        template += [text[done:body_at], len(cues)]
        done = body_at + len(body)
        cue_lines = [part.rstrip() for part in _BREAK.split(body)] if body.strip() else []
        cues.append(Cue(None, line[: len(line) - len(body)], start, end,
                        [part for part in cue_lines if part.strip()], body))
    if not cues:
        raise InputError("an ASS/SSA script without Dialogue events")
    template.append(text[done:])
    return SubtitleFile(cues, encoding, newline, warnings, "ass",
                        [p for p in template if p != ""], line_break="\\N")


ASS = Format("ass", (".ass", ".ssa"), sniff=lambda head: head.lower().startswith("[script info]"),
             parse=parse_ass_text)
