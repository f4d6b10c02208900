"""Control tags on the app's side: which tags a bundle knows (Manifest.controls) and the pieces
a request for --formality / --speaker-gender turns into (subctx.controls)."""

import json

import pytest

from subctx.bundle import Manifest, default_bundle_path, load_bundle, write_manifest
from subctx.contract import Hypothesis, SpecialTokens, Translation
from subctx.controls import (
    AUTO,
    CONTROLS,
    FEMININE,
    FORMAL,
    FORMALITY,
    INFORMAL,
    MASCULINE,
    SPEAKER_GENDER,
    RegisterCarry,
    can_show,
    choices,
    control_pieces,
    for_line,
    known_controls,
    register_carry,
    tag_piece,
    tags,
)
from subctx.decoding import DecodeOptions, translate_documents
from subctx.errors import BundleError
from subctx.units import DocumentPlan, Unit

BOTH = Manifest(architecture="concat", controls=[FORMALITY, SPEAKER_GENDER])


def test_the_pieces_of_each_value_in_training_order():
    assert [tag_piece(v) for v in (INFORMAL, FORMAL, MASCULINE, FEMININE)] == \
        ["<inf>", "<frm>", "<masc>", "<fem>"]
    assert tags([FEMININE, FORMAL]) == ["<frm>", "<fem>"]  # formality first, whatever the order
    assert choices(FORMALITY) == (AUTO, INFORMAL, FORMAL)
    assert choices(SPEAKER_GENDER) == (AUTO, MASCULINE, FEMININE)


def test_control_pieces_for_what_is_asked():
    assert control_pieces(BOTH) == ()
    assert control_pieces(BOTH, formality=FORMAL) == ("<frm>",)
    assert control_pieces(BOTH, speaker_gender=FEMININE) == ("<fem>",)
    assert control_pieces(BOTH, INFORMAL, MASCULINE) == ("<inf>", "<masc>")
    renamed = Manifest(architecture="concat", controls=[FORMALITY],
                       special_tokens=SpecialTokens(informal_tag="<ty>"))
    assert control_pieces(renamed, formality=INFORMAL) == ("<ty>",)  # the bundle's names


def test_a_model_without_the_tags_refuses_in_one_line():
    old = Manifest(architecture="concat")
    assert control_pieces(old) == ()  # auto asks nothing of any model
    with pytest.raises(BundleError) as err:
        control_pieces(old, formality=FORMAL)
    message = str(err.value)
    assert message.startswith("this model was not trained with formality tags;")
    assert "--formality auto" in message and "\n" not in message
    only_formality = Manifest(architecture="concat", controls=[FORMALITY])
    assert control_pieces(only_formality, formality=INFORMAL) == ("<inf>",)
    with pytest.raises(BundleError, match="not trained with speaker-gender tags; use "
                                          "--speaker-gender auto"):
        control_pieces(only_formality, INFORMAL, FEMININE)
    with pytest.raises(BundleError, match="formality or speaker-gender tags"):
        control_pieces(old, FORMAL, MASCULINE)


def test_a_value_no_option_accepts():
    with pytest.raises(ValueError, match="--formality is one of auto, informal, formal"):
        control_pieces(BOTH, formality="polite")
    with pytest.raises(ValueError, match="--speaker-gender"):
        control_pieces(BOTH, speaker_gender=FORMAL)


def test_known_controls_are_those_whose_pieces_a_tokenizer_has():
    every = {tag_piece(v) for values in CONTROLS.values() for v in values}
    assert known_controls(every.__contains__) == [FORMALITY, SPEAKER_GENDER]
    assert known_controls({"<inf>", "<frm>", "<masc>"}.__contains__) == [FORMALITY]
    assert known_controls(lambda piece: False) == []


def test_an_old_manifest_without_controls_loads_unchanged():
    """Bundles made before control tags: no `controls`, no tag pieces in special_tokens."""
    data = json.loads(Manifest(architecture="concat").to_json())
    del data["controls"]
    for name in ("informal_tag", "formal_tag", "masculine_tag", "feminine_tag"):
        del data["special_tokens"][name]
    manifest = Manifest.from_dict(data)
    assert manifest.controls == []
    assert manifest == Manifest(architecture="concat")
    shipped = load_bundle(default_bundle_path()).manifest  # exported before control tags
    assert shipped.controls == []
    with pytest.raises(BundleError, match="not trained with formality tags"):
        control_pieces(shipped, formality=FORMAL)


def test_controls_round_trip_through_the_manifest(tmp_path):
    (tmp_path / "source.spm").write_bytes(b"")
    (tmp_path / "target.spm").write_bytes(b"")
    write_manifest(tmp_path, BOTH)
    assert load_bundle(tmp_path).manifest.controls == [FORMALITY, SPEAKER_GENDER]
    data = json.loads((tmp_path / "subctx.json").read_text())
    data["controls"] = "formality"
    with pytest.raises(BundleError, match="controls is a list of names"):
        Manifest.from_dict(data)


# -- --formality auto: a scene keeps its register ---------------------------------------------
def test_register_carry_only_for_a_model_with_formality_tags_and_auto():
    carry = register_carry(BOTH)
    assert carry == RegisterCarry("<inf>", "<frm>")
    assert register_carry(BOTH, FORMAL) is None  # asked for: the fixed tag does it
    assert register_carry(Manifest(architecture="concat")) is None


def test_the_nearest_translation_with_a_register_in_the_chain_gives_the_tag():
    carry = RegisterCarry("<inf>", "<frm>", reach=3)
    contexts = [[], [0], [1], [2], [], [4], [5], [6], [7]]
    done = [Translation(t, 0.0) for t in ("Ты где?", "Дома.", "А вы?", "Тоже.", "Привет.",
                                     "Ты пришёл.", "Да.", "Ага.", "Ну.")]
    assert [carry.piece(contexts, u, done) for u in range(len(done))] == [
        None,  # the first line of a scene is free
        "<inf>", "<inf>",  # «Дома.» says nothing: «Ты где?» before it does
        "<frm>",  # the nearest one wins
        None,  # a new scene
        None, "<inf>", "<inf>", "<inf>"]  # three lines back at most
    carry_far = RegisterCarry("<inf>", "<frm>", reach=2)
    assert carry_far.piece(contexts, 8, done) is None
    done[6] = None  # not translated yet: nothing to carry
    assert carry.piece(contexts, 7, done) is None


@pytest.mark.parametrize("english,formality,gender", [
    ("Where are you?", True, False), ("Sit down.", True, False), ("Sorry.", True, False),
    ("Joey, promise me something.", True, True), ("-What? -Go!", True, False),
    ("Oh, come on!", True, False), ("I'm sorry I was late.", True, True),
    ("Right. I got it.", False, True), ("Well, okay.", False, False),
    ("It's terrific.", False, False), ("Casa de Joey.", False, False),
    ("We had a good talk.", False, False), ("In it, a good idea.", False, False)])
def test_a_tag_applies_where_the_english_can_show_its_kind(english, formality, gender):
    """Training put a tag only on lines whose Russian showed it: ты/вы comes with a 'you', an
    order, an apology; the speaker's gender with an 'I'. Elsewhere the tag is left out."""
    assert can_show(FORMALITY, english) is formality
    assert can_show(SPEAKER_GENDER, english) is gender
    pieces = ("<frm>", "<fem>", "<other>")
    assert for_line(pieces, english) == tuple(
        p for p, shown in zip(pieces, (formality, gender, True), strict=True) if shown)


def test_translating_a_scene_carries_its_register_before_other_tags():
    """Each line gets the tags whose kind its English can show (controls.can_show): the carried
    register where it says 'you', the speaker's gender where it says 'I'."""
    class Recorder:
        max_context, uses_target_context, supports_forced_start = 1, True, False

        def __init__(self):
            self.requests = []

        def translate(self, requests, **kwargs):
            self.requests += requests
            return [Translation({"Where are you, I wonder?": "Ты где, интересно?",
                                 "I was at home. And you?": "Я была дома. А ты?"}
                                .get(r.text, "Хорошо."), 0.0) for r in requests]

        def score(self, requests, candidates):
            return [Hypothesis(c, -1.0, 2) for c in candidates]

    plan = DocumentPlan([], [Unit("Where are you, I wonder?", 0.0, 1.0, 0),
                             Unit("I was at home. And you?", 1.5, 2.0, 1),
                             Unit("At home.", 2.5, 3.0, 2), Unit("I'm fine.", 20.0, 21.0, 3)],
                        [])
    model = Recorder()
    options = DecodeOptions(context=1, controls=("<fem>",), carry=RegisterCarry("<inf>", "<frm>"))
    translate_documents([plan], model, options)
    asked = {r.text: r.controls for r in model.requests if r.source_context}
    assert asked == {"I was at home. And you?": ("<inf>", "<fem>"), "At home.": ()}
    first = [r.controls for r in model.requests
             if r.text in ("Where are you, I wonder?", "I'm fine.")]
    assert first and all(c == ("<fem>",) for c in first)  # scene starts are free


def test_under_the_agreement_scope_a_scene_keeps_the_register_set_before_its_context():
    """--formality auto with K = 1: the line before has no ты/вы, the one before it said вы.
    The carried вы tag must reach the translation the scope keeps (it used to weigh the
    context translation against the K previous lines only, found no register told and kept
    the plain ты)."""
    from subctx.decoding import SCOPES
    from subctx.guard import GuardSettings

    class Tagged:
        max_context, uses_target_context, supports_forced_start = 1, True, False

        def translate(self, requests, **kwargs):
            table = {"Excuse me, can you help me?": "Вы можете мне помочь?",
                     "I lost my keys.": "Я потерял ключи."}
            return [Translation(table.get(r.text) or ("Вам стоит сесть." if "<frm>" in r.controls
                                                      else "Тебе стоит сесть."), 0.0)
                    for r in requests]

        def score(self, requests, candidates):
            return [Hypothesis(c, -1.0, 2) for c in candidates]

    plan = DocumentPlan([], [Unit("Excuse me, can you help me?", 0.0, 1.0, 0),
                             Unit("I lost my keys.", 1.5, 2.0, 1),
                             Unit("You should sit down.", 2.5, 3.0, 2)], [])
    options = DecodeOptions(context=1, scope=SCOPES["agreement"],
                            guard=GuardSettings(enabled=False),
                            carry=RegisterCarry("<inf>", "<frm>"))
    [result] = translate_documents([plan], Tagged(), options)
    assert result.texts()[2] == "Вам стоит сесть."
    untagged = DecodeOptions(context=1, scope=SCOPES["agreement"],
                             guard=GuardSettings(enabled=False))
    [plain] = translate_documents([plan], Tagged(), untagged)
    assert plain.texts()[2] == "Тебе стоит сесть."  # without the carry nothing tells вы
