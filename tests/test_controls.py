"""Control tags on the app's side: which tags a bundle knows (Manifest.controls) and the pieces
a request for --formality / --speaker-gender turns into (subctx.controls)."""

import json

import pytest

from subctx.bundle import Manifest, default_bundle_path, load_bundle, write_manifest
from subctx.contract import SpecialTokens
from subctx.controls import (
    AUTO,
    CONTROLS,
    FEMININE,
    FORMAL,
    FORMALITY,
    INFORMAL,
    MASCULINE,
    SPEAKER_GENDER,
    choices,
    control_pieces,
    known_controls,
    tag_piece,
    tags,
)
from subctx.errors import BundleError

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
