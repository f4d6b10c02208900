"""The review TUI driven by Textual's Pilot, plus screen snapshots."""

import json
from pathlib import Path

import pytest

from subctx.review.app import ReviewApp
from tests.review_fixtures import make_session


@pytest.fixture
def app(tmp_path):
    return ReviewApp(make_session(), tmp_path / "film.ru.srt", title="subctx review — film.srt")


async def test_navigate_flags_pick_and_follow_ups(app):
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one("DataTable")
        assert "3 choices to review" in app.title
        await pilot.press("n")
        assert table.cursor_row == 1
        await pilot.press("n")
        assert table.cursor_row == 2
        await pilot.press("p")
        assert table.cursor_row == 1
        await pilot.press("down", "up")
        assert table.cursor_row == 1
        await pilot.press("2")  # the second alternative: a forced variant
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ChangesScreen"
        await pilot.press("r")  # revert the re-translated later line
        assert app.session.texts[1] != "Она была на столе."
        assert app.session.texts[2] == "Ты её видишь?"
        assert "2 choices to review" in app.title


async def test_edit_inline_then_undo(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down", "down", "down", "e")
        editor = app.query_one("#edit")
        assert editor.has_class("editing") and editor.value == "Здесь начинается новая сцена."
        editor.value = ""
        await pilot.press(*"Новая сцена.")
        await pilot.press("enter")
        await pilot.pause()
        if app.screen.__class__.__name__ == "ChangesScreen":
            await pilot.press("k")
        assert app.session.texts[3] == "Новая сцена."
        assert not editor.has_class("editing")
        await pilot.press("u")
        assert app.session.texts[3] == "Здесь начинается новая сцена."


async def test_escape_cancels_an_edit(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        await pilot.press(*"xyz")
        await pilot.press("escape")
        assert not app.query_one("#edit").has_class("editing")
        assert app.session.texts[0] == "Мама, я не могу найти свою сумку."


async def test_accept_save_and_quit(app, tmp_path):
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "a")
        assert "2 choices to review" in app.title
        await pilot.press("s")
        await pilot.pause()
        assert (tmp_path / "film.ru.srt").exists()
        log = json.loads((tmp_path / "film.ru.review.json").read_text(encoding="utf-8"))
        assert log["decisions"][0]["action"] == "accept"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 or app.return_code is None


async def test_quit_with_unsaved_changes_asks(app, tmp_path):
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "3")
        await pilot.pause()
        if app.screen.__class__.__name__ == "ChangesScreen":
            await pilot.press("k")
        assert app.session.dirty
        await pilot.press("q")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "QuitScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.__class__.__name__ != "QuitScreen"
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("s")  # save and quit
        await pilot.pause()
    assert (tmp_path / "film.ru.srt").exists()


async def test_help_screen(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.__class__.__name__ != "HelpScreen"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_main_screen_snapshot(snap_compare, tmp_path, size):
    app = ReviewApp(make_session(), tmp_path / "film.ru.srt", title="subctx review — film.srt")
    assert snap_compare(app, terminal_size=size, press=["n"])


async def test_the_edit_field_selects_its_text_so_typing_replaces_it(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "down", "down", "e")
        await pilot.pause()
        await pilot.press(*"Новая сцена.")
        await pilot.press("enter")
        await pilot.pause()
        if app.screen.__class__.__name__ == "ChangesScreen":
            await pilot.press("k")
        assert app.session.texts[3] == "Новая сцена."  # replaced, not prepended


async def test_a_hand_edit_survives_a_later_pick_in_the_same_scene(app):
    """The lost edit: cue 3 edited by hand, then an alternative picked on cue 2."""
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down", "down", "e")
        await pilot.pause()
        await pilot.press(*"Ты видишь сумку?")
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.texts[2] == "Ты видишь сумку?"
        await pilot.press("up", "2")  # pick the second alternative on cue 2
        await pilot.pause()
        if app.screen.__class__.__name__ == "ChangesScreen":
            await pilot.press("enter")  # Enter keeps: the machine lines only
        assert app.session.texts[2] == "Ты видишь сумку?"
        assert app.session.kept == [2]


async def test_carry_a_politeness_choice_with_preview(tmp_path):
    from subctx.decoding import DecodeOptions
    from subctx.formats.srt import parse_srt_text
    from subctx.review.session import ReviewSession
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    film = "".join(f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n{t}\n\n" for i, t in enumerate(
        ["Can you help me?", "Do you want coffee?", "Yes, please."], 1))
    sub = parse_srt_text(film)
    plan = plan_document(sub)
    texts = ["Вы можете мне помочь?", "Ты хочешь кофе?", "Да, пожалуйста."]
    session = ReviewSession(sub, plan, FakeTranslator(), DecodeOptions(context=1), texts)
    app = ReviewApp(session, tmp_path / "film.ru.srt")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ChangesScreen"
        await pilot.press("k")
        assert session.texts[1].startswith("Вы")
        await pilot.press("u")  # one undo takes the whole carry back
        assert session.texts[1] == "Ты хочешь кофе?"


async def test_the_header_follows_the_session(app):
    """Title and sub-title come from the app's reactives (flagged, unsaved, status)."""
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.title == "subctx review — film.srt — 3 choices to review"
        assert app.sub_title == "film.ru.srt"
        await pilot.press("n", "2")
        await pilot.pause()
        await pilot.press("k")
        assert (app.flagged, app.unsaved) == (2, True)
        assert app.title == "subctx review — film.srt — 2 choices to review"
        assert app.sub_title == "film.ru.srt [unsaved]"
        await pilot.press("s")
        assert app.sub_title == "film.ru.srt  saved"
        await pilot.press("u")
        assert app.title == "subctx review — film.srt — 3 choices to review"
        assert app.sub_title == "film.ru.srt [unsaved]"  # no longer saved


async def test_the_table_rows_follow_the_session(app):
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one("CueTable")
        await pilot.press("n", "a")  # accept cue 2: its flag becomes a tick
        assert table.get_cell("1", "flag").plain == "✓"
        await pilot.press("3")  # cue 3 (now current): its third alternative
        await pilot.pause()
        assert table.get_cell("2", "ru").plain == app.session.texts[2] != "Ты её видишь?"
        await pilot.press("u")
        assert table.get_cell("2", "ru").plain == "Ты её видишь?"


async def test_g_translates_the_line_again_as_said_by_a_woman_then_a_man(tmp_path):
    from subctx.contract import Translation
    from subctx.controls import GenderTags
    from subctx.decoding import DecodeOptions
    from subctx.formats.srt import parse_srt_text
    from subctx.review.session import ReviewSession
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    class Gendered(FakeTranslator):
        def translate(self, requests, **kwargs):
            plain = super().translate(requests, **kwargs)
            return [Translation("Я устала.", -0.5) if "<fem>" in r.controls else
                    Translation("Я устал.", -0.5) if "<masc>" in r.controls else t
                    for r, t in zip(requests, plain, strict=True)]

    sub = parse_srt_text("1\n00:00:01,000 --> 00:00:02,000\nI was tired.\n\n")
    options = DecodeOptions(context=1, genders=GenderTags("<masc>", "<fem>"))
    session = ReviewSession(sub, plan_document(sub), Gendered(), options, ["Я устал."])
    app = ReviewApp(session, tmp_path / "film.ru.srt")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert session.texts[0] == "Я устала." and session.speakers[0] == "feminine"
        await pilot.press("g")
        await pilot.pause()
        assert session.texts[0] == "Я устал."
        await pilot.press("u")
        assert session.texts[0] == "Я устала."
        assert session.speakers[0] == "feminine"  # undo gives back the speaker given before
    # a line whose English shows no speaker is left alone (no I or me in it)
    door = parse_srt_text("1\n00:00:01,000 --> 00:00:02,000\n[door slams]\n\n")
    quiet = ReviewSession(door, plan_document(door), Gendered(), options, ["[хлопает дверь]"])
    app = ReviewApp(quiet, tmp_path / "door.ru.srt")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert quiet.texts == ["[хлопает дверь]"] and not quiet.speakers
        assert not quiet.accepted and not quiet.dirty
    # a model without speaker-gender tags says so and changes nothing
    plain = ReviewSession(sub, plan_document(sub), FakeTranslator(), DecodeOptions(context=1),
                          ["Я устал."])
    assert plain.set_speaker(0, "feminine") is None and plain.texts == ["Я устал."]


def test_g_turns_the_past_tense_where_the_model_did_not_follow_its_tag():
    """The tag is asked first; a translation still in the other gender («Я потерял сумку»
    asked as a woman) becomes its variant with the past tense turned, which the model
    continues (supports_forced_start: here the FakeTranslator keeps the string variant)."""
    from subctx.contract import Translation
    from subctx.controls import GenderTags
    from subctx.decoding import DecodeOptions
    from subctx.formats.srt import parse_srt_text
    from subctx.review.choices import toward_speaker
    from subctx.review.session import ReviewSession
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    class Stubborn(FakeTranslator):
        def translate(self, requests, **kwargs):
            return [Translation("Ты поможешь мне? Я потерял сумку.", -0.5) for _ in requests]

    sub = parse_srt_text("1\n00:00:01,000 --> 00:00:02,000\nCan you help me? I lost my bag.\n")
    options = DecodeOptions(context=1, genders=GenderTags("<masc>", "<fem>"))
    session = ReviewSession(sub, plan_document(sub), Stubborn(), options,
                            ["Ты поможешь мне? Я потерял сумку."])
    session.set_speaker(0, "feminine")
    assert session.texts[0] == "Ты поможешь мне? Я потеряла сумку."
    assert toward_speaker("Я потеряла сумку.", feminine=True) is None  # already hers
    assert toward_speaker("Он потерял сумку.", feminine=True) is None  # no я: not the speaker's
    assert toward_speaker("Я потеряла сумку.", feminine=False) == "Я потерял сумку."


def _review(tmp_path, sub, texts: list[str], name: str = "film.ru.srt") -> ReviewApp:
    """The app on a film of its own (a parsed SubtitleFile) with these Russian lines."""
    from subctx.decoding import DecodeOptions
    from subctx.review.session import ReviewSession
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    session = ReviewSession(sub, plan_document(sub), FakeTranslator(), DecodeOptions(context=1),
                            texts)
    return ReviewApp(session, tmp_path / name)


def _notices(app: ReviewApp) -> list:
    return list(app._notifications)


async def test_a_failed_save_says_why_and_keeps_the_work(tmp_path):
    """Saving into a 'folder' that is a file: one error line naming the file and the reason;
    the review stays open and unsaved, and 'Save and quit' that fails does not quit."""
    (tmp_path / "[red]blocked").write_text("")
    app = ReviewApp(make_session(), tmp_path / "[red]blocked" / "film.ru.srt")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "a", "s")
        await pilot.pause()
        [notice] = _notices(app)
        assert notice.severity == "error" and not notice.markup  # shown verbatim
        assert notice.message.startswith(f"could not save {app.output}: ")
        assert notice.message.split(": ")[-1] in ("File exists", "Not a directory")
        assert app.session.dirty and app.sub_title == "film.ru.srt [unsaved]  save failed"
        assert 1 in app.session.accepted  # the accept is still there
        await pilot.press("q")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "QuitScreen"
        await pilot.press("s")  # save and quit: the save fails, so no quitting
        await pilot.pause()
        assert app.return_code is None and app.screen.__class__.__name__ == "Screen"
        assert len(_notices(app)) == 2 and app.session.dirty
        await pilot.press("q", "q")  # quit without saving
        await pilot.pause()
    assert app.return_code == 0


def test_review_says_why_the_first_save_failed(tmp_path, monkeypatch):
    """`subctx review` of a fresh translation that cannot be written: one error line and
    exit code 1, no traceback."""
    from typer.testing import CliRunner

    from subctx.cli import app as cli
    from tests.review_fixtures import FILM

    (tmp_path / "film.srt").write_text(FILM, encoding="utf-8")
    (tmp_path / "blocked").write_text("")
    monkeypatch.setattr("subctx.cli._bundle", lambda choice: None)
    monkeypatch.setattr("subctx.review.loader.open_session", lambda *a, **k: make_session())
    target = tmp_path / "blocked" / "film.ru.srt"
    result = CliRunner().invoke(cli, ["review", str(tmp_path / "film.srt"), "-o", str(target)],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"error: could not save {target}: " in result.output
    assert "Traceback" not in result.output


async def test_square_brackets_are_film_text_not_markup(tmp_path):
    """'[inaudible]' and an edit with '[/смеётся]' show as written: the table, the detail pane,
    and the preview of changed lines."""
    from textual.widgets._data_table import default_cell_formatter

    from subctx.formats.srt import parse_srt_text
    from subctx.review.widgets import CueDetail

    sub = parse_srt_text("1\n00:00:01,000 --> 00:00:02,000\nI heard him say [inaudible] to you.\n\n"
                         "2\n00:00:02,500 --> 00:00:04,000\nDid you see that?\n\n"
                         "3\n00:00:04,500 --> 00:00:06,000\n[Door slams] Who is there?\n\n")
    app = _review(tmp_path, sub, ["Я слышал, как он сказал [неразборчиво].",
                                  "Ты видел это? [Music]", "Кто там?", "[Хлопает дверь]"])
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.table

        def shown(unit: int, column: str) -> str:
            return default_cell_formatter(table.get_cell(str(unit), column)).plain

        assert shown(0, "en") == "I heard him say [inaudible] to you."
        assert shown(0, "ru") == "Я слышал, как он сказал [неразборчиво]."
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"[b]Он[/b] сказал [/смеётся]", "enter")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ChangesScreen"
        preview = app.screen.query_one("#changes Static").visual.plain
        assert "- Ты видел это? [Music]" in preview
        await pilot.press("k")
        assert shown(0, "ru") == "[b]Он[/b] сказал [/смеётся]"
        assert "Russian  [b]Он[/b] сказал [/смеётся]" in app.query_one(CueDetail).visual.plain
        assert shown(3, "en") == "Door slams"  # a sound annotation: the brackets were the file's
        assert shown(3, "ru") == "[Хлопает дверь]"


async def test_webvtt_cue_ids_are_shown_as_they_are(tmp_path):
    from subctx.formats.vtt import parse_vtt_text

    sub = parse_vtt_text("WEBVTT\n\nintro\n00:00:01.000 --> 00:00:03.000\nHello.\n\n"
                         "00:00:03.500 --> 00:00:05.000\nCan you see it?\n\n"
                         "chapter-two-opening\n00:00:30.000 --> 00:00:32.000\nA new scene.\n")
    app = _review(tmp_path, sub, ["Привет.", "Ты её видишь?", "Новая сцена."], "film.ru.vtt")
    async with app.run_test(size=(120, 40)):
        table = app.table
        assert [table.get_cell(str(u), "cue").plain for u in range(3)] == \
            ["intro", "2", "chapter-two-opening"]
        assert table.columns["cue"].width == 10  # as wide as a long id allows


async def test_every_way_out_asks_about_unsaved_changes(app):
    """ctrl+q and the command palette's Quit ask as q does."""
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "a")
        assert app.session.dirty
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "QuitScreen" and app.return_code is None
        await pilot.press("ctrl+q")  # asked once, not twice
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        [palette_quit] = [c for c in app.get_system_commands(app.screen) if c.title == "Quit"]
        await palette_quit.callback()
        await pilot.pause()
        assert app.screen.__class__.__name__ == "QuitScreen" and app.return_code is None
        await pilot.press("s")
        await pilot.pause()
    assert app.return_code == 0 and not app.session.dirty


async def test_a_change_after_a_save_clears_the_saved_status(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        assert app.sub_title == "film.ru.srt  saved"
        await pilot.press("n", "a")  # accepting a line is a change too
        assert app.sub_title == "film.ru.srt [unsaved]"
        await pilot.press("s", "e")
        await pilot.pause()
        await pilot.press(*"Ты видишь?", "enter")
        await pilot.pause()
        assert app.sub_title == "film.ru.srt [unsaved]"


async def test_the_preview_says_how_a_kept_line_was_decided():
    """A line only accepted is not 'edited by you'."""
    app = ReviewApp(make_session(context=2), Path("film.ru.srt"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("down", "down", "a")  # cue 3 accepted as it is
        app.table.move_to(0)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"Мама, где моя сумка?", "enter")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "ChangesScreen"
        preview = app.screen.query_one("#changes Static").visual.plain
        assert "cue 3: kept (accepted by you) Ты её видишь?" in preview
        assert "edited by you" not in preview


async def test_carry_on_a_line_without_ty_or_vy_says_so(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")  # «Мама, я не могу найти свою сумку.»
        await pilot.pause()
        [notice] = _notices(app)
        assert notice.message == "this line has no ты/вы to carry (none, or both)"
