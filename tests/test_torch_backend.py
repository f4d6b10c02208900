"""The PyTorch serving backend for the multi-encoder models."""

import pytest
import torch
from typer.testing import CliRunner

from subctx.backends import open_backend
from subctx.backends.pytorch import TorchBackend
from subctx.bundle import ContextSettings, Manifest, load_bundle
from subctx.cli import app
from subctx.contract import Request, decoding_budget
from subctx.nn.capsule import CapsuleTransformer
from subctx.nn.config import ModelConfig
from subctx.nn.context_encoder import ContextEncoderTransformer
from subctx_train.bundle_card import export_torch_bundle
from subctx_train.tokenizer import train_tokenizer
from tests.helpers import CORPUS, write_srt


@pytest.fixture(scope="module", params=["context_encoder", "capsule"])
def bundle(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20, out / "spm.model",
                               vocab_size=120)
    import sentencepiece as spm

    vocab = spm.SentencePieceProcessor(model_file=str(spm_file)).get_piece_size()
    cfg = ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64, enc_layers=2,
                      dec_layers=2, max_positions=256, dropout=0.0)
    torch.manual_seed(0)
    cls = ContextEncoderTransformer if request.param == "context_encoder" else CapsuleTransformer
    model = cls(cfg).eval()
    max_k = 1 if request.param == "context_encoder" else 3
    manifest = Manifest(request.param, backend="torch", max_positions=256,
                        source_spm="spm.model", target_spm="spm.model",
                        context=ContextSettings(max_k=max_k, default_k=1, target_side="none"))
    return export_torch_bundle(model, spm_file, manifest, out / "bundle"), model


def _tensors(engine: TorchBackend, request: Request):
    """The model's inputs for one request, as the backend lays them out."""
    prepared = engine.prepare(request)
    ids = [engine.target_sp.piece_to_id(p) for p in prepared.tokens]
    ctx = [engine.target_sp.piece_to_id(p) for p in prepared.context]
    return torch.tensor([ids]), torch.tensor([ctx]), torch.tensor([prepared.distances])


def test_bundle_and_engine(bundle):
    path, model = bundle
    assert load_bundle(path).manifest.backend == "torch"
    assert all(p.stat().st_size < 16 * 2**20 for p in path.glob("model-*.safetensors"))
    engine = open_backend(path, device="cpu")
    assert isinstance(engine, TorchBackend) and not engine.uses_target_context
    req = Request("Where is the door?", ("Thank you very much.",))
    [t] = engine.translate([req], beam_size=3, num_hypotheses=2, return_attention=True)
    assert t.alternatives and t.alternatives[0].log_prob <= 0.0
    assert t.attention is not None and len(t.attention.weights) == len(t.attention.target_tokens)
    if isinstance(model, ContextEncoderTransformer):  # the current sentence attends to context
        att = t.context_attention
        assert att.source_tokens[0] == "<ctx>" and att.target_tokens[-1] == "</s>"
        assert len(att.weights) == len(att.target_tokens)
        assert all(abs(sum(row) - 1.0) < 1e-4 for row in att.weights)
    else:
        assert t.context_attention is None


def test_beam_one_equals_greedy(bundle):
    path, model = bundle
    engine = TorchBackend(path, device="cpu")
    req = Request("She said it was fine.", ("Hello there, how are you?",))
    src, ctx, dist = _tensors(engine, req)
    budget = decoding_budget(src.size(1) - 1)  # the sentence's pieces, without </s>
    greedy = model.greedy(src, 2, 3, budget, ctx=ctx, ctx_dist=dist)[0]
    [t] = engine.translate([req], beam_size=1)
    assert t.text == engine.target_sp.decode(greedy)


def test_score_is_the_teacher_forced_log_probability(bundle):
    path, model = bundle
    engine = TorchBackend(path, device="cpu")
    req = Request("Thank you very much.", ("Where is the door?",))
    candidate = "Большое спасибо."
    [h] = engine.score([req], [candidate])
    src, ctx, dist = _tensors(engine, req)
    ids = [2, *engine.target_sp.encode(candidate), 3]
    with torch.no_grad():
        memory, mask = model.encode(src, None, ctx, dist)
        logp = model.decode(torch.tensor([ids[:-1]]), memory, mask)[0].log_softmax(-1)[0]
    expected = sum(logp[i, t].item() for i, t in enumerate(ids[1:]))
    assert h.log_prob == pytest.approx(expected, abs=1e-4)


def test_translate_cli_with_torch_bundle(bundle, tmp_path):
    path, _ = bundle
    film = write_srt(tmp_path / "f.srt", "1\n00:00:01,000 --> 00:00:02,000\nHello there.\n\n"
                     "2\n00:00:02,500 --> 00:00:03,000\nWhere is the door?\n")
    result = CliRunner().invoke(app, ["translate", str(film), "--model", str(path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f.ru.srt").exists()
