"""What the review screen shows (subctx.review.render), without Textual running."""

import subprocess
import sys

from subctx.decoding import DecodeOptions
from subctx.formats.srt import parse_srt_text
from subctx.review import render
from subctx.review.session import Change, ReviewSession
from subctx.units import plan_document
from tests.review_fixtures import FakeTranslator, make_session


def _session(film: str, texts: list[str] | None = None) -> ReviewSession:
    sub = parse_srt_text(film)
    plan = plan_document(sub)
    texts = texts or [u.text for u in plan.units]
    return ReviewSession(sub, plan, FakeTranslator(), DecodeOptions(context=1), texts)


def _styles(text, part: str) -> set[str]:
    """The styles of the spans that cover `part` of a rich Text."""
    start = text.plain.index(part)
    end = start + len(part)
    return {str(s.style) for s in text.spans if s.start <= start and end <= s.end}


def test_render_does_not_import_textual():
    code = ("import sys, subctx.review.render; "
            "sys.exit(any(m.split('.')[0] == 'textual' for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_clock():
    assert render.clock(None) == "--:--"
    assert render.clock(0.0) == "00:00"
    assert render.clock(65.9) == "01:05"
    assert render.clock(3600.0) == "60:00"


def test_rows_in_cue_order_a_sound_annotation_before_its_words():
    film = ("1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n"
            "7\n00:01:05,000 --> 00:01:06,000\n[Door slams] Who is there?\n\n")
    s = _session(film)
    assert [u.text for u in s.plan.units] == ["Hello.", "Who is there?", "Door slams"]
    assert render.unit_rows(s) == [0, 2, 1]
    assert render.cue_numbers(s) == {0: "1", 1: "7", 2: "7"}
    assert [str(c) for c in render.row_cells(s, 2, "7")[1:]] == \
        ["7", "--:--", "Door slams", "Door slams"]


def test_flag_cell_and_row_cells():
    s = make_session()
    flag, *rest = render.row_cells(s, 1, "2")
    assert (flag.plain, str(flag.style)) == ("⚑", "bold yellow")
    assert [str(c) for c in rest] == ["2", "00:03", "It was on the table.", "Она была на столе."]
    assert render.flag_cell(s, 0).plain == " "
    s.accept(1)
    assert (render.flag_cell(s, 1).plain, str(render.flag_cell(s, 1).style)) == ("✓", "green")


def test_detail_of_a_flagged_line():
    s = make_session()
    text = render.detail_text(s, 1)
    lines = text.plain.splitlines()
    assert lines[0] == "context  Mom, I can't find my bag.  →  Мама, я не могу найти свою сумку."
    assert lines[1] == "English  It was on the table.   [gender]"
    assert lines[2] == "Russian  Она была на столе."
    assert lines[3] == "  1 38.1% Она была на столе.  ◀ current"
    assert lines[4] == "  2 18.9% Он был на столе.  (variant)"
    assert lines[7] == "  5  5.2% Она была на столе...  (n-best)"
    assert lines[8:] == ["attended in context: my (100%)"]
    assert "bold reverse yellow" in _styles(text, "It")  # the ambiguous word
    assert "bold reverse yellow" not in _styles(text, "table")
    assert _styles(text, "[gender]") == {"yellow"}
    assert "dim" in _styles(text, "Mom, I can't")
    assert "magenta" in _styles(text, "attended in context")


def test_detail_of_a_scenes_first_line_without_choices():
    s = make_session()
    lines = render.detail_text(s, 3).plain.splitlines()
    assert lines[0] == "context  (none: first line of a scene)"
    assert lines[1] == "English  A new scene starts here."  # no ambiguous kinds
    assert [line[:4] for line in lines[3:]] == ["  1 ", "  2 "]


def test_detail_says_why_the_current_line_is_not_the_top_one():
    s = make_session()
    s.set_text(1, "Он был на столе.", "pick 2", follow=False)
    assert render.detail_text(s, 1).plain.splitlines()[-2] == \
        "◀ current is not the most probable line: your line"
    film = "1\n00:00:01,000 --> 00:00:02,000\nIt was on the table.\n\n"
    machine = _session(film, ["Он был на столе."])  # a machine line below the top one
    assert "beam search picks by probability per word" in \
        render.detail_text(machine, 0).plain
    assert render.detail_text(machine, 0).plain.count("◀ current") == 2


def test_detail_lists_at_most_nine_alternatives():
    s = make_session()
    review = s.analyze(1)
    review.alternatives = review.alternatives * 3
    assert render.detail_text(s, 1).plain.count("(variant)") == 6  # 3 in the first nine
    assert "  9 " in render.detail_text(s, 1).plain
    assert " 10 " not in render.detail_text(s, 1).plain


def test_title_and_sub_title():
    assert render.title("subctx review — film.srt", 3) == \
        "subctx review — film.srt — 3 choices to review"
    assert render.title("subctx review", 1) == "subctx review — 1 choice to review"
    assert render.title("subctx review", 0) == "subctx review — 0 choices to review"
    assert render.sub_title("film.ru.srt", False, "") == "film.ru.srt"
    assert render.sub_title("film.ru.srt", True, "") == "film.ru.srt [unsaved]"
    assert render.sub_title("film.ru.srt", True, "saved") == "film.ru.srt [unsaved]  saved"


def test_webvtt_cue_ids_are_labels_as_written():
    from subctx.formats.vtt import parse_vtt_text

    sub = parse_vtt_text("WEBVTT\n\nintro\n00:00:01.000 --> 00:00:02.000\nHello.\n\n"
                         "00:00:03.000 --> 00:00:04.000\nBye.\n")
    s = ReviewSession(sub, plan_document(sub), FakeTranslator(), DecodeOptions(context=1),
                      ["Привет.", "Пока."])
    assert render.cue_numbers(s) == {0: "intro", 1: "2"}
    assert render.row_cells(s, 0, "intro")[1].plain == "intro"


def test_cells_and_preview_show_brackets_verbatim():
    film = "1\n00:00:01,000 --> 00:00:02,000\nI heard him say [inaudible] to you.\n\n"
    s = _session(film, ["Ты видел это? [/смеётся]"])
    _, _, _, english, russian = render.row_cells(s, 0, "1")
    assert (english.plain, russian.plain) == ("I heard him say [inaudible] to you.",
                                              "Ты видел это? [/смеётся]")
    preview = render.changes_text([Change(0, "[Door slams] Кто там?", "[b]Кто[/b]")],
                                  {0: "1"}, [(0, "Ты [Music]", "yours")])
    assert preview.plain.splitlines()[2:] == ["cue 1: - [Door slams] Кто там?",
                                             "       + [b]Кто[/b]",
                                             "cue 1: kept (yours) Ты [Music]"]
    assert _styles(preview, "- [Door slams]") == {"red"} and not preview.style


def test_a_kept_line_is_labelled_by_how_a_person_decided_it():
    s = make_session()
    assert render.decided(s, 2) == "yours"  # a person's line the log does not explain
    s.accept(2)
    assert render.decided(s, 2) == "accepted by you"
    s.set_text(2, "Ты видишь сумку?", "edit", follow=False)
    assert render.decided(s, 2) == "edited by you"
    s.undo()  # the edit taken back: accepted again
    assert render.decided(s, 2) == "accepted by you"
    s.set_text(1, "Он был на столе.", "pick 2", follow=False)
    assert render.decided(s, 1) == "picked by you"


def test_a_save_error_names_the_file_and_the_reason(tmp_path):
    output = tmp_path / "film.ru.srt"
    denied = PermissionError(13, "Permission denied", str(tmp_path / ".film.ru.srt.x1.part"))
    assert render.save_error(output, denied) == f"could not save {output}: Permission denied"
    log = PermissionError(13, "Permission denied", str(tmp_path / ".film.ru.review.json.x.part"))
    assert render.save_error(output, log) == \
        f"could not save {tmp_path / 'film.ru.review.json'}: Permission denied"
    assert render.save_error(output, OSError("disk on fire")) == \
        f"could not save {output}: disk on fire"
