"""CTranslate2 export equivalence: greedy tokens and scores match PyTorch (float32)."""

import ctranslate2
import pytest
import sentencepiece as spm
import torch

from subctx import layout
from subctx.bundle import SpecialTokens, load_bundle
from tests.helpers import build_tiny_bundle

TOKENS = SpecialTokens()


@pytest.fixture(scope="module", params=[0, 16], ids=["plain-positions", "shifted-positions"])
def pair(request, tmp_path_factory):
    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer
    from subctx_train.export import export_bundle

    out = tmp_path_factory.mktemp(f"eq{request.param}")
    bundle = build_tiny_bundle(out, shift=request.param, eos_bias=False)
    manifest = load_bundle(bundle).manifest
    sp = spm.SentencePieceProcessor(model_file=str(bundle / "spm.model"))
    torch.manual_seed(7)
    cfg = ModelConfig(vocab_size=sp.get_piece_size(), d_model=32, n_heads=4, ff_dim=64,
                      enc_layers=2, dec_layers=2, max_positions=256, dropout=0.0)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # sharpen the random model and keep it off the special tokens
        model.embed.weight.mul_(4.0)
        model.embed.weight[:6] = 0.0
    export_bundle(model, bundle / "spm.model", manifest, out / "bundle2")
    translator = ctranslate2.Translator(str(out / "bundle2"), device="cpu",
                                        compute_type="float32")
    return model, translator, sp, manifest


CASES = [
    ([], [], "She said it was fine."),
    (["Where is the door?"], [], "Thank you very much."),
    (["Where is the door?"], ["Где дверь?"], "She said it was fine."),
    (["Hello there, how are you?", "I do not know."], ["Привет, как дела?", "Я не знаю."],
     "Where is the door?"),
]


def _inputs(sp, manifest, src_ctx, tgt_ctx, text):
    pieces = [sp.encode(s, out_type=str) for s in src_ctx]
    tokens, segments = layout.encoder_tokens(pieces, sp.encode(text, out_type=str),
                                             TOKENS.sep, TOKENS.eos)
    prefix = layout.decoder_prefix([sp.encode(t, out_type=str) for t in tgt_ctx], TOKENS.sep)
    positions = layout.shifted_positions(segments, manifest.context.segment_shift)
    return layout.ct2_source(tokens, segments, manifest.context), tokens, positions, prefix


@pytest.mark.parametrize("src_ctx,tgt_ctx,text", CASES)
def test_greedy_tokens_match(pair, src_ctx, tgt_ctx, text):
    model, translator, sp, manifest = pair
    source, tokens, positions, prefix = _inputs(sp, manifest, src_ctx, tgt_ctx, text)
    [result] = translator.translate_batch([source], target_prefix=[prefix or None],
                                          beam_size=1, max_decoding_length=len(prefix) + 25)
    ids = torch.tensor([[sp.piece_to_id(t) for t in tokens]])
    torch_out = model.greedy(ids, 2, 3, 25, prefix=[[sp.piece_to_id(t) for t in prefix]],
                             src_positions=torch.tensor([positions]))
    assert result.hypotheses[0] == [sp.id_to_piece(i) for i in torch_out[0]]


@pytest.mark.parametrize("src_ctx,tgt_ctx,text", CASES)
def test_scores_match(pair, src_ctx, tgt_ctx, text):
    model, translator, sp, manifest = pair
    source, tokens, positions, prefix = _inputs(sp, manifest, src_ctx, tgt_ctx, text)
    target = prefix + sp.encode("Спасибо, всё в порядке.", out_type=str)
    [scored] = translator.score_batch([source], [target], offset=len(prefix))
    ids = torch.tensor([[sp.piece_to_id(t) for t in tokens]])
    tgt_ids = [2] + [sp.piece_to_id(t) for t in target] + [3]
    logits = model(ids, torch.tensor([tgt_ids[:-1]]), torch.tensor([positions]))
    lp = torch.log_softmax(logits[0], -1).gather(1, torch.tensor(tgt_ids[1:])[:, None])[:, 0]
    expected = lp[len(prefix):].tolist()
    assert scored.log_probs == pytest.approx(expected, abs=1e-4)


def test_shifted_positions_matter(pair):
    model, translator, sp, manifest = pair
    if not manifest.context.segment_shift:
        pytest.skip("plain positions")
    source, tokens, positions, prefix = _inputs(sp, manifest, *CASES[3])
    ids = torch.tensor([[sp.piece_to_id(t) for t in tokens]])
    shifted = model.encode(ids, torch.tensor([positions]))[0]
    plain = model.encode(ids, None)[0]
    assert not torch.allclose(shifted, plain)


def test_every_ctranslate2_architecture_has_a_converter():
    from subctx.nn import ARCHITECTURES
    from subctx_train.export import CONVERTERS

    served = {name for name, arch in ARCHITECTURES.items() if arch.backend == "ctranslate2"}
    assert served and set(CONVERTERS) == served


@pytest.fixture(scope="module")
def tiny_parts(tmp_path_factory):
    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer

    out = tmp_path_factory.mktemp("parts")
    bundle = build_tiny_bundle(out, shift=16)
    manifest = load_bundle(bundle).manifest
    vocab = spm.SentencePieceProcessor(model_file=str(bundle / "spm.model")).get_piece_size()
    cfg = ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64, enc_layers=2,
                      dec_layers=2, max_positions=256, dropout=0.0)
    return Transformer(cfg), bundle / "spm.model", manifest


@pytest.mark.parametrize("change,quantization,message", [
    ({"architecture": "context_encoder"}, None, "cannot run the context_encoder architecture"),
    ({"architecture": "transformer"}, None, "transformer architecture has no segment-shifted"),
    ({"max_positions": 512}, None, "max_positions 512 differs from the model's 256"),
    ({"backend": "torch"}, None, "backend 'torch'"),
    ({}, "int4", "quantization 'int4' is not one of int8"),
])
def test_unsupported_settings_are_refused_before_any_weight_is_copied(
        tiny_parts, tmp_path, monkeypatch, change, quantization, message):
    from dataclasses import replace

    from subctx_train import export

    def copying(*args, **kwargs):
        raise AssertionError("weights copied before the settings were checked")

    monkeypatch.setattr(export, "build_spec", copying)
    model, spm_model, manifest = tiny_parts
    with pytest.raises(ValueError, match=message):
        export.export_bundle(model, spm_model, replace(manifest, **change), tmp_path / "out",
                             quantization=quantization)
    assert not (tmp_path / "out").exists()
