"""What a decoder may write into a subtitle, whatever the model says: no control characters,
no runaway repetition (subctx.backends.output), in every backend."""

import pytest
import sentencepiece as spm
import torch

from subctx.backends.ct2 import CTranslate2Backend
from subctx.backends.output import clean, collapse_loop, loops
from subctx.backends.pytorch import TorchBackend
from subctx.bundle import ContextSettings, Manifest
from subctx.contract import Request
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.tokenizer import train_tokenizer
from tests.helpers import CORPUS


def test_control_characters_are_dropped_and_spaces_kept_single():
    assert clean("Привет\x1a, мир") == "Привет, мир"
    assert clean("две\nстроки\tи\x85всё") == "две строки и всё"
    assert clean("Ничего лишнего.") == "Ничего лишнего."
    assert clean("\x00\x1b") == ""
    assert clean("Где\ufffd\ufffd дверь?") == "Где дверь?"  # bytes that were no UTF-8


@pytest.mark.parametrize("source, text, looping", [
    ("Eh-", "Э-э-э-э-э-э-э-э", True),
    ("at about 10 o'clock this morning", "около 10 часов утра утра утра утра утра.", True),
    ("the implied right to privacy", "в право на личную личную личную личную жизнь", True),
    ("I don't know, I don't know, I don't know!", "Не знаю, не знаю, не знаю, не знаю!",
     False),  # the English says it four times too
    ("Ha-ha-ha-ha!", "Ха-ха-ха-ха!", False),
    ("No, no, no.", "Нет, нет, нет.", False),
    ("Hello.", "Привет.", False),
    ("Where?", "Где&&&&&&&&&&&&&&&&&&&&", True),  # one character over and over
    ("Noooooooo!", "Неееееееет!", False),  # as long a run as the English's
])
def test_a_loop_is_a_repetition_the_english_does_not_have(source, text, looping):
    assert loops(source, text) is looping


def test_a_loop_is_cut_down_to_what_the_english_repeats():
    assert collapse_loop("the implied right to privacy",
                         "в право на личную личную личную личную жизнь") == \
        "в право на личную жизнь"
    assert collapse_loop("in a season since 1995-96, when",
                         "в сезоне с 1995-96-96-96-96-96 года, когда") == \
        "в сезоне с 1995-96 года, когда"
    assert collapse_loop("Eh-", "Э-э-э-э-э-э-э-э") == "Э"
    assert collapse_loop("Hello.", "Привет.") == "Привет."
    assert collapse_loop("Where?", "Где&&&&&&&&&&&&&&&&&&&&?") == "Где&?"


def _word_piece(sp: spm.SentencePieceProcessor) -> str:
    """A piece that is a whole word of letters (so that repeating it repeats a word)."""
    return next(p for p in map(sp.id_to_piece, range(sp.get_piece_size()))
                if p.startswith("▁") and len(p) > 2 and p[1:].isalpha())


def _biased(tmp_path, piece: str | None, backend: str, eos: float = 5.0):
    """A random tiny model whose every decoder state scores `piece` (None: a word) highest
    and </s> by `eos`, served by `backend`: with a low `eos` it writes that piece until its
    length budget runs out."""
    from subctx_train.bundle_card import export_torch_bundle
    from subctx_train.export import export_bundle

    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20,
                               tmp_path / "spm.model", vocab_size=120)
    sp = spm.SentencePieceProcessor(model_file=str(spm_file))
    piece = piece or _word_piece(sp)
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=sp.get_piece_size(), d_model=32, n_heads=4, ff_dim=64,
                      enc_layers=1, dec_layers=1, max_positions=256, dropout=0.0)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.decoder_norm.weight.zero_()
        model.decoder_norm.bias.zero_()
        model.decoder_norm.bias[0] = 1.0
        model.embed.weight[:, 0] = 0.0
        model.embed.weight[sp.piece_to_id(piece), 0] = 10.0
        model.embed.weight[sp.eos_id(), 0] = eos
    manifest = Manifest(architecture="concat", backend=backend, max_positions=256,
                        source_spm="spm.model", target_spm="spm.model",
                        context=ContextSettings(max_k=1, default_k=1))
    if backend == "torch":
        path = export_torch_bundle(model, spm_file, manifest, tmp_path / "bundle")
        return TorchBackend(path, device="cpu"), piece
    path = export_bundle(model, spm_file, manifest, tmp_path / "bundle")
    return CTranslate2Backend(path, device="cpu", compute_type="float32", threads=1), piece


REQUESTS = [Request("Where is the door?"),
            Request("Where is the door?", ("Thank you.",), ("Спасибо.",))]


@pytest.mark.parametrize("backend", ["ctranslate2", "torch"])
def test_no_backend_writes_a_control_character(tmp_path, backend):
    translator, _ = _biased(tmp_path, "<0x1A>", backend)
    for out in translator.translate(REQUESTS, beam_size=2, num_hypotheses=2):
        assert not any(ord(ch) < 32 for ch in out.text), repr(out.text)
        assert all(not any(ord(ch) < 32 for ch in a.text) for a in out.alternatives)


@pytest.mark.parametrize("backend", ["ctranslate2", "torch"])
def test_no_backend_writes_a_loop(tmp_path, backend):
    translator, piece = _biased(tmp_path, None, backend, eos=-10.0)
    word = piece.lstrip("▁")
    for out in translator.translate(REQUESTS, beam_size=2):
        assert not loops("Where is the door?", out.text), out.text
        assert out.text.count(word) >= 1  # cut down, not emptied
