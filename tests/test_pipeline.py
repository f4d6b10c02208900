"""The document scheduler, with a transparent stand-in translator (upper-cases its input)."""

import json
from collections.abc import Sequence

from subctx.contract import Hypothesis, Request, Translation
from subctx.decoding import SCHEDULES, SCOPES, DecodeOptions, translate_documents
from subctx.formats.srt import parse_srt_text
from subctx.guard import GuardSettings
from subctx.units import plan_document


class Recorder:
    """Translates by upper-casing and records every request and batch it saw."""

    supports_forced_start = False

    def __init__(self, max_context: int = 3, uses_target_context: bool = True):
        self.max_context = max_context
        self.uses_target_context = uses_target_context
        self.batches: list[list[Request]] = []

    def translate(self, requests: Sequence[Request], beam_size: int = 4, num_hypotheses: int = 1,
                  return_attention: bool = False) -> list[Translation]:
        self.batches.append(list(requests))
        return [Translation(r.text.upper(), -0.5) for r in requests]

    def score(self, requests: Sequence[Request], candidates: Sequence[str]) -> list[Hypothesis]:
        return [Hypothesis(c, -0.5 * len(c.split()), len(c.split()) + 1) for c in candidates]

    def seen(self) -> dict[str, Request]:
        return {r.text: r for batch in self.batches for r in batch}


def doc(*cues):
    text = "".join(f"{i}\n{s} --> {e}\n{t}\n\n" for i, (s, e, t) in enumerate(cues, 1))
    return plan_document(parse_srt_text(text))


FILM = doc(("00:00:01,000", "00:00:02,000", "Where is he?"),
           ("00:00:02,500", "00:00:04,000", "He left."),
           ("00:00:11,000", "00:00:12,000", "Gap of exactly seven."),
           ("00:00:30,000", "00:00:31,000", "- New scene.\n- Yes."))


def test_context_on_both_sides_follows_the_rule():
    rec = Recorder()
    [result] = translate_documents([FILM], rec, DecodeOptions(context=1))
    seen = rec.seen()
    assert seen["Where is he?"].source_context == ()
    assert seen["He left."].source_context == ("Where is he?",)
    assert seen["He left."].target_context == ("WHERE IS HE?",)
    assert seen["Gap of exactly seven."].source_context == ("He left.",)
    assert seen["New scene."].source_context == ()
    assert seen["Yes."].source_context == ("New scene.",)
    assert seen["Yes."].target_context == ("NEW SCENE.",)
    assert result.cue_lines()[3] == ["- NEW SCENE.", "- YES."]
    assert result.contexts == [[], [0], [1], [], [3]]


SEQUENTIAL = dict(schedule=SCHEDULES["sequential"], guard=GuardSettings(enabled=False))


def test_independent_chains_share_batches_and_documents_batch_together():
    rec = Recorder()
    translate_documents([FILM, FILM], rec, DecodeOptions(context=1, **SEQUENTIAL))
    first = [r.text for r in rec.batches[0]]
    # first cue and first cue after the 26 s pause of both files, all in one batch
    assert sorted(first) == sorted(["Where is he?", "New scene."] * 2)
    assert sum(len(b) for b in rec.batches) == 10
    assert len(rec.batches) == 3


def test_context_zero_and_source_only_models_translate_everything_at_once():
    for options, model in [(DecodeOptions(context=0), Recorder()),
                           (DecodeOptions(context=2), Recorder(uses_target_context=False))]:
        translate_documents([FILM], model, options)
        assert len(model.batches) == 1 and len(model.batches[0]) == 5


def test_context_is_capped_by_the_model_and_k2_walks_back():
    rec = Recorder(max_context=2)
    translate_documents([FILM], rec, DecodeOptions(context=3))
    assert rec.seen()["Gap of exactly seven."].source_context == ("Where is he?", "He left.")
    rec = Recorder(max_context=0)
    translate_documents([FILM], rec, DecodeOptions(context=3))
    assert all(r.source_context == () for r in rec.seen().values())


def test_larger_max_gap_joins_scenes():
    rec = Recorder()
    translate_documents([FILM], rec, DecodeOptions(context=1, max_gap=30.0))
    assert rec.seen()["New scene."].source_context == ("Gap of exactly seven.",)


def test_progress_callbacks_and_empty_documents():
    empty = doc(("00:00:01,000", "00:00:02,000", "♪"))
    rec = Recorder()
    finished, units = [], []
    results = translate_documents([empty, FILM], rec, DecodeOptions(),
                                  on_units_done=lambda d, u: units.extend(u),
                                  on_document_done=lambda d, r: finished.append(d))
    assert sorted(finished) == [0, 1] and sorted(units) == [0, 1, 2, 3, 4]
    assert results[0].cue_lines() == [["♪"]]


def test_empty_model_output_keeps_the_english_with_a_warning():
    class Mute(Recorder):
        def translate(self, requests, **kw):
            return [Translation("", -9.0) for _ in requests]

    [result] = translate_documents([FILM], Mute(), DecodeOptions())
    assert result.cue_lines()[0] == ["Where is he?"]
    assert len(result.warnings) == 5


class Chained(Recorder):
    """Output depends on the prefix: one more '#' than the previous translation (at most 3)."""

    def translate(self, requests, **kw):
        self.batches.append(list(requests))
        out = []
        for r in requests:
            marks = min(3, (r.target_context[-1].count("#") if r.target_context else 0) + 1)
            out.append(Translation(r.text.upper() + "#" * marks, -0.5))
        return out


LONG = doc(*[(f"00:00:{2 * i:02d},000", f"00:00:{2 * i + 1:02d},000", f"Line {i}.")
             for i in range(12)])


class Drifting(Recorder):
    """With context it repeats the previous translation before the cue (a broken prefix)."""

    def translate(self, requests, **kw):
        self.batches.append(list(requests))
        return [Translation(((r.target_context[-1] + " ") if r.target_context else "")
                            + r.text.upper(), -0.5) for r in requests]

    def score(self, requests, candidates):
        # the cue read alone: its own words are likely, borrowed words cost 6 nats each
        return [Hypothesis(c, -0.1 * len(c.split()) - 6.0 * sum(
            w not in r.text.upper().split() for w in c.split()), len(c.split()) + 1)
            for r, c in zip(requests, candidates, strict=True)]


def test_guard_falls_back_to_the_plain_translation_for_a_drifting_cue():
    for schedule in (SCHEDULES["sequential"], SCHEDULES["blocks"]):
        [result] = translate_documents([FILM], Drifting(),
                                       DecodeOptions(context=1, schedule=schedule))
        assert result.texts() == ["WHERE IS HE?", "HE LEFT.", "GAP OF EXACTLY SEVEN.",
                                  "NEW SCENE.", "YES."]
        reasons = [t.fallback for t in result.translations]
        assert reasons[0] is None and reasons[3] is None  # no context: nothing to guard
        assert all(reasons[i] for i in (1, 2, 4))
        off = translate_documents([FILM], Drifting(), DecodeOptions(
            context=1, schedule=schedule, guard=GuardSettings(enabled=False)))[0]
        assert off.texts()[1] == "WHERE IS HE? HE LEFT."


def test_a_bundle_without_guard_translates_as_no_guard_unless_asked():
    from subctx.bundle import ContextSettings, Manifest

    settings = ContextSettings(max_k=1, default_k=1, max_gap=7.0, guard=False)
    manifest = Manifest.from_dict(json.loads(Manifest("concat", context=settings).to_json()))
    assert manifest.context.guard is False  # survives the manifest round trip
    default = DecodeOptions.for_model(manifest.context)
    [result] = translate_documents([FILM], Drifting(), default)
    assert result.texts()[1] == "WHERE IS HE? HE LEFT."  # the drifting cue is kept
    asked = DecodeOptions.for_model(manifest.context, guard=True)
    assert translate_documents([FILM], Drifting(), asked)[0].texts()[1] == "HE LEFT."
    assert (default.context, default.max_gap) == (1, 7.0)
    assert DecodeOptions.for_model(ContextSettings()).guard.enabled  # old bundles: guard on


class Counting(Recorder):
    """Output counts along the chain (one '#' more than the previous translation, modulo 4):
    a wrong prefix changes every later translation of the chain (the worst case for blocks,
    which then repair cue after cue, still ending at the sequential translations)."""

    def translate(self, requests, **kw):
        self.batches.append(list(requests))
        out = []
        for r in requests:
            marks = (r.target_context[-1].count("#") if r.target_context else 0) + 1
            out.append(Translation(r.text.upper() + "#" * (marks % 4), -0.5))
        return out


FILM_40 = doc(*[(f"00:{i // 30:02d}:{2 * (i % 30):02d},000",
                 f"00:{i // 30:02d}:{2 * (i % 30) + 1:02d},000", f"Line {i}.")
                for i in range(40)])


def test_blocks_schedule_gives_the_sequential_translations_in_full_batches():
    for model_class in (Chained, Counting):
        for k in (1, 2):
            outputs, batches = {}, {}
            for schedule in ("sequential", "blocks"):
                model, done = model_class(), []
                [film, other] = translate_documents(
                    [FILM_40, FILM], model,
                    DecodeOptions(context=k, schedule=SCHEDULES[schedule], batch_size=4,
                                  guard=GuardSettings(enabled=False)),
                    on_units_done=lambda d, units, done=done: done.extend((d, u) for u in units))
                outputs[schedule] = film.texts() + other.texts()
                batches[schedule] = len(model.batches)
                assert sorted(done) == sorted(set(done)) == \
                    [(0, u) for u in range(40)] + [(1, u) for u in range(5)]  # each once
            assert outputs["blocks"] == outputs["sequential"], (model_class.__name__, k)
            # sequential: the plain pass, then one batch per cue of the 39-cue chain; blocks:
            # the chain cut into 4 blocks of 11 (the other file's cues count), then repairs
            assert batches["sequential"] == 40
            if model_class is Chained:  # a wrong guess is repaired within three cues
                assert batches["blocks"] < batches["sequential"] / 2
            else:  # Counting: it changes all the rest of the chain, one repair pass per cue
                assert batches["blocks"] <= batches["sequential"] + 11
    # Chained saturates after three cues: the block starts' guesses are repaired at once
    model, progress = Chained(), []
    translate_documents([FILM_40], model, DecodeOptions(
        context=1, schedule=SCHEDULES["blocks"], batch_size=4,
        guard=GuardSettings(enabled=False)),
        on_units_done=lambda d, units: progress.append((len(model.batches), len(units))))
    # progress comes with every step of the blocks, not all at the end of the repairs
    per_batch: dict[int, int] = {}
    for batch, n in progress:
        per_batch[batch] = per_batch.get(batch, 0) + n
    assert per_batch == {1: 1, **dict.fromkeys(range(2, 11), 4), 11: 3}
    # the guesses, the 4 blocks of 10 side by side, the block starts again (their guessed
    # prefix had one '#', the real one three) and their next cues, which come out unchanged
    assert len(model.batches) == 1 + 10 + 2


def test_blocks_schedule_keeps_the_guard():
    [result] = translate_documents([FILM], Drifting(),
                                   DecodeOptions(context=1, schedule=SCHEDULES["blocks"]))
    assert result.texts() == ["WHERE IS HE?", "HE LEFT.", "GAP OF EXACTLY SEVEN.",
                              "NEW SCENE.", "YES."]




class Lookup:
    """Translates from two tables: alone, and with a previous line (which changes a pronoun and
    its verb in one cue, and only the wording in the others); records what it was asked."""

    max_context = 1
    uses_target_context = True
    supports_forced_start = False
    plain = {"Where is the cat?": "Где кошка?", "It left.": "Он ушёл.",
             "It is exactly seven.": "Ровно семь.", "Seven sharp.": "Семь ровно.",
             "Excuse me, are you Anna?": "Простите, вы Анна?", "Hello, Anna.": "Привет, Анна.",
             "Are you sure?": "Ты уверен?"}
    with_context = {"It left.": "Она ушла.", "It is exactly seven.": "Точно семь.",
                    "Seven sharp.": "Ровно семь.", "Are you sure?": "Вы уверены?"}

    def __init__(self):
        self.asked_with_context: list[str] = []

    def translate(self, requests: Sequence[Request], beam_size: int = 4, num_hypotheses: int = 1,
                  return_attention: bool = False) -> list[Translation]:
        self.asked_with_context += [r.text for r in requests if r.target_context]
        table = lambda r: self.with_context if r.target_context else self.plain  # noqa: E731
        return [Translation(table(r).get(r.text, self.plain[r.text]), -0.5) for r in requests]


def test_agreement_scope_keeps_only_what_context_is_for():
    film = doc(("00:00:01,000", "00:00:02,000", "Where is the cat?"),
               ("00:00:02,500", "00:00:04,000", "It left."),
               ("00:00:05,000", "00:00:06,000", "It is exactly seven."),
               ("00:00:07,000", "00:00:08,000", "Seven sharp."))
    for schedule in SCHEDULES.values():
        anything = translate_documents([film], Lookup(), DecodeOptions(
            context=1, schedule=schedule, guard=GuardSettings(enabled=False)))[0]
        assert anything.texts() == ["Где кошка?", "Она ушла.", "Точно семь.", "Ровно семь."]
        model = Lookup()
        scoped = translate_documents([film], model, DecodeOptions(
            context=1, schedule=schedule, guard=GuardSettings(enabled=False),
            scope=SCOPES["agreement"]))[0]
        assert scoped.texts() == ["Где кошка?", "Она ушла.", "Ровно семь.", "Семь ровно."]
        assert [t.fallback is not None for t in scoped.translations] == [False, False, True,
                                                                         False]
        # no word of "Seven sharp." changes with who speaks or what was said: not asked
        assert "Seven sharp." not in model.asked_with_context
        assert "It is exactly seven." in model.asked_with_context


def test_agreement_scope_keeps_a_register_the_previous_translation_tells():
    told = doc(("00:00:01,000", "00:00:02,000", "Excuse me, are you Anna?"),
               ("00:00:02,500", "00:00:04,000", "Are you sure?"))
    untold = doc(("00:00:01,000", "00:00:02,000", "Hello, Anna."),
                 ("00:00:02,500", "00:00:04,000", "Are you sure?"))
    for schedule in SCHEDULES.values():
        options = DecodeOptions(context=1, schedule=schedule, guard=GuardSettings(enabled=False),
                                scope=SCOPES["agreement"])
        model = Lookup()
        kept, plain = translate_documents([told, untold], model, options)
        assert kept.texts() == ["Простите, вы Анна?", "Вы уверены?"]  # вы, as the line before
        assert plain.texts() == ["Привет, Анна.", "Ты уверен?"]  # nothing there tells вы
        # so the second "Are you sure?" is not even translated with context
        assert model.asked_with_context.count("Are you sure?") == 1


def test_a_bundle_scope_survives_the_manifest_and_can_be_overridden():
    from subctx.bundle import ContextSettings, Manifest

    settings = ContextSettings(max_k=1, default_k=1, guard=False, scope="agreement")
    manifest = Manifest.from_dict(json.loads(Manifest("concat", context=settings).to_json()))
    assert manifest.context.scope == "agreement"
    assert DecodeOptions.for_model(manifest.context).scope is SCOPES["agreement"]
    assert DecodeOptions.for_model(manifest.context, scope="all").scope is SCOPES["all"]
    assert DecodeOptions.for_model(ContextSettings()).scope is SCOPES["all"]  # old bundles


def test_control_tags_go_with_every_request_the_decoder_makes():
    """--formality / --speaker-gender: the tags the options carry reach every request of a line
    that can show them (a 'you' and an 'I': controls.can_show), with context or without,
    translated or scored (the guard's)."""
    rec = Recorder()
    film = doc(("00:00:01,000", "00:00:02,000", "Did you see him? I did."),
               ("00:00:02,500", "00:00:04,000", "I told you."),
               ("00:00:04,500", "00:00:05,000", "I know you."))
    translate_documents([film], rec, DecodeOptions(context=1, controls=("<frm>", "<fem>")))
    requests = [r for batch in rec.batches for r in batch]
    assert requests and all(r.controls == ("<frm>", "<fem>") for r in requests)
    assert any(r.target_context for r in requests)  # context requests carry them too
