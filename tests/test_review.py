"""The review session (no UI) and the Russian choice variants."""

import json

from subctx.contract import AttentionMap, Translation
from subctx.decoding import DecodeOptions
from subctx.review.choices import ambiguous_words, forced_head, forced_variants
from subctx.review.session import ReviewSession
from tests.review_fixtures import make_session


def test_ambiguous_words_and_variants():
    kinds = {k for _, _, k in ambiguous_words("Did you see it? I told them.")}
    assert kinds == {"ты/вы", "gender", "speaker gender", "number/gender"}
    assert forced_variants("Can you help me?", "Вы можете мне помочь?") == \
        ["Ты можешь мне помочь?"]
    assert forced_variants("Were you there?", "Ты был там?") == ["Вы были там?"]
    assert forced_variants("It was on the table.", "Она была на столе.") == [
        "Он был на столе.", "Оно было на столе.", "Они были на столе."]
    assert forced_variants("I got lost.", "Я заблудилась.") == ["Я заблудился."]
    assert forced_variants("Hello there.", "Привет.") == []


def test_flags_need_an_ambiguous_word_and_close_alternatives():
    s = make_session()
    english = [u.text for u in s.plan.units]
    flagged = [english[u] for u in s.flagged_units()]
    # "It was on the table." has close gender variants; "A new scene starts here." has none
    assert "It was on the table." in flagged and "Can you see it?" in flagged
    assert "Where is your brother?" in flagged and len(flagged) == 3
    assert "A new scene starts here." not in flagged and "At school." not in flagged
    review = s.reviews[1]
    assert review.alternatives[0].text == "Она была на столе."
    assert abs(sum(a.share for a in review.alternatives) - 1.0) < 1e-9
    assert {a.origin for a in review.alternatives} == {"n-best", "variant"}
    assert review.hint and review.hint[0] == ("my", 1.0)


def test_hint_from_a_context_encoders_attention():
    s = make_session()
    context = AttentionMap(["<ctx>", "▁my", "▁bag", ".", "</s>"],  # context tokens
                           ["▁It", "▁was", "</s>"],  # current sentence tokens
                           [[0.1, 0.1, 0.7, 0.05, 0.05]] * 3)
    hint = s._hint(Translation("Она была.", -0.1, context_attention=context), "It was.")
    assert [w for w, _ in hint] == ["bag", "my"] and abs(hint[0][1] - 0.75) < 1e-9  # "bag" + "."


def test_changing_a_line_retranslates_its_scene_only():
    s = make_session()
    assert s.dependents(0) == [1, 2] and s.dependents(3) == [4, 5]
    follow = s.set_text(1, "Он был на столе.", "pick 2")
    assert [c.unit for c in follow] == [2]
    assert s.texts[2] == "Ты её видишь? (после правки)"
    assert s.texts[3] == "Здесь начинается новая сцена."  # after the 23 s pause: untouched
    s.revert(follow)
    assert s.texts[2] == "Ты её видишь?" and s.texts[1] == "Он был на столе."
    assert 1 not in s.flagged_units()


def test_a_persons_line_is_never_retranslated():
    """The lost edit: edit line 3 by hand, then pick an alternative on line 2 of the scene."""
    s = make_session()
    s.set_text(2, "Ты видишь сумку? (моя правка)")
    follow = s.set_text(1, "Он был на столе.", "pick 2")
    assert follow == [] and s.kept == [2]
    assert s.texts[2] == "Ты видишь сумку? (моя правка)"
    s.accept(4)  # accepted lines are the person's too
    before = s.texts[4]
    follow = s.set_text(3, "Тут начинается новая сцена.")
    assert 4 in s.kept and s.texts[4] == before and all(c.unit != 4 for c in follow)


def test_undo_restores_the_edit_and_its_follow_ups():
    s = make_session()
    s.set_text(0, "Мама, я не нашла сумку.")
    assert s.texts[1].endswith("(после правки)")
    changes = s.undo()
    assert {c.unit for c in changes} == {0, 1, 2}
    assert s.texts[0] == "Мама, я не могу найти свою сумку." and s.texts[1] == "Она была на столе."
    assert s.undo() == []


def test_save_writes_srt_and_review_log(tmp_path):
    s = make_session()
    s.set_text(2, "Вы её видите?", "pick 2")
    s.accept(1)
    out = tmp_path / "film.ru.srt"
    log = s.save(out)
    text = out.read_text(encoding="utf-8")
    assert "00:00:05,500 --> 00:00:07,000\nВы её видите?" in text
    assert "- Где твой брат?\n- В школе." in text
    state = json.loads(log.read_text(encoding="utf-8"))
    entries = state["decisions"]
    assert [e["action"] for e in entries] == ["pick 2", "accept"]
    assert state["yours"] == [1, 2]
    assert state["lines"][2] == {"english": "Can you see it?", "russian": "Вы её видите?"}
    assert entries[0]["before"] == "Ты её видишь?" and entries[0]["after"] == "Вы её видите?"
    assert entries[0]["alternatives"] and "probability" in entries[0]["alternatives"][0]
    assert not s.dirty


def test_reopening_resumes_the_decisions_of_the_review_log(tmp_path):
    s = make_session()
    s.set_text(2, "Ты видишь сумку? (моя правка)")
    s.accept(4)
    s.set_text(1, "Он был на столе.", "pick 2")
    s.undo()  # the pick is undone: line 2 is the machine's again
    log = s.save(tmp_path / "film.ru.srt")
    assert "\\u" not in log.read_text(encoding="utf-8")  # readable UTF-8
    again = make_session()
    assert again.resume(log) == 4
    assert again.accepted == {2, 4}
    assert 2 not in again.flagged_units() and 4 not in again.flagged_units()
    entries = json.loads(log.read_text(encoding="utf-8"))["decisions"]
    entries[0]["english"] = "Another film's line."
    # a log of format 1 (the bare list of decisions) is replayed
    (tmp_path / "other.json").write_text(json.dumps(entries), encoding="utf-8")
    old = make_session()
    assert old.resume(tmp_path / "other.json") == 3  # the stranger is skipped
    assert old.accepted == {4}


def test_a_flag_needs_a_close_runner_up_that_chose_differently():
    from subctx.review.session import Alternative, choice_is_close

    you = ambiguous_words("Can you see it?")
    wording_only = [Alternative("Ты её видишь?", -1.0, "n-best"),
                    Alternative("Ты видишь её?", -1.1, "n-best"),
                    Alternative("Вы её видите?", -5.0, "variant")]
    assert not choice_is_close(wording_only, you)  # the close one chose the same
    close = [Alternative("Ты её видишь?", -1.0, "n-best"),
             Alternative("Вы её видите?", -1.5, "variant")]
    assert choice_is_close(close, you)
    assert not choice_is_close(close, ambiguous_words("Hello there."))  # nothing to choose


def test_variants_are_written_by_the_model_after_the_flipped_word():
    from tests.review_fixtures import FakeTranslator

    class Forcing(FakeTranslator):
        supports_forced_start = True
        agree = {"Вы": "Вы её видите?", "Ты": "Ты её видишь?"}

        def translate(self, requests, **kw):
            out = super().translate(requests, **kw)
            for r, t in zip(requests, out, strict=True):
                if r.forced_start:
                    t.text = self.agree.get(r.forced_start, r.forced_start + " ...")
            return out

    s = make_session()
    s.translator = Forcing()
    s.texts[2] = "Ты её видишь?"
    review = s.analyze(2, refresh=True)
    assert "Вы её видите?" in [a.text for a in review.alternatives]
    assert forced_head("Ты должен вернуться.", "Вы должен вернуться.") == "Вы"
    assert forced_head("Она была на столе.", "Она было на столе.") == "Она было"


def test_a_politeness_choice_carries_through_the_scene():
    from subctx.formats.srt import parse_srt_text
    from subctx.review.choices import politeness
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    film = "".join(f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n{t}\n\n" for i, t in enumerate(
        ["Can you help me?", "Do you want coffee?", "Yes, please.", "Are you tired?"], 1))
    sub = parse_srt_text(film)
    plan = plan_document(sub)
    texts = ["Вы можете мне помочь?", "Ты хочешь кофе?", "Да, пожалуйста.", "Ты устал?"]
    s = ReviewSession(sub, plan, FakeTranslator(), DecodeOptions(context=1), texts)
    s.accept(3)  # the person decided line 4 themselves
    changes = s.carry_choice(0)
    assert [c.unit for c in changes] == [1] and s.kept == [3]
    assert politeness(s.texts[1]) == "вы" and s.texts[3] == "Ты устал?"
    assert 1 in s.accepted  # carried by the person: theirs now
    carried = s.texts[1]
    s.set_text(0, "Вы мне поможете?")  # a later change earlier in the scene leaves it alone
    assert s.texts[1] == carried and 1 in s.kept
    s.undo()
    s.revert(changes)
    assert s.texts[1] == "Ты хочешь кофе?" and 1 not in s.accepted
    assert politeness("Да, пожалуйста.") is None and politeness("Вы можете?") == "вы"


def test_with_a_tagged_model_carrying_a_choice_translates_again_with_the_register_tag():
    from subctx.controls import RegisterCarry
    from subctx.formats.srt import parse_srt_text
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    class Tagged(FakeTranslator):
        """Writes «Вы хотели кофе?» (verb and all agreeing) when asked for <frm>."""

        asked: list = []

        def translate(self, requests, **kwargs):
            self.asked += [r.controls for r in requests]
            return [Translation("Вы хотели бы кофе?", -0.5) if "<frm>" in r.controls
                    else t for r, t in zip(requests, super().translate(requests, **kwargs),
                                           strict=True)]

    film = "".join(f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\n{t}\n\n" for i, t in enumerate(
        ["Can you help me?", "Do you want coffee? I made some."], 1))
    sub = parse_srt_text(film)
    model = Tagged()
    options = DecodeOptions(context=1, controls=("<fem>",), carry=RegisterCarry("<inf>", "<frm>"))
    s = ReviewSession(sub, plan_document(sub), model, options,
                      ["Вы можете мне помочь?", "Ты хотел бы кофе?"])
    [change] = s.carry_choice(0)
    assert change.unit == 1 and s.texts[1] == "Вы хотели бы кофе?"
    assert model.asked[0] == ("<frm>", "<fem>")  # the register tag, then the others (an "I")


TRICKY = ("1\n00:00:01,000 --> 00:00:03,000\nJOHN: Did you see my keys?\n\n"
          "2\n00:00:03,500 --> 00:00:05,000\n(sighs) I think you lost them.\n\n"
          "3\n00:00:05,500 --> 00:00:07,000\n- Where is your brother?\n- At school.\n")


def tricky_session() -> ReviewSession:
    from subctx.contract import Request
    from subctx.formats.srt import parse_srt_text
    from subctx.guard import GuardSettings
    from subctx.units import plan_document
    from tests.review_fixtures import FakeTranslator

    sub = parse_srt_text(TRICKY)
    plan = plan_document(sub)
    translator = FakeTranslator()
    texts = [translator._text(Request(u.text)) for u in plan.units]
    return ReviewSession(sub, plan, translator,
                         DecodeOptions(context=1, guard=GuardSettings(enabled=False)), texts)


def reread(path, session: ReviewSession):
    from subctx.review.loader import read_translation, translated_cues
    from subctx.review.session import read_saved_review

    log = path.with_suffix(".review.json")
    return read_translation(session.plan, translated_cues(session.plan, path, None),
                            read_saved_review(log, session.plan))


def test_reopening_gives_back_every_line_as_saved(tmp_path):
    s = tricky_session()
    words = next(u for u, unit in enumerate(s.plan.units) if unit.text.startswith("I think"))
    s.set_text(words, "Мне кажется, ты их потерял.")
    out = tmp_path / "film.ru.srt"
    log = s.save(out)
    reading = reread(out, tricky_session())
    assert reading.texts == s.texts and not reading.yours and not reading.as_written
    assert not any(t.startswith("JOHN") for t in reading.texts)  # the label is not the line's
    again = tricky_session()
    again.texts = list(reading.texts)
    again.resume(log)
    assert words in again.accepted
    again.save(out)
    assert out.read_text(encoding="utf-8").count("JOHN:") == 1  # saved twice, one label


def test_lines_edited_in_another_program_are_kept_as_a_persons(tmp_path):
    s = tricky_session()
    out = tmp_path / "film.ru.srt"
    s.save(out)
    text = out.read_text(encoding="utf-8")
    text = text.replace(s.texts[0], "Ты видел мои ключи, Джон?")
    text = text.replace(f"- {s.texts[2]}\n- {s.texts[3]}", "Где брат? В школе.")
    out.write_text(text, encoding="utf-8")
    reading = reread(out, tricky_session())
    assert reading.texts[0] == "Ты видел мои ключи, Джон?"
    assert reading.yours == {0, 2, 3} and reading.as_written == {2: ["Где брат? В школе."]}
    mended = tricky_session()
    mended.texts = list(reading.texts)
    mended.as_written = dict(reading.as_written)
    assert mended.cue_lines()[2] == ["Где брат? В школе."]  # written as the person wrote it
    mended.set_text(2, "Где твой брат?")  # a line of it changed here: the cue is rebuilt
    assert mended.cue_lines()[2] == ["- Где твой брат?", "- В школе."]
    mended.undo()
    assert mended.cue_lines()[2] == ["Где брат? В школе."]


def test_undo_gives_back_whose_lines_were_whose():
    s = make_session()
    s.set_text(2, "Вы её видите?")
    s.set_text(2, "Вы её видите? Правда?")
    s.undo()
    assert s.texts[2] == "Вы её видите?" and 2 in s.accepted and 2 not in s.flagged_units()
    s.accept(4)
    s.undo()  # an accept is undone like any change
    assert 4 not in s.accepted and s.texts[2] == "Вы её видите?"


def test_the_same_text_again_accepts_the_line_and_translates_nothing():
    s = make_session()
    before = list(s.texts)
    assert s.set_text(1, s.texts[1], "pick 1") == []
    assert s.texts == before and 1 in s.accepted and 1 not in s.flagged_units()


def test_lines_translated_again_pass_the_context_scope():
    from subctx.decoding import SCOPES
    from subctx.guard import GuardSettings

    every = make_session()
    assert [c.unit for c in every.set_text(1, "Он был на столе.")] == [2]
    agreement = make_session(options=DecodeOptions(
        context=1, scope=SCOPES["agreement"], guard=GuardSettings(enabled=False)))
    # the fake's context mark changes no pronoun and no ты/вы: the line stays as it was
    assert agreement.set_text(1, "Он был на столе.") == []


def test_a_review_of_a_cp1251_film_reopens_its_utf8_translation(tmp_path, tiny_bundle):
    from rich.console import Console

    from subctx.batch import ModelChoice
    from subctx.bundle import load_bundle
    from subctx.review.loader import open_session

    film = tmp_path / "old.srt"
    film.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nHello there, Москва.\n".encode("cp1251"))
    choice = ModelChoice(model=tiny_bundle, device="cpu")
    bundle = load_bundle(tiny_bundle)
    first = open_session(film, None, bundle, choice, "cp1251", Console(quiet=True))
    out = tmp_path / "old.ru.srt"
    log = first.save(out)
    out.write_text(out.read_text(encoding="utf-8").replace(first.texts[0], "Привет, кафе ǔ."),
                   encoding="utf-8")  # written by subctx as UTF-8, with a letter cp1251 lacks
    again = open_session(film, out, bundle, choice, "cp1251", Console(quiet=True), log=log)
    assert again.texts[0] == "Привет, кафе ǔ." and 0 in again.accepted
