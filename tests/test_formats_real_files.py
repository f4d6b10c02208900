"""Real files' quirks in every format: missing blank lines in WebVTT, ASS drawings and comment
blocks, WebVTT character references, odd SubRip timing lines, CR line endings, byte order
marks, a stray byte in UTF-8, zero-width characters; and files that are not files (a pipe, a
device), over-long names and permissions when writing. Each is read, translated (upper-cased)
and written back: what is not translated text comes out byte for byte."""

import os
import stat
import threading

import pytest

from subctx.errors import InputError
from subctx.formats import parse_subtitles, read_subtitles
from subctx.textio import atomic_write_text, current_umask
from subctx.units import plan_document, render_cues


def upper(sub):
    plan = plan_document(sub)
    return sub.render(render_cues(plan, [u.text.upper() for u in plan.units]))


def unit_texts(sub):
    return [u.text for u in plan_document(sub).units]


def unchanged(sub):
    return sub.render([c.lines for c in sub.cues])


# 1. WebVTT without blank lines between cues (a timing line starts a cue, as in SubRip)

def test_webvtt_timing_line_starts_a_cue_without_a_blank_line():
    text = ("WEBVTT\n\n00:01.000 --> 00:03.000\nHello, my friend.\n"
            "00:03.500 --> 00:05.000\nHow are you today?\n")
    sub = parse_subtitles(text, "vtt")
    assert [c.lines for c in sub.cues] == [["Hello, my friend."], ["How are you today?"]]
    assert [(c.start, c.end) for c in sub.cues] == [(1.0, 3.0), (3.5, 5.0)]
    assert unchanged(sub) == text
    assert upper(sub) == ("WEBVTT\n\n00:01.000 --> 00:03.000\nHELLO, MY FRIEND.\n"
                          "00:03.500 --> 00:05.000\nHOW ARE YOU TODAY?\n")


def test_webvtt_cue_right_after_the_header_line_is_translated():
    text = "WEBVTT\n00:01.000 --> 00:03.000\nHello there.\n\n00:04.000 --> 00:05.000\nBye.\n"
    sub = parse_subtitles(text, "vtt")
    assert [c.lines for c in sub.cues] == [["Hello there."], ["Bye."]]
    assert unchanged(sub) == text
    assert upper(sub) == text.replace("Hello there.", "HELLO THERE.").replace("Bye.", "BYE.")


def test_webvtt_and_srt_read_numbered_cues_without_blank_lines_alike():
    body = ("1\n00:00:01.000 --> 00:00:02.000\nFirst line\n"
            "2\n00:00:03.000 --> 00:00:04.000\nSecond\n")
    vtt = parse_subtitles("WEBVTT\n\n" + body, "vtt")
    srt = parse_subtitles(body.replace(".", ","), "srt")
    assert [c.lines for c in vtt.cues] == [c.lines for c in srt.cues] \
        == [["First line"], ["Second"]]
    assert [c.number for c in vtt.cues] == [c.number for c in srt.cues] == ["1", "2"]
    assert unchanged(vtt) == "WEBVTT\n\n" + body


def test_webvtt_identifier_and_note_blocks_are_not_split():
    text = ("WEBVTT\n\nNOTE a note\nof two lines\n\nintro\n00:01.000 --> 00:02.000\nHi.\n")
    sub = parse_subtitles(text, "vtt")
    assert [(c.number, c.lines) for c in sub.cues] == [("intro", ["Hi."])]
    assert upper(sub) == text.replace("Hi.", "HI.")


# 2. ASS drawings and comment blocks are kept verbatim and not translated

ASS_HEAD = ("[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, "
            "Name, MarginL, MarginR, MarginV, Effect, Text\n")


def ass_event(text: str, start: str = "0:00:01.00") -> str:
    return f"Dialogue: 0,{start},0:00:03.00,Default,,0,0,0,,{text}\n"


def test_ass_drawing_only_event_is_left_exactly_as_it_is():
    drawing = ass_event("{\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}")
    open_ended = ass_event("{\\an7\\pos(0,0)\\p2}m 0 0 b 10 0 10 10 0 10")
    text = ASS_HEAD + ass_event("Hello there.") + drawing + open_ended
    sub = parse_subtitles(text, "ass")
    assert [c.lines for c in sub.cues] == [["Hello there."], [], []]
    assert unit_texts(sub) == ["Hello there."]
    assert upper(sub) == text.replace("Hello there.", "HELLO THERE.")


def test_ass_drawing_beside_words_is_kept_and_not_translated():
    text = ASS_HEAD + ass_event("{\\p1}m 0 0 l 10 0 10 10{\\p0}Exit this way")
    sub = parse_subtitles(text, "ass")
    assert unit_texts(sub) == ["Exit this way"]
    assert unchanged(sub) == text
    assert upper(sub) == text.replace("Exit this way", "EXIT THIS WAY")


def test_ass_comment_blocks_are_kept_and_not_translated():
    text = ASS_HEAD + ass_event("{TL note: pun on bear}Bear with me.") \
        + ass_event("I can't bear it.{TL: again}") + ass_event("{\\i1}Just {note} go.{\\i0}") \
        + ass_event("{only a comment}")
    sub = parse_subtitles(text, "ass")
    assert unit_texts(sub) == ["Bear with me.", "I can't bear it.", "Just go."]
    assert sub.cues[3].lines == []
    assert unchanged(sub) == text
    out = upper(sub)
    assert ",,{TL note: pun on bear}BEAR WITH ME.\n" in out
    assert ",,I CAN'T BEAR IT.{TL: again}\n" in out
    # a comment inside the words is not seen: it is kept, after them
    assert ",,{\\i1}JUST GO.{\\i0}{note}\n" in out
    assert ",,{only a comment}\n" in out
    assert "\ue0c0" not in out


def test_ass_line_break_inside_a_comment_does_not_split_the_line():
    text = ASS_HEAD + ass_event("{a\\Nb}First\\Nsecond.")
    sub = parse_subtitles(text, "ass")
    assert len(sub.cues[0].lines) == 2
    assert upper(sub) == text.replace("First\\Nsecond.", "FIRST SECOND.")


# 3. WebVTT character references

def test_webvtt_character_references_are_unescaped_for_translation_and_escaped_back():
    text = ("WEBVTT\n\n00:01.000 --> 00:02.000\nRock &amp; roll\n\n"
            "00:03.000 --> 00:04.000\n<i>Is 5 &lt; 6?</i>\n\n"
            "00:05.000 --> 00:06.000\nIt&#39;s&nbsp;fine &gt; great\n")
    sub = parse_subtitles(text, "vtt")
    assert unit_texts(sub) == ["Rock & roll", "Is 5 < 6?", "It's\u00a0fine > great"]
    assert unchanged(sub) == text
    out = upper(sub)
    assert out == ("WEBVTT\n\n00:01.000 --> 00:02.000\nROCK &amp; ROLL\n\n"
                   "00:03.000 --> 00:04.000\n<i>IS 5 &lt; 6?</i>\n\n"
                   "00:05.000 --> 00:06.000\nIT'S FINE &gt; GREAT\n")
    assert parse_subtitles(out, "vtt").cues[1].lines == ["<i>IS 5 < 6?</i>"]


# 4. SubRip timing lines: a negative start, an arrow in prose

def test_srt_negative_start_is_a_cue():
    text = ("1\n-00:00:01,000 --> 00:00:03,000\nHello, my friend.\n\n"
            "2\n00:00:03,500 --> 00:00:05,000\nHow are you today?\n")
    sub = parse_subtitles(text, "srt")
    assert [c.lines for c in sub.cues] == [["Hello, my friend."], ["How are you today?"]]
    assert (sub.cues[0].start, sub.cues[0].end) == (0.0, 3.0)
    assert any("negative time" in w for w in sub.warnings)
    assert upper(sub) == text.replace("Hello, my friend.", "HELLO, MY FRIEND.") \
        .replace("How are you today?", "HOW ARE YOU TODAY?")


def test_srt_arrow_inside_prose_is_text_not_timing():
    text = ("1\n00:00:01,000 --> 00:00:03,000\nTurn left --> then right.\n"
            "Meet me at 5:30 --> the usual place.\n\n"
            "2\n00:00:03,500 --> 00:00:05,000\nOkay.\n")
    sub = parse_subtitles(text, "srt")
    assert [c.lines for c in sub.cues] == [
        ["Turn left --> then right.", "Meet me at 5:30 --> the usual place."], ["Okay."]]
    assert not sub.warnings
    assert unchanged(sub) == text


def test_srt_garbled_timing_line_stays_a_cue_kept_as_is():
    text = ("1\n00:00:01,000 --> 00:00:03,000\nHello.\n\n"
            "2\n00:00:03,500 -->\nOkay.\n")
    sub = parse_subtitles(text, "srt")
    assert [c.lines for c in sub.cues] == [["Hello."], ["Okay."]]
    assert sub.cues[1].start is None and "malformed" in " ".join(sub.warnings)
    assert upper(sub) == text.replace("Hello.", "HELLO.").replace("Okay.", "OKAY.")


# 5. CR-only line endings (old Mac files)

@pytest.mark.parametrize("fmt,text", [
    ("srt", "1\n00:00:01,000 --> 00:00:03,000\nHello.\n\n2\n00:00:04,000 --> 00:00:05,000\n"
            "Bye.\n"),
    ("vtt", "WEBVTT\n\n00:01.000 --> 00:03.000\nHello.\n\n00:04.000 --> 00:05.000\nBye.\n"),
])
def test_cr_line_endings_are_kept(fmt, text):
    text = text.replace("\n", "\r")
    sub = parse_subtitles(text, fmt)
    assert sub.newline == "\r"
    assert [c.lines for c in sub.cues] == [["Hello."], ["Bye."]]
    assert unchanged(sub) == text
    out = sub.render([["A long first line,", "and a second."], ["B"]])
    assert "\n" not in out and "A long first line,\rand a second.\r" in out


def test_cr_line_endings_in_ass_are_kept():
    text = (ASS_HEAD + ass_event("Hello.")).replace("\n", "\r")
    sub = parse_subtitles(text, "ass")
    assert sub.newline == "\r" and sub.cues[0].lines == ["Hello."]
    assert upper(sub) == text.replace("Hello.", "HELLO.")


# 6. A UTF-8 byte order mark is written back

@pytest.mark.parametrize("name,text", [
    ("a.srt", "1\n00:00:01,000 --> 00:00:03,000\nHello.\n"),
    ("a.vtt", "WEBVTT\n\n00:01.000 --> 00:03.000\nHello.\n"),
    ("a.ass", ASS_HEAD + ass_event("Hello.")),
])
def test_utf8_bom_is_written_back(tmp_path, name, text):
    source = tmp_path / name
    source.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    sub = read_subtitles(source)
    assert sub.cues[0].lines == ["Hello."]
    atomic_write_text(tmp_path / "same", unchanged(sub))
    assert (tmp_path / "same").read_bytes() == source.read_bytes()
    atomic_write_text(tmp_path / "out", upper(sub))
    assert (tmp_path / "out").read_bytes() == source.read_bytes().replace(b"Hello.", b"HELLO.")
    # read as plain UTF-8 (the mark is then in the text): still one mark
    assert read_subtitles(source, "utf-8").render([["X"]]).count("\ufeff") == 1
    assert not read_subtitles(source, "utf-8").cues[0].timing.startswith("\ufeff")


def test_no_bom_is_added(tmp_path):
    source = tmp_path / "a.srt"
    source.write_bytes(b"1\n00:00:01,000 --> 00:00:03,000\nHello.\n")
    assert not upper(read_subtitles(source)).startswith("\ufeff")


# 7. A UTF-8 file with a stray byte stays UTF-8

def test_utf8_with_a_stray_byte_stays_utf8_with_a_warning(tmp_path):
    path = tmp_path / "a.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:03,000\nHello, my friend.\n\n"
                     "2\n00:00:03,500 --> 00:00:05,000\n♪ How are you today? ♪\n"
                     .encode().replace(b"friend", b"fri\xe9nd"))
    sub = read_subtitles(path)
    assert sub.encoding == "utf-8"
    assert [c.lines for c in sub.cues] == [["Hello, my fri\ufffdnd."],
                                           ["♪ How are you today? ♪"]]
    assert [w for w in sub.warnings if "not valid UTF-8" in w and "1 byte" in w]
    assert read_subtitles(path, "cp1252").cues[0].lines == ["Hello, my friénd."]


def test_legacy_file_with_an_accidental_utf8_sequence_is_still_legacy(tmp_path):
    # cp1251 'Жё' happens to be a valid UTF-8 sequence; the rest is not UTF-8 at all
    line = "Жёлтый дом стоит на холме, а мы идём домой."
    path = tmp_path / "a.srt"
    path.write_bytes(f"1\n00:00:01,000 --> 00:00:03,000\n{line}\n".encode("cp1251"))
    sub = read_subtitles(path)
    assert sub.encoding == "cp1251" and sub.cues[0].lines == [line]
    assert not sub.warnings


# 8. Atomic writes: long names, permissions

def test_atomic_write_to_a_long_valid_name(tmp_path):
    path = tmp_path / ("я" * 123 + ".srt")  # 250 bytes: a valid name
    atomic_write_text(path, "text")
    assert path.read_text(encoding="utf-8") == "text"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_atomic_write_keeps_an_existing_files_permissions(tmp_path, mode):
    path = tmp_path / "a.ru.srt"
    path.write_text("old", encoding="utf-8")
    path.chmod(mode)
    if not os.access(path, os.W_OK):
        pytest.skip("a read-only file is refused for this user (see below)")
    atomic_write_text(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_atomic_write_gives_a_new_file_the_umask_mode(tmp_path):
    path = tmp_path / "new.srt"
    atomic_write_text(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~current_umask()


def test_atomic_write_refuses_a_file_the_user_may_not_write(tmp_path, monkeypatch):
    path = tmp_path / "a.ru.srt"
    path.write_text("old", encoding="utf-8")
    path.chmod(0o444)
    real_access = os.access
    # as root every file is writable: let os.access answer for an ordinary user
    monkeypatch.setattr(os, "access", lambda p, m, *a, **k: False if m == os.W_OK
                        else real_access(p, m, *a, **k))
    with pytest.raises(PermissionError) as info:
        atomic_write_text(path, "new")
    assert str(path) in str(info.value) and "permission denied" in str(info.value)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.ru.srt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_atomic_write_refuses_a_read_only_file(tmp_path):
    path = tmp_path / "a.ru.srt"
    path.write_text("old", encoding="utf-8")
    path.chmod(0o444)
    with pytest.raises(PermissionError, match="a.ru.srt"):
        atomic_write_text(path, "new")
    assert path.read_text(encoding="utf-8") == "old"


# 9. Special files are refused, reads are capped

def _read_in_a_thread(path):
    """read_subtitles(path)'s error, within 10 seconds (a read that hangs fails the test)."""
    found = []

    def read():
        try:
            read_subtitles(path)
        except InputError as err:
            found.append(err)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "reading hangs"
    assert found, "no InputError"
    assert "\n" not in str(found[0])
    return str(found[0])


def test_a_named_pipe_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "film.srt"
    os.mkfifo(fifo)
    assert "named pipe" in _read_in_a_thread(fifo)


def test_a_device_is_refused():
    assert "character device" in _read_in_a_thread("/dev/zero")


def test_bytes_read_are_capped_whatever_size_the_file_reports(monkeypatch):
    import subctx.formats as formats

    monkeypatch.setattr(formats, "MAX_FILE_BYTES", 100)
    # a /proc file is a regular file that reports 0 bytes and holds more
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(InputError, match="MiB; not a subtitle file"):
        read_subtitles("/proc/self/status")


# 10. Zero-width characters are not given to translation

def test_zero_width_characters_are_not_translated_but_kept_when_untranslated(tmp_path):
    srt = "1\n00:00:01,000 --> 00:00:03,000\nHel\u200blo, my\u200c fri\u200dend.\ufeff\n"
    vtt = "WEBVTT\n\n00:01.000 --> 00:03.000\nHel\u200blo, my\u200c fri\u200dend.\ufeff\n"
    ass = ASS_HEAD + ass_event("{\\i1}Hel\u200blo, my\u200c fri\u200dend.\ufeff{\\i0}")
    for fmt, text in [("srt", srt), ("vtt", vtt), ("ass", ass)]:
        sub = parse_subtitles(text, fmt)
        assert unit_texts(sub) == ["Hello, my friend."], fmt
        assert unchanged(sub) == text, fmt
        assert "HELLO, MY FRIEND." in upper(sub), fmt
