import json
import math

import pytest

from subctx.backends import open_backend
from subctx.backends.ct2 import CTranslate2Backend
from subctx.bundle import load_bundle
from subctx.contract import Request
from subctx.errors import BundleError


@pytest.fixture(scope="module")
def engine(tiny_bundle):
    return CTranslate2Backend(tiny_bundle, device="cpu", compute_type="float32", threads=1)


def test_translate_with_and_without_context(engine):
    requests = [Request("She said it was fine."),
                Request("She said it was fine.", ("Where is the door?",), ("Где дверь?",))]
    out = engine.translate(requests, beam_size=2)
    assert all(t.text and math.isfinite(t.score) for t in out)
    # the forced target prefix is never part of the returned translation
    assert not out[1].text.startswith("Где дверь?")


def test_nbest_alternatives_carry_probabilities_and_attention(engine):
    [t] = engine.translate([Request("Thank you very much.", ("Hello there, how are you?",),
                                    ("Привет, как дела?",))],
                           beam_size=4, num_hypotheses=3, return_attention=True)
    assert 1 <= len(t.alternatives) <= 3
    assert all(0.0 < a.probability <= 1.0 for a in t.alternatives)
    assert t.alternatives[0].text == t.text
    att = t.attention
    assert att is not None and "<sep>" in att.source_tokens
    assert len(att.weights) == len(att.target_tokens)
    assert all(len(row) == len(att.source_tokens) for row in att.weights)
    assert all(abs(sum(row) - 1.0) < 1e-3 for row in att.weights)


def test_score_counts_only_the_current_sentence(engine):
    req = Request("Where is the door?", ("Thank you.",), ("Спасибо.",))
    [with_ctx] = engine.score([req], ["Где дверь?"])
    [again] = engine.score([req], ["Где дверь?"])
    assert with_ctx.log_prob == pytest.approx(again.log_prob)
    longer = Request("Where is the door?", ("Thank you.",),
                     ("Спасибо большое, очень большое спасибо.",))
    [other] = engine.score([longer], ["Где дверь?"])
    # the prefix is forced, not scored: a longer prefix does not make the score much lower
    assert other.log_prob > with_ctx.log_prob - 20


def test_a_batch_of_prefixes_of_every_length_scores_as_each_alone(engine):
    """One scoring call for the batch: each candidate's sum still leaves its own prefix out."""
    requests = [Request("Where is the door?"),
                Request("Where is the door?", ("Thank you.",), ("Спасибо.",)),
                Request("Where is the door?", ("Thank you.",),
                        ("Спасибо большое, очень большое спасибо.",))]
    together = engine.score(requests, ["Где дверь?"] * 3)
    alone = [engine.score([r], ["Где дверь?"])[0] for r in requests]
    assert [h.tokens for h in together] == [h.tokens for h in alone]
    assert [h.log_prob for h in together] == pytest.approx([h.log_prob for h in alone],
                                                           abs=1e-3)
    assert len({h.tokens for h in together}) == 1  # the prefix is never counted


def test_nbest_keeps_the_searchs_log_probability_where_score_would_give_the_same(engine):
    """The n-best's log-probabilities come from the search, as `score` gives them (the prefix
    left out, </s> counted); an output cut at the length limit, one with a stray <sep> and a
    forced start are left to `score`, and a text comes once, with its best rank."""
    from subctx.backends.base import Found, Searched

    request = Request("Where is the door?", ("Thank you.",), ("Спасибо.",))
    p = engine.prepare(request)
    door, house, window = (engine._pieces(engine.target_sp, t)
                           for t in ("Где дверь?", "Где дом?", "Где окно?"))
    found = Found([Searched(p.prefix + door, -0.5, True), Searched(p.prefix + door, -0.9, True),
                   Searched(p.prefix + house, -1.0, False),
                   Searched(p.prefix + ["▁Да", "<sep>", *window], -2.0, True)])
    [(text, searched), (cut, none), (after_sep, none_too)] = engine._nbest(p, found)
    assert (text, cut, after_sep) == ("Где дверь?", "Где дом?", "Где окно?")
    assert searched.log_prob == pytest.approx(-0.5 * (len(door) + 1))
    assert searched.tokens == len(door) + 1 and none is None and none_too is None
    forced = engine.prepare(Request("Where is the door?", forced_start="Где"))
    assert all(h is None for _, h in engine._nbest(forced, Found([Searched(door, -0.5)])))
    # a real search: each alternative's log-probability is the one `score` gives its text
    [t] = engine.translate([request], beam_size=4, num_hypotheses=4)
    again = engine.score([request] * len(t.alternatives), [a.text for a in t.alternatives])
    assert [(a.log_prob, a.tokens) for a in t.alternatives] == \
        [(pytest.approx(g.log_prob, abs=1e-3), g.tokens) for g in again]


def test_context_limited_to_models_max_k(tiny_bundle, engine):
    many = tuple(f"Sentence {i}." for i in range(6))
    prepared = engine.prepare(Request("Hi.", many, many))
    assert prepared.tokens.count("<sep>") == engine.max_context == 3
    assert prepared.prefix.count("<sep>") == 3
    assert prepared.tokens[-1] == "</s>" and prepared.tokens[-2] != "<sep>"


def test_context_dropped_when_it_would_not_fit(engine):
    huge = ("word " * 200,)
    prepared = engine.prepare(Request("Hi there.", huge, huge))
    assert "<sep>" not in prepared.tokens and prepared.prefix == []


@pytest.fixture(scope="module")
def encoder_side(tiny_bundle, tmp_path_factory):
    """The tiny model's bundle with its previous translations read by the encoder."""
    import shutil

    path = tmp_path_factory.mktemp("encoder-side") / "bundle"
    shutil.copytree(tiny_bundle, path)
    manifest = json.loads((path / "subctx.json").read_text(encoding="utf-8"))
    manifest["context"]["target_side"] = "encoder"
    (path / "subctx.json").write_text(json.dumps(manifest), encoding="utf-8")
    return CTranslate2Backend(path, device="cpu", compute_type="float32", threads=1)


def test_encoder_side_reads_each_translation_after_its_source_and_forces_nothing(encoder_side):
    engine = encoder_side
    assert engine.uses_target_context  # a cue still waits for its context's translation
    request = Request("Where is the door?", ("Thank you.", "Hello there."),
                      ("Спасибо.", "Привет."))
    p = engine.prepare(request)
    pieces = [engine._pieces(engine.source_sp, s) for s in
              ("Thank you.", "Спасибо.", "Hello there.", "Привет.", "Where is the door?")]
    assert p.tokens == [*pieces[0], "<sep>", *pieces[1], "<sep>", *pieces[2], "<sep>",
                        *pieces[3], "<sep>", *pieces[4], "</s>"]
    assert p.prefix == [] and p.segments[-1] == 4
    [t] = engine.translate([request], beam_size=2)
    assert t.text
    # the translation is input: another one gives another score for the same text
    other = Request(request.text, request.source_context, ("Спасибо.", "Где дом?"))
    [a, b] = engine.score([request, other], ["Где дверь?"] * 2)
    assert a.tokens == b.tokens and a.log_prob != pytest.approx(b.log_prob, abs=1e-6)


def test_an_unknown_target_side_is_a_one_line_error(tiny_bundle, tmp_path):
    import shutil

    shutil.copytree(tiny_bundle, tmp_path / "b")
    manifest = json.loads((tmp_path / "b" / "subctx.json").read_text(encoding="utf-8"))
    manifest["context"]["target_side"] = "decoder"
    (tmp_path / "b" / "subctx.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(BundleError, match="unknown context.target_side 'decoder' "
                                          r"\(use prefix, encoder, none\)"):
        load_bundle(tmp_path / "b")


def test_bundle_errors_are_one_line(tmp_path, tiny_bundle):
    with pytest.raises(BundleError, match="not found"):
        load_bundle(tmp_path / "missing")
    with pytest.raises(BundleError, match="no subctx.json"):
        load_bundle(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(BundleError, match="not a folder"):
        load_bundle(tmp_path / "file")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "subctx.json").write_text("{not json")
    with pytest.raises(BundleError, match="unreadable manifest"):
        load_bundle(broken)
    manifest = json.loads((tiny_bundle / "subctx.json").read_text())
    future = tmp_path / "future"
    future.mkdir()
    (future / "subctx.json").write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(BundleError, match="version 99 is not supported"):
        load_bundle(future)
    incomplete = tmp_path / "incomplete"
    incomplete.mkdir()
    (incomplete / "subctx.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="missing spm.model"):
        load_bundle(incomplete)
    (incomplete / "spm.model").write_bytes((tiny_bundle / "spm.model").read_bytes())
    with pytest.raises(BundleError, match="incomplete bundle, missing model.bin, config.json"):
        open_backend(incomplete)  # the tokenizer is there; the backend's files are not
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "subctx.json").write_text(json.dumps({**manifest, "backend": "onnx"}))
    (odd / "spm.model").write_bytes((tiny_bundle / "spm.model").read_bytes())
    with pytest.raises(BundleError, match="unknown backend 'onnx'"):
        open_backend(odd)
    (odd / "subctx.json").write_text(json.dumps({**manifest, "architecture": "rnn"}))
    with pytest.raises(BundleError, match="unknown architecture 'rnn'"):
        load_bundle(odd)


def test_bundle_with_corrupt_weights_fails_cleanly(tmp_path, tiny_bundle):
    import shutil

    copy = tmp_path / "corrupt"
    shutil.copytree(tiny_bundle, copy)
    (copy / "model.bin").write_bytes(b"garbage")
    with pytest.raises(BundleError, match="cannot load model"):
        CTranslate2Backend(copy, device="cpu")


def test_long_context_does_not_shorten_the_current_sentence(engine, monkeypatch):
    """CTranslate2 counts the forced prefix in max_decoding_length: the budget must not."""
    seen = []
    translate_batch = engine.translator.translate_batch

    def spy(*args, **kwargs):
        seen.append(kwargs["max_decoding_length"])
        assert kwargs["length_penalty"] == engine.manifest.length_penalty
        return translate_batch(*args, **kwargs)

    spying = type("Spy", (), {"translate_batch": staticmethod(spy)})()
    monkeypatch.setattr(engine, "translator", spying)
    sentence = "Can you help my daughter?"
    context = "Good evening, doctor, thank you so much for coming here so late tonight."
    engine.translate([Request(sentence)], beam_size=1)
    plain = seen[-1]  # (a search again for a looping output asks the same length)
    req = Request(sentence, (context,), ("Добрый вечер, доктор, спасибо, что пришли так поздно.",))
    engine.translate([req], beam_size=1)
    prefix = engine.prepare(req).prefix
    assert seen[-1] == plain + len(prefix)


def test_a_forced_start_begins_the_translation(engine):
    [plain] = engine.translate([Request("Where is the door?")], beam_size=2)
    request = Request("Where is the door?", ("Thank you.",), ("Спасибо.",), forced_start="Где")
    [forced] = engine.translate([request], beam_size=2)
    assert forced.text.startswith("Где") and not forced.text.startswith("Спасибо")
    assert plain.text  # and without a forced start nothing changes


def test_context_translations_are_ranked_by_the_current_sentence_alone(engine):
    """CTranslate2 divides what was generated after a forced prefix by the whole length,
    prefix included: after a 10-token previous translation a 2-token output (log-probability
    -3) outranks a 6-token one (-6), though it is worse per token. The backend ranks by the
    generated tokens' own average, as without context."""
    prefix = [f"p{i}" for i in range(10)]
    short, long = prefix + ["a", "b"], prefix + ["a", "b", "c", "d", "e", "f"]

    class Result:  # what CTranslate2's translate_batch returns for one input
        def __init__(self, hypotheses, scores):
            self.hypotheses, self.scores = hypotheses, scores

    ct2 = Result([short, long], [-3.0 / (len(short) + 1), -6.0 / (len(long) + 1)])
    ranked = engine._ranked(ct2, len(prefix), 64)  # short ranked first by CTranslate2
    assert [i for i, _ in ranked] == [1, 0]
    assert [s for _, s in ranked] == pytest.approx([-6.0 / 7, -3.0 / 3])
    # a hypothesis stopped by the length limit had no </s> to count
    [(_, score)] = engine._ranked(Result([long], [-6.0 / len(long)]), len(prefix), len(long))
    assert score == pytest.approx(-6.0 / 6)
    # without a prefix CTranslate2's own ranking stands
    assert engine._ranked(ct2, 0, 64) == list(enumerate(ct2.scores))


def test_control_tags_come_right_before_the_sentence(engine):
    """Where training put them: after the context and its <sep>, before the sentence's own
    pieces; the decoding budget is the sentence's alone."""
    plain = engine.prepare(Request("Where is the door?", ("Thank you.",), ("Спасибо.",)))
    tagged = engine.prepare(Request("Where is the door?", ("Thank you.",), ("Спасибо.",),
                                    controls=("<frm>",)))
    at = len(plain.tokens) - plain.tokens[::-1].index("<sep>")  # the sentence's first piece
    assert tagged.tokens == [*plain.tokens[:at], "<frm>", *plain.tokens[at:]]
    assert tagged.budget == plain.budget and tagged.prefix == plain.prefix
