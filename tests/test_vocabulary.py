"""The tokenizer covers what subtitles hold, and no translation ever shows '⁇'."""

import pytest
import sentencepiece as spm
import torch

from subctx.backends.ct2 import CTranslate2Backend
from subctx.bundle import ContextSettings, Manifest
from subctx.contract import Request
from subctx_train.tokenizer import SUBTITLE_CHARS, train_tokenizer
from tests.helpers import CORPUS

LINE = "♪ «Zoë», „naïve“ café — 1½ … it’s 42° – ok ♫ 😀 漢字"


def _tokenizer(tmp_path):
    sentences = [s for pair in CORPUS for s in pair] * 20
    return train_tokenizer(sentences, tmp_path / "spm.model", vocab_size=120)


def test_every_subtitle_character_is_a_piece_and_anything_else_falls_back_to_bytes(tmp_path):
    sp = spm.SentencePieceProcessor(model_file=str(_tokenizer(tmp_path)))
    for ch in SUBTITLE_CHARS:
        ids = sp.encode(ch)
        assert sp.unk_id() not in ids and sp.decode(ids) == ch, ch
        assert not any(sp.is_byte(i) for i in ids), f"{ch!r} is not a piece of its own"
    ids = sp.encode(LINE)
    assert sp.unk_id() not in ids
    assert sp.decode(ids) == LINE  # emoji and CJK survive as bytes; … is not turned into ...
    assert [sp.id_to_piece(i) for i in range(4, 11)] == [
        "<sep>", "<ctx>", "<bt>", "<inf>", "<frm>", "<masc>", "<fem>"]


def test_a_new_tokenizer_has_the_control_tags_and_an_old_one_keeps_working(tmp_path):
    """Tokenizers made before control tags have the same ids for everything else; a run can
    train with them (without tags), and asking it for tags says what is missing."""
    from subctx.controls import known_controls
    from subctx_train.examples import tokenize_documents
    from subctx_train.labels import tag_ids
    from tests.test_training import fixture_docs

    new = spm.SentencePieceProcessor(model_file=str(_tokenizer(tmp_path)))
    sentences = [s for pair in CORPUS for s in pair] * 20
    old = spm.SentencePieceProcessor(model_file=str(train_tokenizer(
        sentences, tmp_path / "old.model", vocab_size=120, control_tags=False)))
    has = {name: (lambda piece, sp=sp: sp.piece_to_id(piece) != sp.unk_id())
           for name, sp in (("new", new), ("old", old))}
    assert known_controls(has["new"]) == ["formality", "speaker_gender"]
    assert known_controls(has["old"]) == []
    assert [old.id_to_piece(i) for i in range(4)] == [new.id_to_piece(i) for i in range(4)]
    assert [old.id_to_piece(i) for i in range(4, 7)] == ["<sep>", "<ctx>", "<bt>"]
    assert old.get_piece_size() == new.get_piece_size() - 4
    assert set(tag_ids(new).values()) == {7, 8, 9, 10}
    assert tokenize_documents(fixture_docs(1), old, max_k=1)  # no tags asked: it works
    with pytest.raises(ValueError, match="control_share needs a tokenizer with the control tag "
                                         "pieces .*made before them"):
        tokenize_documents(fixture_docs(1), old, max_k=1, control_share=0.5)


def test_translation_never_contains_the_unknown_mark(tmp_path):
    """A model that prefers <unk> above everything: the engine still writes none."""
    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer
    from subctx_train.export import export_bundle

    spm_file = _tokenizer(tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(spm_file))
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=sp.get_piece_size(), d_model=32, n_heads=4, ff_dim=64,
                      enc_layers=1, dec_layers=1, max_positions=256, dropout=0.0)
    model = Transformer(cfg)
    with torch.no_grad():  # every decoder state scores <unk> highest
        model.decoder_norm.weight.zero_()
        model.decoder_norm.bias.zero_()
        model.decoder_norm.bias[0] = 1.0
        model.embed.weight[:, 0] = 0.0
        model.embed.weight[sp.unk_id(), 0] = 10.0
        model.embed.weight[sp.eos_id(), 0] = 5.0
    manifest = Manifest(architecture="concat", max_positions=256, source_spm="spm.model",
                        target_spm="spm.model", context=ContextSettings(max_k=1, default_k=1))
    bundle = export_bundle(model, spm_file, manifest, tmp_path / "bundle")
    engine = CTranslate2Backend(bundle, device="cpu", compute_type="float32", threads=1)
    greedy = model.greedy(torch.tensor([sp.encode(LINE) + [3]]), 2, 3, 5)[0]
    assert sp.unk_id() in greedy  # the model itself would write <unk> ...
    for request in [Request(LINE), Request(LINE, ("Where is the door?",), ("Где дверь?",))]:
        [out] = engine.translate([request], beam_size=2, num_hypotheses=2)
        assert "⁇" not in out.text  # ... the engine never does
        assert all("⁇" not in a.text for a in out.alternatives)
