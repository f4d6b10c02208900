"""Advanced SubStation Alpha (.ass, and .ssa) parsing (SubtitleFile.render writes it back byte
for byte).

Only the Text field of `Dialogue:` events in [Events] is translated; [Script Info], styles, every
other event field, `Comment:` events and everything else are verbatim. A cue's lines are its
Text split at `\\N` (and the soft `\\n`); written back they are joined with `\\N`. Override
blocks at the start or end of a line (`{\\i1}`, `{\\an8\\pos(10,20)}`) are kept like leading and
trailing tags (subctx.markup). Events keep their file order for the context rule.

What is in an event's Text but is not words is set aside, never translated and written back
verbatim: comment blocks (`{TL note: pun on bear}`, a brace block that does not start with a
backslash; renderers still read an override tag later in one) and drawings
(`{\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}`: drawing mode from `\\pN`, N > 0, to `\\p0` or
the end of the Text). In a cue's lines each of them is an override block of its own
(`{\\<mark>...}`, a private-use character marking it), which the rest of subctx keeps like any
override tag; SubtitleFile.render writes it back as it was. A comment (without override tags)
after the first words of the Text stands at the end of the cue's lines: a comment is not seen,
and a tag inside a sentence would be dropped. An event with nothing but tags, comments and
drawings has no lines (it is left exactly as it is).
"""

from __future__ import annotations

import re

from subctx.errors import InputError
from subctx.formats.base import Cue, Format, SubtitleFile, file_lines, strip_invisible
from subctx.formats.timing import parse_timestamp

_SECTION = re.compile(r"^\s*\[(?P<name>[^\]]+)\]\s*$")
_FORMAT = re.compile(r"^\s*Format\s*:\s*(?P<fields>.*)$", re.IGNORECASE)
_DIALOGUE = re.compile(r"^(?P<key>\s*Dialogue\s*:\s*)(?P<rest>.*)$", re.IGNORECASE)
_BLOCK = re.compile(r"\{[^{}]*\}")
_BLOCK_OR_BREAK = re.compile(r"(\{[^{}]*\})|\\[Nn]")
_SPACING = re.compile(r"\\[Nnh]|\s")
_DRAWING_SCALE = re.compile(r"\\p(\d+)")
_COMMENT = "\ue0c0"  # marks a comment block set aside: {\<mark>TL note} is {TL note}
_DRAWING = "\ue0c1"  # marks drawing commands set aside: {\<mark>m 0 0 l 1 1} is m 0 0 l 1 1
_ASIDE = re.compile(r"\{\\([\ue0c0\ue0c1])([^{}]*)\}")
DEFAULT_FIELDS = ["Layer", "Start", "End", "Style", "Name", "MarginL", "MarginR", "MarginV",
                  "Effect", "Text"]


def set_aside(body: str) -> str:
    """An event's Text with its comment blocks and drawing commands made override blocks of
    their own (see the module's doc), and the zero-width characters of its words left out."""
    head: list[str] = []  # the Text up to its first words, then all of it but later comments
    comments: list[str] = []  # comments after the first words: at the end
    drawing = worded = False
    done = 0
    for block in [*_BLOCK.finditer(body), None]:
        run = body[done:block.start() if block else len(body)]
        if drawing and run.strip() and "{" not in run and "}" not in run:
            head.append(f"{{\\{_DRAWING}{run}}}")
        else:
            run = strip_invisible(run)
            head.append(run)
            worded = worded or bool(_SPACING.sub("", run))
        if block is None:
            break
        done = block.end()
        tag = block.group(0)
        scales = _DRAWING_SCALE.findall(tag)
        drawing = int(scales[-1]) > 0 if scales else drawing
        if tag.startswith("{\\"):
            head.append(tag)
        elif worded and "\\" not in tag:  # a comment among the words: after them
            comments.append(f"{{\\{_COMMENT}{tag[1:]}")
        else:  # before the words, or with override tags in it (renderers read them): in place
            head.append(f"{{\\{_COMMENT}{tag[1:]}")
    return "".join(head).rstrip() + "".join(comments)


def _split_lines(text: str) -> list[str]:
    """The Text's lines: split at its line breaks (`\\N`, `\\n`) outside brace blocks."""
    lines, done = [], 0
    for match in _BLOCK_OR_BREAK.finditer(text):
        if match.group(1) is None:
            lines.append(text[done:match.start()])
            done = match.end()
    return [*lines, text[done:]]


def restore(line: str) -> str:
    """A line as the file has it: what `set_aside` marked written back as it was."""
    return _ASIDE.sub(lambda m: f"{{{m[2]}}}" if m[1] == _COMMENT else m[2], line)


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
    # a script that has the marks in it already gets nothing set aside (they would not be
    # told apart from its own text)
    aside = _COMMENT not in text and _DRAWING not in text
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
        marked = set_aside(body) if aside else body
        cue_lines = [part.rstrip() for part in _split_lines(marked)]
        if not _BLOCK.sub("", marked).strip():
            cue_lines = []  # nothing but tags, comments and drawings: left as it is
        cues.append(Cue(None, line[: len(line) - len(body)], start, end,
                        [part for part in cue_lines if part.strip()], body))
    if not cues:
        raise InputError("an ASS/SSA script without Dialogue events")
    template.append(text[done:])
    return SubtitleFile(cues, encoding, newline, warnings, "ass",
                        [p for p in template if p != ""], line_break="\\N",
                        write_line=restore if aside else None)


ASS = Format("ass", (".ass", ".ssa"), sniff=lambda head: head.lower().startswith("[script info]"),
             parse=parse_ass_text)
