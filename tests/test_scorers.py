"""The evaluators behind the published numbers, checked against hand-made items whose answers
are known, and PyTorch beam search locked to CTranslate2's."""

import json
from pathlib import Path

import pytest
import torch

from subctx.backends.ct2 import CTranslate2Backend
from subctx.backends.pytorch import TorchBackend
from subctx.bundle import ContextSettings, Manifest
from subctx.contract import Hypothesis, Request, Translation
from subctx.decoding import DecodeOptions
from subctx_train.bundle_card import export_torch_bundle
from subctx_train.data import Document, Segment
from subctx_train.evaluate import (
    ContrastiveGroup,
    CtxproItem,
    bleu_chrf,
    contains_form,
    contrastive_accuracy,
    ctxpro_accuracy,
    read_voita,
)
from tests.helpers import CORPUS


class Scorer:
    """With context, a candidate starting with 'ты' scores 0 and any other -5; without
    context every candidate scores -1."""

    max_context = 3
    uses_target_context = True

    def __init__(self):
        self.requests: list[Request] = []

    def score(self, requests, candidates):
        self.requests += requests
        out = []
        for r, c in zip(requests, candidates, strict=True):
            if not r.target_context:
                out.append(Hypothesis(c, -1.0))
            else:
                out.append(Hypothesis(c, 0.0 if c.startswith("ты") else -5.0))
        return out


def test_contrastive_accuracy_on_known_groups():
    groups = [
        ContrastiveGroup(["ctx", "cur"], [["ты ok", "ты да"], ["вы ok", "вы да"]], 0, 1),
        ContrastiveGroup(["ctx", "cur"], [["вы ok", "ты да"], ["вы ok", "вы да"]], 0, 1),
        # the true variant is 1 but the model prefers 0: wrong
        ContrastiveGroup(["c2", "ctx", "cur"], [["x", "ты ok", "ты да"], ["x", "ты ok", "вы да"]],
                         1, 2),
    ]
    scorer = Scorer()
    result = contrastive_accuracy(scorer, groups, context=3)
    assert result["all"] == {"accuracy": round(2 / 3, 4), "groups": 3, "flag_rate": 0.0,
                             "flag_precision": 0.0, "flag_recall": 0.0}  # margins of 5 nats
    assert result["ctx_dist=1"] == {"accuracy": 1.0, "groups": 2}
    assert result["ctx_dist=2"] == {"accuracy": 0.0, "groups": 1}
    assert scorer.requests[0].target_context == ("ты ok",)
    # without context every variant scores the same: a tie is never counted as right, and
    # every group is flagged (a coin toss), each one rightly
    blind = contrastive_accuracy(Scorer(), groups, context=0)["all"]
    assert blind["accuracy"] == 0.0 and blind["flag_rate"] == 1.0
    assert blind["flag_precision"] == 1.0 and blind["flag_recall"] == 1.0


def test_read_voita_both_release_layouts(tmp_path):
    base = tmp_path / "consistency_testsets"
    (base / "scoring_data").mkdir(parents=True)
    (base / "t.json").write_text(json.dumps([{"dst": ["a", "b"], "true_ind": 1, "ctx_dist": 1}]))
    (base / "scoring_data" / "t.src").write_text("Hi , John . _eos He 's here .\n" * 2)
    (base / "scoring_data" / "t.dst").write_text("Привет , Джон . _eos Он здесь .\n"
                                                 "Привет , Джон . _eos Она здесь .\n")
    [g] = read_voita(tmp_path, "t")
    assert g.sources == ["Hi, John.", "He's here."]
    assert g.variants == [["Привет, Джон.", "Он здесь."], ["Привет, Джон.", "Она здесь."]]
    assert g.true_index == 1 and g.ctx_dist == 1
    (base / "scoring_data" / "t.tsv").write_text("A<eos>B\tА<eos>Б\nA<eos>B\tА<eos>В\n")
    [g] = read_voita(tmp_path, "t")
    assert g.sources == ["A", "B"] and g.variants[1] == ["А", "В"]


class Fixed:
    """Translates from a table; records the requests."""

    max_context = 1
    uses_target_context = True

    def __init__(self, table):
        self.table, self.requests = table, []

    def translate(self, requests, **kw):
        self.requests += requests
        return [Translation(self.table[r.text], -1.0) for r in requests]

    def score(self, requests, candidates):
        return [Hypothesis(c, -1.0) for c in candidates]


def test_ctxpro_accuracy_on_known_items():
    table = {"He came.": "Он пришёл.", "I saw it.": "Я видел его.", "Take it.": "Возьми её.",
             "Sit down.": "Садитесь.", "She is here.": "Она здесь."}
    items = [CtxproItem("ACC", "его", ["He came.", "I saw it."]),  # right
             CtxproItem("ACC", "его", ["She is here.", "Take it."]),  # wrong: её
             CtxproItem("FORM", "садитесь", ["He came.", "Sit down."])]  # right, any case
    engine = Fixed(table)
    result = ctxpro_accuracy(engine, items, DecodeOptions(context=1))
    assert result["all"] == {"accuracy": round(2 / 3, 4), "items": 3}
    assert result["ACC"] == {"accuracy": 0.5, "items": 2}
    assert result["FORM"] == {"accuracy": 1.0, "items": 1}
    assert contains_form("Он её видел.", "её") and not contains_form("Онa видела.", "он")


def test_bleu_chrf_extremes():
    docs = [Document("d", [Segment("a", "Где же ты был вчера вечером?"),
                           Segment("b", "Я тебе уже всё сказал.")])]
    same = bleu_chrf("x", docs, [["Где же ты был вчера вечером?", "Я тебе уже всё сказал."]])
    assert same.bleu == 100.0 and same.chrf == 100.0 and same.sentences == 2
    other = bleu_chrf("x", docs, [["Кошка спит.", "Собака лает."]])
    assert other.bleu < 5.0 and other.chrf < 20.0


def _random_model(tiny_bundle, seed: int):
    """A small untrained Transformer on the tiny bundle's tokenizer: (spm file, model)."""
    import sentencepiece as spm

    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer

    spm_file = tiny_bundle.parent / "spm.model"
    vocab = spm.SentencePieceProcessor(model_file=str(spm_file)).get_piece_size()
    torch.manual_seed(seed)
    model = Transformer(ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64,
                                    enc_layers=2, dec_layers=2, max_positions=256,
                                    dropout=0.0)).eval()
    with torch.no_grad():  # end sentences at a length of a few pieces, as a trained model does
        model.embed.weight[3] *= 3.0
    return spm_file, model


def test_torch_beam_search_equals_ctranslate2_beam_4(tmp_path, tiny_bundle):
    """The same sentence-level weights served by both backends give the same beam-4 output."""
    from subctx_train.export import export_bundle

    spm_file, model = _random_model(tiny_bundle, 3)
    manifest = Manifest("transformer", source_spm="spm.model", target_spm="spm.model",
                        max_positions=256, context=ContextSettings())
    ct2 = CTranslate2Backend(export_bundle(model, spm_file, manifest, tmp_path / "ct2"),
                             device="cpu", compute_type="float32", threads=1)
    torch_manifest = Manifest("transformer", backend="torch", source_spm="spm.model",
                              target_spm="spm.model", max_positions=256,
                              context=ContextSettings(target_side="none"))
    served = TorchBackend(export_torch_bundle(model, spm_file, torch_manifest, tmp_path / "pt"),
                          device="cpu")
    sentences = [s for s, _ in CORPUS] + [t for _, t in CORPUS] + ["Hi.", "No, no, no!"]
    same = 0
    for sentence in sentences:
        [a] = ct2.translate([Request(sentence)], beam_size=4)
        [b] = served.translate([Request(sentence)], beam_size=4)
        same += a.text == b.text
    assert same == len(sentences), f"{same}/{len(sentences)} identical"


@pytest.mark.parametrize("shift", [0, 16])
def test_torch_concat_with_context_equals_ctranslate2(tmp_path, tiny_bundle, shift):
    """A concatenation model served by PyTorch (as a GPU machine without ctranslate2 evaluates
    it) translates and scores with context exactly as CTranslate2 does: source context
    concatenated (positions shifted per segment), previous translation forced as a prefix, a
    forced start of the current sentence."""
    from subctx_train.export import export_bundle

    spm_file, model = _random_model(tiny_bundle, 5)
    context = ContextSettings(max_k=1, default_k=1, target_side="prefix", segment_shift=shift)
    manifest = Manifest("concat", source_spm="spm.model", target_spm="spm.model",
                        max_positions=256, context=context)
    ct2 = CTranslate2Backend(export_bundle(model, spm_file, manifest, tmp_path / "ct2"),
                             device="cpu", compute_type="float32", threads=1)
    served = TorchBackend(export_torch_bundle(
        model, spm_file, Manifest("concat", backend="torch", source_spm="spm.model",
                                  target_spm="spm.model", max_positions=256, context=context),
        tmp_path / "pt"), device="cpu")
    assert served.uses_target_context and served.supports_forced_start
    requests = [Request(src, (prev_src,), (prev_tgt,)) for (src, _), (prev_src, prev_tgt)
                in zip(CORPUS[1:], CORPUS, strict=False)]
    requests += [Request(CORPUS[0][0]), Request(CORPUS[2][0], (CORPUS[1][0],), (CORPUS[1][1],),
                                                forced_start=CORPUS[2][1].split()[0])]
    a = ct2.translate(requests, beam_size=4)
    b = served.translate(requests, beam_size=4)  # one batch: prefixes of different lengths
    assert [t.text for t in b] == [t.text for t in a]
    # both rank by the generated tokens alone (the forced ones count in neither the
    # log-probability nor the length)
    assert [round(t.score, 4) for t in b] == [round(t.score, 4) for t in a]
    assert requests[-1].forced_start and b[-1].text.startswith(requests[-1].forced_start)
    plain = served.translate([Request(r.text) for r in requests[:-2]], beam_size=4)
    assert [t.text for t in plain] != [t.text for t in b[:-2]]  # the context was read
    candidates = [t for _, t in CORPUS[1:]] + [CORPUS[0][1], CORPUS[2][1]]
    for x, y in zip(ct2.score(requests, candidates), served.score(requests, candidates),
                    strict=True):
        assert (x.tokens, round(x.log_prob, 3)) == (y.tokens, round(y.log_prob, 3))


@pytest.mark.parametrize("k", [0, 1])
def test_ctxpro_documents_hold_the_last_k_plus_one_sentences(k):
    engine = Fixed({"A.": "А.", "B.": "Б.", "C.": "В."})
    ctxpro_accuracy(engine, [CtxproItem("R", "в", ["A.", "B.", "C."])],
                    DecodeOptions(context=k))
    assert sorted({r.text for r in engine.requests}) == ["B.", "C."][1 - k:]


def test_a_wrong_voita_folder_is_one_line_not_a_traceback(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "subctx_train.cli", "evaluate-contrastive",
                           "--model", "assets/models/en-ru", "--voita", str(tmp_path),
                           "--tests", "deixis_dev"], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no deixis_dev.json" in done.stderr and len(done.stderr.strip().splitlines()) == 1
