import pytest

from subctx.errors import InputError
from subctx.formats import read_subtitles
from subctx.formats.timing import parse_timestamp
from tests.helpers import write_srt

BASIC = """1
00:00:01,000 --> 00:00:02,500
Привет, как дела?

2
00:00:03,000 --> 00:00:04,000
Хорошо.
"""

ENGLISH = """1
00:00:01,000 --> 00:00:02,500
Hello.

2
00:00:03,000 --> 00:00:04,000
Fine, thanks.
"""


def test_timestamps():
    assert parse_timestamp("00:01:02,345") == pytest.approx(62.345)
    assert parse_timestamp("0:0:5.5") == pytest.approx(5.5)
    assert parse_timestamp("1:00:00") == 3600
    assert parse_timestamp("00:61:00,000") is None
    assert parse_timestamp("garbage") is None


@pytest.mark.parametrize("encoding,newline", [
    ("utf-8", "\n"), ("utf-8-sig", "\r\n"), ("cp1251", "\r\n"), ("utf-16", "\n"),
    ("utf-16-le", "\n"), ("koi8-r", "\n"),
])
def test_encodings_and_newlines(tmp_path, encoding, newline):
    sub = read_subtitles(write_srt(tmp_path / "a.srt", BASIC, encoding, newline))
    assert [c.lines for c in sub.cues] == [["Привет, как дела?"], ["Хорошо."]]
    assert sub.newline == newline
    assert not sub.cues[0].timing.startswith("\ufeff")


@pytest.mark.parametrize("line,encoding", [
    ("Café? Ça va, señor.", "latin-1"),
    ("It’s “quoted” – isn’t it?", "cp1252"),
    ("Ну что, пойдём? Ёлки-палки!", "cp1251"),
    ("Ну что, пойдём? Ёлки-палки!", "koi8-r"),
    ("Съешь же ещё этих мягких французских булок.", "cp866"),
])
def test_legacy_single_byte_files(tmp_path, line, encoding):
    text = ENGLISH.replace("Hello.", line)
    sub = read_subtitles(write_srt(tmp_path / "a.srt", text, encoding))
    assert sub.cues[0].lines == [line]


def test_encoding_override(tmp_path):
    path = write_srt(tmp_path / "a.srt", BASIC, "cp1251")
    assert read_subtitles(path, "cp1251").cues[1].lines == ["Хорошо."]
    with pytest.raises(InputError, match="not valid utf-8"):
        read_subtitles(path, "utf-8")
    with pytest.raises(InputError, match="unknown encoding"):
        read_subtitles(path, "no-such-codec")


def test_missing_blank_lines_and_stray_numbers(tmp_path):
    text = ("1\n00:00:01,000 --> 00:00:02,000\nFirst line\n"
            "2\n00:00:03,000 --> 00:00:04,000\nSecond\n\n\n\n"
            "00:00:05,000 --> 00:00:06,000\nNo number\n\n7\n")
    sub = read_subtitles(write_srt(tmp_path / "a.srt", text))
    assert [c.lines for c in sub.cues] == [["First line"], ["Second"], ["No number", "7"]]
    assert [c.number for c in sub.cues] == ["1", "2", None]


def test_timings_and_numbers_round_trip_byte_exact(tmp_path):
    text = ("5\n00:00:01,5 --> 00:00:02,000 X1:10 X2:20\nA\n\n"
            "9\n0:00:03.000 --> 0:00:04.000\nB\n")
    sub = read_subtitles(write_srt(tmp_path / "a.srt", text))
    rendered = sub.render([["X"], ["Y"]])
    assert rendered \
        == "5\n00:00:01,5 --> 00:00:02,000 X1:10 X2:20\nX\n\n9\n0:00:03.000 --> 0:00:04.000\nY\n"


def test_crlf_output_keeps_crlf(tmp_path):
    sub = read_subtitles(write_srt(tmp_path / "a.srt", ENGLISH, newline="\r\n"))
    rendered = sub.render([["a"], ["b"]])
    assert rendered.count("\r\n") == 7 and rendered.count("\n") == 7


def test_malformed_overlapping_and_empty_cues_warn_but_stay(tmp_path):
    text = ("1\n00:00:01,000 --> 00:00:05,000\nA\n\n"
            "2\n00:00:04,000 --> 00:00:06,000\nB\n\n"
            "3\n00:00:99,000 --> 00:00:07,000\nC\n\n"
            "4\n00:00:08,000 --> 00:00:09,000\n\n"
            "5\n00:00:10,000 --> 00:00:09,000\nE\n")
    sub = read_subtitles(write_srt(tmp_path / "a.srt", text))
    assert len(sub.cues) == 5
    assert sub.cues[2].start is None and sub.cues[2].end is None
    joined = " | ".join(sub.warnings)
    for expected in ("malformed timestamp", "empty", "ends before it starts", "overlap"):
        assert expected in joined


@pytest.mark.parametrize("content,message", [
    (b"", "empty file"),
    (b"   \n\n", "empty file"),
    (b"Just some text\nwithout timings\n", "not a subtitle file"),
    (bytes(range(256)) * 20, "binary"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00\xff" * 300, "binary file \\(PNG"),
    (b"\x1aE\xdf\xa3" + b"\x01" * 100, "Matroska"),
])
def test_bad_files_raise_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.srt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        read_subtitles(path)
    assert "\n" not in str(info.value)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="directory"):
        read_subtitles(tmp_path)
