"""The reading-speed fit (subctx.reading): with a stand-in translator whose n-best and scores are
a table, and with the tiny real model."""

from collections.abc import Sequence

import pytest

from subctx.batch import DEFAULT_LAYOUT, load, translate_files
from subctx.contract import Hypothesis, Request, Translation
from subctx.decoding import DecodeOptions, translate_documents
from subctx.files import Job
from subctx.formats.srt import parse_srt_text
from subctx.reading import (
    DEFAULT_FIT,
    NO_FIT,
    ReadingFit,
    decoder_request,
    fit_reading_speed,
    keeps_choices,
)
from subctx.units import plan_document, render_cue
from subctx.wrap import Layout, readability
from tests.helpers import write_srt

LONG = "That is a very long line."
LONG_RU = [("Это очень длинная строка.", -0.5),  # 25 characters: 25 cps over 1 s
           ("Это длинная строка.", -0.6),  # 19: still over 17 cps
           ("Длинная строка.", -0.65),  # 15: fits, 0.15 below per token
           ("Строка.", -1.5)]  # 7: fits, but 1 nat per token below (0.5 in all)


class Paraphraser:
    """Translates from a table: each English line's translations, best first, with their
    log-probability per token (what `score` answers too; -5 for anything else). Records the
    requests it was asked alternatives for."""

    max_context = 1
    uses_target_context = True
    supports_forced_start = False

    def __init__(self, table: dict[str, list[tuple[str, float]]]):
        self.table = table
        self.asked: list[Request] = []  # requests with num_hypotheses > 1

    def _hypothesis(self, english: str, text: str) -> Hypothesis:
        tokens = len(text.split()) + 1
        return Hypothesis(text, dict(self.table.get(english, [])).get(text, -5.0) * tokens,
                          tokens)

    def translate(self, requests: Sequence[Request], beam_size: int = 4, num_hypotheses: int = 1,
                  return_attention: bool = False) -> list[Translation]:
        out = []
        for r in requests:
            options = self.table.get(r.text) or [(r.text.upper(), -0.5)]
            translation = Translation(options[0][0], options[0][1])
            if num_hypotheses > 1:
                self.asked.append(r)
                translation.alternatives = [self._hypothesis(r.text, text)
                                            for text, _ in options[:num_hypotheses]]
            out.append(translation)
        return out

    def score(self, requests: Sequence[Request], candidates: Sequence[str]) -> list[Hypothesis]:
        return [self._hypothesis(r.text, c) for r, c in zip(requests, candidates, strict=True)]


def srt(*cues: tuple[float, float, str]) -> str:
    def stamp(t: float) -> str:
        return f"00:00:{int(t):02d},{round(t % 1 * 1000):03d}"

    return "".join(f"{i}\n{stamp(s)} --> {stamp(e)}\n{text}\n\n"
                   for i, (s, e, text) in enumerate(cues, 1))


def fitted(table, *cues, layout=DEFAULT_LAYOUT, fit=DEFAULT_FIT, options=None):
    """Translate and fit one document; (translations, report, translator)."""
    sub = parse_srt_text(srt(*cues))
    model = Paraphraser(table)
    options = options or DecodeOptions(context=1)
    [result] = translate_documents([plan_document(sub)], model, options)
    model.asked.clear()
    report = fit_reading_speed(result, [(c.start, c.end) for c in sub.cues], model, options,
                               layout, fit)
    return result, report, model


def test_a_cue_over_the_limit_gets_the_likeliest_alternative_that_fits():
    result, report, model = fitted({LONG: LONG_RU}, (1.0, 2.0, LONG), (3.0, 9.0, "Fine."))
    assert result.texts() == ["Длинная строка.", "FINE."]  # not «Строка.»: outside the margin
    assert report.over == [0] and report.shortened == [0] and report.units == 1
    assert [r.text for r in model.asked] == [LONG]  # the cue under the limit paid nothing


def test_nothing_outside_the_margin_and_a_cue_nothing_fits_keeps_its_translation():
    table = {LONG: [LONG_RU[0], LONG_RU[1], ("Длинная строка.", -1.2), LONG_RU[3]]}
    result, report, _ = fitted(table, (1.0, 2.0, LONG))
    assert result.texts() == [LONG_RU[0][0]] and report.over == [0] and not report.shortened
    # where asked, the shortest candidate within the margin, though the cue stays over
    result, report, _ = fitted(table, (1.0, 2.0, LONG), fit=ReadingFit(partial=True))
    assert result.texts() == ["Это длинная строка."] and report.shortened == [0]
    # a wider margin lets the less likely one in
    result, _, _ = fitted(table, (1.0, 2.0, LONG), fit=ReadingFit(margin=0.8))
    assert result.texts() == ["Длинная строка."]
    # on the total log-probability «Строка.» (-1.5 * 2 tokens) is 0.5 below the decoder's
    # translation (-0.5 * 5), «Длинная строка.» 1.1: a total margin lets short ones in
    result, _, _ = fitted(table, (1.0, 2.0, LONG), fit=ReadingFit(margin=0.5, per_token=False))
    assert result.texts() == ["Строка."]


def test_the_fit_uses_the_decoders_request_and_later_cues_keep_their_context():
    table = {"Where is he?": [("Где он?", -0.3)], LONG: LONG_RU,
             "And then?": [("И что потом?", -0.3)]}
    result, report, model = fitted(table, (0.0, 2.0, "Where is he?"), (2.5, 3.5, LONG),
                                   (4.0, 6.0, "And then?"))
    [asked] = model.asked
    assert asked == Request(LONG, ("Where is he?",), ("Где он?",))
    assert result.texts() == ["Где он?", "Длинная строка.", "И что потом?"]
    assert result.contexts == [[], [0], [1]] and report.units == 1


def test_no_address_or_gender_choice_is_changed():
    english = "You know, he left for good."
    table = {english: [("Ты знаешь, он ушёл навсегда.", -0.5), ("Вы знаете, он ушёл.", -0.4),
                       ("Знаешь, он ушёл.", -0.6)]}  # 28, 19 and 16 characters: 20 fit
    result, _, _ = fitted(table, (1.0, 2.2, english))
    assert result.texts() == ["Знаешь, он ушёл."]
    assert keeps_choices("Ты знаешь, он ушёл навсегда.", "Он ушёл навсегда.")  # says less
    assert not keeps_choices("Он ушёл навсегда, знаешь.", "Вы знаете, он ушёл.")
    assert not keeps_choices("Я собиралась уйти отсюда.", "Я собирался уйти.")
    assert not keeps_choices("Я нашла её вчера вечером.", "Я нашла его.")


def test_a_shorter_translation_shows_no_other_speakers_gender():
    """Another verb in the other gender is a change too, not only one stem's two forms (a user
    trial: «Я приготовила ужин для тебя.» became «Я ужинал для тебя.»)."""
    english = "I made dinner for you."
    table = {english: [("Я приготовила ужин для тебя.", -0.5), ("Я ужинал для тебя.", -0.55),
                       ("Я сделала ужин тебе.", -0.6)]}  # 28, 18 and 20 characters: 22 fit
    result, report, _ = fitted(table, (10.0, 11.3, english))
    assert result.texts() == ["Я сделала ужин тебе."] and report.shortened == [0]
    assert not keeps_choices("Я приготовила ужин для тебя.", "Я ужинал для тебя.")
    assert not keeps_choices("Рада тебя видеть, правда.", "Рад тебя видеть.")
    # none shown before: none brought in; one shown: it may be left out, or said another way
    assert not keeps_choices("Ужин для тебя готов.", "Я ужинал.")
    assert keeps_choices("Я приготовила ужин для тебя.", "Ужин для тебя.")
    assert keeps_choices("Я приготовила ужин для тебя.", "Я сварила ужин.")
    assert keeps_choices("Я знаю, что он ушёл навсегда.", "Он ушёл.")  # not the speaker's


def test_a_cue_over_its_lines_gets_fewer_lines_and_turns_are_not_shortened_in_vain():
    english = "Something long enough for three lines."
    table = {english: [("Что-то достаточно длинное для трёх строк подряд.", -0.5),
                       ("Что-то длинное для трёх строк.", -0.6)]}
    narrow = Layout(width=20, max_lines=2, max_cps=17)
    result, report, _ = fitted(table, (0.0, 9.0, english), layout=narrow)
    assert result.texts() == ["Что-то длинное для трёх строк."]
    assert report.shortened == [0]
    # three turns are three lines whatever they say: not decoded again
    result, report, model = fitted(table, (0.0, 9.0, "- One.\n- Two.\n- Three."),
                                   layout=narrow)
    assert report.over == [0] and not model.asked and not report.shortened


def test_a_dialogue_cue_is_fitted_turn_by_turn():
    table = {"Are you coming with us tonight?": [("Ты пойдёшь с нами сегодня вечером?", -0.5),
                                                 ("Пойдёшь с нами?", -0.6)],
             "No, I am staying here.": [("Нет, я остаюсь здесь.", -0.5),
                                        ("Нет, остаюсь.", -0.55)]}
    result, report, _ = fitted(table, (0.0, 2.5, "- Are you coming with us tonight?\n"
                                                 "- No, I am staying here."))
    # 60 characters in 2.5 s; 42 fit: the likeliest combination that fits (41 characters;
    # 33 with both turns shortened)
    assert result.texts() == ["Пойдёшь с нами?", "Нет, я остаюсь здесь."]
    assert report.shortened == [0]
    # a cue that would have to lose more than `max_cut` of its characters is not decoded
    result, report, model = fitted(table, (0.0, 1.5, "- Are you coming with us tonight?\n"
                                                     "- No, I am staying here."))
    assert report.over == [0] and not report.units and not model.asked


def test_the_fit_turned_off_decodes_nothing_again():
    result, report, model = fitted({LONG: LONG_RU}, (1.0, 2.0, LONG), fit=NO_FIT)
    assert result.texts() == [LONG_RU[0][0]] and report.over == [0] and not model.asked


def test_translate_files_fits_and_the_summary_lists_what_stays_over(tmp_path):
    table = {LONG: LONG_RU, "Far too long for half a second.": [("Слишком длинно.", -0.5)]}
    src = write_srt(tmp_path / "a.srt", srt((1.0, 2.0, LONG), (3.0, 3.5,
                                                             "Far too long for half a second."),
                                            (5.0, 9.0, "Fine.")))
    loaded, _ = load([Job(src, tmp_path / "a.ru.srt")])
    [written], failed = translate_files(loaded, Paraphraser(table), DecodeOptions(context=1))
    assert not failed and written.shortened == [0] and written.too_fast == [1]
    assert "Длинная строка." in (tmp_path / "a.ru.srt").read_text(encoding="utf-8")
    [written], _ = translate_files(loaded, Paraphraser(table), DecodeOptions(context=1),
                                   fit=NO_FIT)
    assert written.shortened == [] and written.too_fast == [0, 1]


@pytest.fixture(scope="module")
def tiny(tiny_bundle):
    from subctx.backends import open_backend

    return open_backend(tiny_bundle, device="cpu", threads=1)


def test_the_tiny_model_gets_only_shorter_alternatives_within_the_margin(tiny):
    # whatever the random model writes, the fit keeps to its rules
    cues = [(0.0, 0.6, "Hello there, how are you?"), (1.0, 1.4, "I do not know what you mean."),
            (2.0, 30.0, "Where is the door?"), (30.5, 30.9, "She said it was fine.")]
    sub = parse_srt_text(srt(*cues))
    options = DecodeOptions(context=1, beam_size=2)
    [result] = translate_documents([plan_document(sub)], tiny, options)
    before = result.texts()
    requests = [decoder_request(result, u, options) for u in range(len(before))]
    fit = ReadingFit(margin=0.5, hypotheses=6)
    report = fit_reading_speed(result, [(c.start, c.end) for c in sub.cues], tiny, options,
                               Layout(max_cps=40), fit)
    after = result.texts()
    lines = [render_cue(cue, before, 42, 2) for cue in result.plan.layouts]
    over = readability([(c.start, c.end) for c in sub.cues], lines, 2, 40).over
    assert report.over == over and 2 not in over  # 28 s: never too fast
    assert set(report.shortened) <= set(over) and report.units <= len(over)
    assert after[2] == before[2]
    for u in report.shortened:
        assert len(after[u]) < len(before[u]) and len(after[u]) <= 40 * 0.6
        old, new = tiny.score([requests[u]] * 2, [before[u], after[u]])
        assert new.log_prob / new.tokens >= old.log_prob / old.tokens - fit.margin - 1e-3
        [again] = tiny.translate([requests[u]], beam_size=6, num_hypotheses=6)
        assert after[u] in {h.text for h in again.alternatives}
    assert {u for u, (a, b) in enumerate(zip(before, after, strict=True)) if a != b} \
        == set(report.shortened)
