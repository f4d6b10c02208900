"""What subctx writes, pysrt (the de-facto reader of .srt files) reads as meant.

Generated well-formed SubRip files (1-8 cues, 1-3 text lines with tags, dialogue dashes, music
notes, speaker labels, sound annotations, Latin/Cyrillic/other unicode, CRLF or LF, optional BOM)
go through the real layout path: parse -> plan_document -> a stand-in translation of every
unit -> render_cues -> SubtitleFile.render. The written text must read back in pysrt with the
same cues, the input's timings and each cue's text exactly the lines subctx rendered; subctx must
read its own output back the same; and a render without translation is the input, byte for byte.

The stand-in translations are deterministic functions of the English (reversed words, a
Cyrillic transliteration, longer, shorter) and also what a model or a reviewer's edit may hand
the layout: an empty text, blank lines, a lone number, a timing line, '-->', a line separator.
"""

from __future__ import annotations

import pysrt
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from subctx.formats import parse_subtitles
from subctx.units import plan_document, render_cues

_CYRILLIC = dict(zip("abcdefghijklmnopqrstuvwxyz",
                     "абцдефгхийклмнопкрстуввхыз", strict=True))


def _transliterate(text: str) -> str:
    return "".join(_CYRILLIC.get(c.lower(), c) for c in text)


STAND_INS = {
    "reversed": lambda s: " ".join(reversed(s.split())),
    "cyrillic": _transliterate,
    "longer": lambda s: f"{_transliterate(s)} — {s} {_transliterate(s)}, да, именно так",
    "shorter": lambda s: s.split()[0],
    "empty": lambda s: "",
    "blank": lambda s: " \n \t",
    "newlines": lambda s: f"{s}\n\n{_transliterate(s)}\n",
    "number": lambda s: "42",
    "number lines": lambda s: f"7\n00:00:01,000 --> 00:00:02,000\n{s}",
    "timing": lambda s: "00:00:01,000 --> 00:00:02,000",
    "arrow": lambda s: f"{s} --> {_transliterate(s)}",
    "separators": lambda s: f"{s}\u2028\u2029\x85\x0b{_transliterate(s)}\r",
    "dash": lambda s: f"- {_transliterate(s)}",
}

_LETTERS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            "абвгдеёжзийклмнопрстуфхцчшщъыьэюяЖЁéüçñ")
word = st.text(alphabet=_LETTERS + "'", min_size=1, max_size=10).filter(lambda w: w != "'")
punct = st.sampled_from(["", "", ",", ".", "!", "?", "...", "…", ":", "\u00a0!", " 1984"])
words = st.lists(st.tuples(word, punct).map("".join), min_size=1, max_size=8).map(" ".join)


@st.composite
def text_line(draw) -> str:
    body = draw(words)
    if draw(st.integers(0, 9)) == 0:
        body = draw(st.sampled_from(["1984", "42", "...", "♪", "- ...", "(sighs)"]))
    if draw(st.booleans()) and draw(st.booleans()):
        body = f"{draw(st.sampled_from(['JOHN: ', 'MARY ANN: ', '[door slams] ', '(sighs) ']))}"\
               f"{body}"
    note = draw(st.sampled_from(["", "", "", "♪ ", "♫ "]))
    if note:
        body = f"{note}{body}{draw(st.sampled_from(['', ' ♪', ' ♫']))}"
    tag = draw(st.sampled_from(["", "", "", "i", "b", "font"]))
    if tag == "font":
        body = f'<font color="#ffff00">{body}</font>'
    elif tag:
        body = f"<{tag}>{body}</{tag}>"
    dash = draw(st.sampled_from(["", "", "", "- ", "-", "– "]))
    space = draw(st.sampled_from(["", "", "", " ", "\u00a0"]))  # readers strip trailing spaces
    return f"{dash}{body}{space}"


def _stamp(ms: int) -> str:
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


@st.composite
def srt_files(draw) -> tuple[str, list[tuple[int, int]]]:
    """A well-formed SubRip file and its cues' (start, end) in milliseconds."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    start, timings, blocks = 0, [], []
    for number in range(1, draw(st.integers(1, 8)) + 1):
        start += draw(st.integers(0, 5_000))
        end = start + draw(st.integers(1, 7_000))
        timings.append((start, end))
        lines = draw(st.lists(text_line(), min_size=1, max_size=3))
        blocks.append(newline.join([str(number), f"{_stamp(start)} --> {_stamp(end)}", *lines]))
        start = end if draw(st.booleans()) else start
    text = (newline * 2).join(blocks) + draw(st.sampled_from(["", newline, newline * 2]))
    return ("\ufeff" if draw(st.booleans()) else "") + text, timings


def _check(text: str, timings: list[tuple[int, int]], stand_ins: list[str]) -> None:
    sub = parse_subtitles(text, "srt")
    assert sub.render([cue.lines for cue in sub.cues]) == text  # untranslated: the input
    plan = plan_document(sub)
    translations = [STAND_INS[stand_ins[i % len(stand_ins)]](unit.text)
                    for i, unit in enumerate(plan.units)]
    cues = render_cues(plan, translations)
    written = sub.render(cues)

    read = pysrt.from_string(written)
    assert len(read) == len(timings)
    for item, (start, end), lines in zip(read, timings, cues, strict=True):
        assert (item.start.ordinal, item.end.ordinal) == (start, end)
        assert lines, "a cue lost all its text"
        assert item.text == "\n".join(lines)
    again = parse_subtitles(written, "srt")  # and subctx reads its own output the same
    assert [cue.lines for cue in again.cues] == cues


CRLF_LYRIC = ("\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\n♪ Hello darkness, my old friend ♪\r\n"
              "♪ I've come to talk with you again ♪\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n"
              "- <i>Hi.</i>\r\n- JOHN: [sighs] Где он?\r\n")


@settings(max_examples=150, deadline=None)
@given(srt_files(), st.lists(st.sampled_from(sorted(STAND_INS)), min_size=1, max_size=6))
@example((CRLF_LYRIC, [(1000, 2000), (3000, 4000)]), ["cyrillic", "longer"])
# what the property found (render_cue, before): an empty translation crashed it (IndexError);
# a translation's line breaks or line separators (U+2028, NEL, VT: pysrt splits lines at them)
# went into the file as they were, a blank line ending the cue for pysrt; '-->' in a translation
# made a timing line, and subctx read its own output back as two cues
@example(("1\n00:00:00,000 --> 00:00:00,001\nA", [(0, 1)]), ["empty"])
@example(("1\n00:00:00,000 --> 00:00:00,001\n- A\n- B", [(0, 1)]), ["newlines"])
@example(("1\n00:00:00,000 --> 00:00:00,001\n<i>A</i>\n1984", [(0, 1)]), ["separators"])
@example(("1\n00:00:00,000 --> 00:00:00,001\nA", [(0, 1)]), ["arrow"])
def test_what_subctx_writes_pysrt_reads_as_meant(generated, stand_ins):
    text, timings = generated
    _check(text, timings, stand_ins)


@pytest.mark.parametrize("stand_in", sorted(STAND_INS))
def test_every_stand_in_on_every_layout(stand_in):
    """Each stand-in once on a file with a cue of every kind (plain, wrapped, italic block,
    dialogue, lines styled one by one, lyric, sound annotation, speaker label)."""
    bodies = ["Hello.", "I do not know what you mean,\nbut it sounds like a bad idea.",
              "<i>Hello there,\nmy old friend.</i>", "- Hi.\n- <i>Fine.</i>",
              "<i>Previously:</i>\nWe lost the keys.", CRLF_LYRIC.split("\r\n")[2],
              "♪ Hello darkness ♪\n♪ my old friend ♪", "[door slams]", "JOHN: (sighs) I know."]
    text = "".join(f"{n}\n{_stamp(n * 1000)} --> {_stamp(n * 1000 + 900)}\n{body}\n\n"
                   for n, body in enumerate(bodies, 1))
    _check(text, [(n * 1000, n * 1000 + 900) for n in range(1, len(bodies) + 1)], [stand_in])
