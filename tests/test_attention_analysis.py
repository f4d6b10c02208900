"""analyze-attention on a tiny context-aware encoder, and the random-context control."""

import pytest
import torch

from subctx.contract import Hypothesis, Request, Translation
from subctx.nn.config import ModelConfig
from subctx.nn.context_encoder import ContextEncoderTransformer
from subctx_train import attention
from subctx_train.data import Document, Segment
from subctx_train.evaluate import RandomContext
from subctx_train.examples import tokenize_documents
from subctx_train.tokenizer import train_tokenizer
from tests.helpers import CORPUS


def test_attention_statistics_plots_and_heatmap(tmp_path):
    import sentencepiece as spm

    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20, tmp_path / "s.model",
                               vocab_size=120)
    sp = spm.SentencePieceProcessor(model_file=str(spm_file))
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=sp.get_piece_size(), d_model=16, n_heads=2, ff_dim=32,
                      enc_layers=2, dec_layers=1, max_positions=128, dropout=0.0)
    model = ContextEncoderTransformer(cfg)
    docs = [Document(f"d{i}", [Segment(s, t) for s, t in CORPUS]) for i in range(4)]
    examples = tokenize_documents(docs, sp, 1, None)
    stats = attention.analyse(model, sp, examples, sp.piece_to_id("<ctx>"), min_count=2)
    assert stats["examples"] == 20
    assert 0.0 < stats["overall"] < 1.0
    assert stats["top10"] and all(0.0 <= m <= 1.0 for _, m in stats["top10"])
    assert "it" in stats["pronouns"] and stats["by_length"] and stats["by_position"]
    share = stats["context_share"]
    assert 0.0 < share["overall"] < 1.0 and "it" in share["pronouns"]
    with torch.no_grad():  # a gate pushed shut: the context no longer reaches the encoder
        model.source_last.gate.bias.fill_(30.0)
    shut = attention.analyse(model, sp, examples, sp.piece_to_id("<ctx>"), min_count=2)
    assert shut["context_share"]["overall"] < 1e-6
    assert shut["overall"] == pytest.approx(stats["overall"])
    paths = attention.plot(stats, tmp_path / "plots")
    example = attention.pronoun_example(examples, sp)
    assert example is not None
    paths.append(attention.heatmap(model, sp, example, sp.piece_to_id("<ctx>"),
                                   tmp_path / "plots" / "heatmap.png"))
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)


class Echo:
    max_context, uses_target_context, supports_forced_start, manifest = 1, True, False, None

    def __init__(self):
        self.seen = []

    def translate(self, requests, **kw):
        self.seen += requests
        return [Translation(r.text, 0.0) for r in requests]

    def score(self, requests, candidates, **kw):
        self.seen += requests
        return [Hypothesis(c, 0.0) for c in candidates]


def test_random_context_replaces_both_sides_consistently():
    echo = Echo()
    wrapped = RandomContext(echo, [("A.", "А."), ("B.", "Б.")], seed=1)
    wrapped.translate([Request("x", ("real",), ("настоящий",)), Request("y")])
    assert echo.seen[0].source_context in (("A.",), ("B.",))
    assert {("A.", "А."), ("B.", "Б.")} >= {(echo.seen[0].source_context[0],
                                           echo.seen[0].target_context[0])}
    assert echo.seen[1].source_context == ()
    echo.seen.clear()
    group = [Request("z", ("real",), ("v1",)), Request("z", ("real",), ("v2",))]
    wrapped.score(group, ["a", "b"])
    assert echo.seen[0].source_context == echo.seen[1].source_context
    assert echo.seen[0].target_context == echo.seen[1].target_context
