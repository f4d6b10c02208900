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
    shift = manifest.context.segment_shift
    positions = layout.shifted_positions(segments, shift)
    return layout.ct2_source(tokens, segments, shift), tokens, positions, prefix


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


@pytest.fixture(scope="module", params=[0, 16], ids=["plain-positions", "shifted-positions"])
def bundle_dir(request, tmp_path_factory):
    """A float32 CTranslate2 bundle of the tiny random model."""
    return build_tiny_bundle(tmp_path_factory.mktemp(f"served{request.param}"),
                             shift=request.param)


def test_pytorch_serves_a_ctranslate2_bundle_as_ctranslate2_does(bundle_dir):
    """Where CTranslate2 cannot run (a GPU machine without its CUDA libraries), the PyTorch
    backend reads the bundle's model.bin: the same n-best and scores, context included."""
    from subctx.backends.ct2 import CTranslate2Backend
    from subctx.backends.pytorch import TorchBackend
    from subctx.contract import Request

    ct2 = CTranslate2Backend(bundle_dir, device="cpu", compute_type="float32", threads=1)
    torch_served = TorchBackend(bundle_dir, device="cpu")
    requests = [Request(text, source_context=src, target_context=tgt)
                for src, tgt, text in CASES]
    a = ct2.translate(requests, beam_size=2, num_hypotheses=2)
    b = torch_served.translate(requests, beam_size=2, num_hypotheses=2)
    assert [t.text for t in a] == [t.text for t in b]
    assert [t.score for t in a] == pytest.approx([t.score for t in b], abs=1e-3)
    assert [[h.text for h in t.alternatives] for t in a] == \
        [[h.text for h in t.alternatives] for t in b]


def test_open_backend_serves_through_pytorch_where_ctranslate2_is_missing(bundle_dir,
                                                                         monkeypatch, tmp_path):
    """subctx translate on a machine without ctranslate2 (the GPU machine): PyTorch serves the
    bundle and the user is told once."""
    from typer.testing import CliRunner

    import subctx.backends.ct2 as ct2_module
    from subctx.backends import open_backend
    from subctx.backends.pytorch import TorchBackend
    from subctx.cli import app
    from subctx.contract import Request
    from subctx.errors import BundleError

    def missing():
        raise ct2_module.CTranslate2Missing("this model runs on CTranslate2: pip install "
                                            "ctranslate2")

    monkeypatch.setattr(ct2_module, "_ctranslate2", missing)
    backend = open_backend(bundle_dir, device="cpu", threads=1)
    assert isinstance(backend, TorchBackend) and "pip install ctranslate2" in \
        backend.served_instead
    assert backend.translate([Request("Hello there.")])[0].text
    if not torch.cuda.is_available():  # no GPU for PyTorch either: CTranslate2's own error
        with pytest.raises(BundleError, match="pip install ctranslate2"):
            open_backend(bundle_dir, device="cuda")
    film = tmp_path / "film.srt"
    film.write_text("1\n00:00:01,000 --> 00:00:02,000\nHello there.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", str(film), "--model", str(bundle_dir),
                                      "--device", "cpu", "--threads", "1"])
    assert result.exit_code == 0, result.output
    assert "served by PyTorch" in result.output and (tmp_path / "film.ru.srt").is_file()
    monkeypatch.undo()
    assert open_backend(bundle_dir, device="cpu", threads=1).served_instead is None
