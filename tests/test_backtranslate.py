"""Back-translation at scale: sampling in both backends (top-1 sampling is greedy search),
Edunov et al.'s noise, sentences decoded by length, known Russian left out, and the
`back-translate` command on a PyTorch bundle."""

import json
import random

import pytest
import torch
from typer.testing import CliRunner

from subctx.backends.pytorch import TorchBackend
from subctx.bundle import ContextSettings, Manifest
from subctx.contract import Request
from subctx_train.backtranslate import (
    BLANK,
    SAMPLINGS,
    by_length,
    engine_translate,
    known_keys,
    noised,
    plan_jobs,
    translate_corpus,
)
from subctx_train.bundle_card import export_torch_bundle
from subctx_train.cli import app
from subctx_train.data import Document, Segment, read_jsonl, write_jsonl
from subctx_train.tokenizer import train_tokenizer
from tests.helpers import CORPUS


@pytest.fixture(scope="module")
def torch_bundle(tmp_path_factory):
    """A random-weight concatenation model (target-side context forced) as a PyTorch bundle,
    Russian to English as back-translate wants it."""
    import sentencepiece as spm

    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer

    out = tmp_path_factory.mktemp("torch-bundle")
    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20, out / "spm.model",
                               vocab_size=120)
    vocab = spm.SentencePieceProcessor(model_file=str(spm_file)).get_piece_size()
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=vocab, d_model=32, n_heads=4, ff_dim=64, enc_layers=2,
                      dec_layers=2, max_positions=256, dropout=0.0)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # </s> and <sep> rare, so that random outputs are some text
        model.embed.weight[3] *= 0.0
        model.embed.weight[4] *= 0.0
    manifest = Manifest("concat", backend="torch", source_lang="ru", target_lang="en",
                        max_positions=256, source_spm="spm.model",
                        target_spm="spm.model", context=ContextSettings(max_k=1, default_k=1))
    return export_torch_bundle(model, spm_file, manifest, out / "bundle")


def test_top1_sampling_is_greedy_search_with_its_score(torch_bundle):
    engine = TorchBackend(torch_bundle, device="cpu")
    requests = [Request("Where is the door?"),
                Request("She said it was fine.", ("Hello there, how are you?",),
                        ("Привет, как дела?",)),  # a forced target-side prefix
                Request("Thank you very much.")]
    greedy = engine.translate(requests, beam_size=1, max_batch_size=2)
    drawn = engine.sample(requests, top_k=1, max_batch_size=2, seed=3)
    assert [t.text for t in drawn] == [t.text for t in greedy]
    assert [t.score for t in drawn] == pytest.approx([t.score for t in greedy], abs=1e-4)


def test_sampling_is_seeded(torch_bundle):
    engine = TorchBackend(torch_bundle, device="cpu")
    requests = [Request(s) for s, _ in CORPUS]
    first = [t.text for t in engine.sample(requests, seed=1)]
    assert [t.text for t in engine.sample(requests, seed=1)] == first
    others = [[t.text for t in engine.sample(requests, seed=s)] for s in (2, 3)]
    assert any(o != first for o in others)  # a random model's distribution is wide
    assert engine.sample([]) == []


def test_noise_deletes_blanks_and_moves_words_a_little():
    text = " ".join(f"w{i}" for i in range(200))
    out = noised(text, random.Random(0)).split()
    kept = [w for w in out if w != BLANK]
    assert 0.05 * 200 < out.count(BLANK) < 0.15 * 200
    assert 0.7 * 200 < len(kept) < 0.9 * 200
    positions = [int(w[1:]) for w in kept]
    # a word moves by less than 3 places among the words left
    assert all(abs(i - sorted(positions).index(p)) < 3 for i, p in enumerate(positions))
    assert noised("Да.", random.Random(5), p=0.99)  # never empty
    assert noised(text, random.Random(1)) == noised(text, random.Random(1))


def test_by_length_decodes_longest_first_and_keeps_the_order():
    seen = []

    def upper(texts):
        seen.append(list(texts))
        return [t.upper() for t in texts]

    assert by_length(upper)(["bb", "a", "cccc"]) == ["BB", "A", "CCCC"]
    assert seen == [["cccc", "bb", "a"]]


def _mono(path, docs):
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(docs, handle)
    return path


def _ru_docs(n=3):
    return [Document(f"plays/{d}", [Segment(None, t, 2.0 * i, 2.0 * i + 1)
                                    for i, (_, t) in enumerate(CORPUS[d:d + 3])], "drama")
            for d in range(n)]


def test_known_russian_is_left_out_of_back_translation(tmp_path):
    parallel = _mono(tmp_path / "par.jsonl", [Document("friends/e1", [
        Segment("Where is the door?", "где ДВЕРЬ"),  # the same key as «Где дверь?»
        Segment("Context only.", None)])])
    keys = known_keys([parallel])
    assert len(keys) == 1
    source = _mono(tmp_path / "mono.jsonl", _ru_docs())
    [job] = plan_jobs([source], tmp_path / "bt", "back", known=keys)
    assert job.todo == 9 - 2 and job.dropped == 2  # «Где дверь?» is in two documents
    translate_corpus(job, lambda texts: [f"EN {t}" for t in texts], "back")
    docs = list(read_jsonl(tmp_path / "bt" / "mono.jsonl"))
    assert [d.doc_id for d in docs] == ["plays/0", "plays/1", "plays/2"]
    assert all(s.tgt != "Где дверь?" for d in docs for s in d.segments)
    assert [s.start for s in docs[2].segments] == [0.0, 4.0]  # timings kept, a gap left
    [again] = plan_jobs([source], tmp_path / "bt", "back", known=keys)
    assert again.todo == 0 and again.dropped == 0


def test_a_document_translated_to_nothing_is_done_and_counted(tmp_path, capsys):
    """A document whose translations all came back empty used to be left out of the output,
    so that every rerun translated it again, while the log said all its sentences were done."""
    source = _mono(tmp_path / "mono.jsonl", _ru_docs())

    def empty_for_plays_1(texts):  # plays/d is CORPUS[d:d + 3]: the others share some
        return ["" if t in {CORPUS[1][1], CORPUS[2][1], CORPUS[3][1]} else f"EN {t}"
                for t in texts]

    [job] = plan_jobs([source], tmp_path / "bt", "back")
    assert translate_corpus(job, empty_for_plays_1, "back") == 9
    assert (job.translated, job.empty, job.empty_docs) == (9, 2 + 3 + 2, 1)
    assert "mono.jsonl: 7 of 9 translations came back empty; 1 documents got none" in \
        capsys.readouterr().err
    docs = {d.doc_id: d for d in read_jsonl(tmp_path / "bt" / "mono.jsonl")}
    assert list(docs) == ["plays/0", "plays/1", "plays/2"]
    assert [s.src for s in docs["plays/0"].segments] == [f"EN {CORPUS[0][1]}"]  # gaps left
    assert [s.src for s in docs["plays/2"].segments] == [f"EN {CORPUS[4][1]}"]
    assert [s.src for s in docs["plays/1"].segments] == ["", "", ""] and docs["plays/1"].synthetic
    [again] = plan_jobs([source], tmp_path / "bt", "back")
    assert again.todo == 0  # done: a rerun translates nothing
    # training counts its pairs as empty ones
    from subctx_train.data import filter_documents

    kept, counts = filter_documents(list(docs.values()))
    assert [d.doc_id for d in kept] == ["plays/0", "plays/2"] and counts["empty"] == 3


@pytest.mark.parametrize("sampling", ["beam", "top10", "noised"])
def test_engine_translate_is_deterministic_per_chunk(torch_bundle, sampling):
    engine = TorchBackend(torch_bundle, device="cpu")
    texts = [s for s, _ in CORPUS]
    translate = engine_translate(engine, SAMPLINGS[sampling], beam=2, batch_size=4, seed=7)
    first = translate(texts)
    assert len(first) == len(texts)
    assert translate(texts) == first  # a resumed run draws the same


def test_sampling_needs_a_backend_that_draws():
    class Beam:
        pass

    with pytest.raises(ValueError, match="cannot do"):
        engine_translate(Beam(), SAMPLINGS["sample"], 2, 8)


def test_ctranslate2_draws_too_seeded_and_top1_is_greedy(tmp_path):
    """Sampled back-translation on this CPU at CTranslate2's speed (the int8 bundle)."""
    from subctx.backends.ct2 import CTranslate2Backend
    from tests.helpers import build_tiny_bundle

    bundle = build_tiny_bundle(tmp_path / "b", eos_bias=False)
    engine = CTranslate2Backend(bundle, device="cpu", threads=1)
    requests = [Request(s) for s, _ in CORPUS[:3]] + [
        Request("She said it was fine.", ("Hello there, how are you?",),
                ("Привет, как дела?",))]  # a forced target-side prefix
    greedy = [t.text for t in engine.translate(requests, beam_size=1)]
    assert [t.text for t in engine.sample(requests, top_k=1)] == greedy
    first = [t.text for t in engine.sample(requests)]
    assert [t.text for t in engine.sample(requests)] != first  # a random model draws widely
    again = CTranslate2Backend(bundle, device="cpu", threads=1)  # seeded as it loads
    assert [t.text for t in again.sample(requests, top_k=1)] == greedy
    assert [t.text for t in again.sample(requests)] == first
    assert engine.sample([]) == []
    translate = engine_translate(engine, SAMPLINGS["sample"], beam=1, batch_size=4, seed=7)
    assert len(translate([s for s, _ in CORPUS[:3]])) == 3


def test_back_translate_command_samples_on_a_pytorch_bundle(torch_bundle, tmp_path):
    mono = tmp_path / "mono"
    mono.mkdir()
    _mono(mono / "plays.jsonl", _ru_docs())
    parallel = _mono(tmp_path / "par.jsonl", [Document("x/1", [Segment("Door?",
                                                                       "Где дверь?")])])
    args = ["back-translate", str(mono), "--model", str(torch_bundle), "--out",
            str(tmp_path / "bt"), "--device", "cpu", "--batch-size", "4", "--sampling",
            "sample", "--known", str(parallel), "--seed", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "1 files" in result.output and "2 segments with a known Russian left out" in \
        result.output
    lines = (tmp_path / "bt" / "plays.jsonl").read_text(encoding="utf-8").splitlines()
    docs = [json.loads(line) for line in lines]
    assert [d["doc"] for d in docs] == ["plays/0", "plays/1", "plays/2"]
    assert all(d["synthetic"] and all(s["src"] for s in d["segments"]) for d in docs)
    assert sum(len(d["segments"]) for d in docs) == 9 - 2
    again = CliRunner().invoke(app, args)  # all done: nothing more is written
    assert again.exit_code == 0, again.output
    assert (tmp_path / "bt" / "plays.jsonl").read_text(encoding="utf-8").splitlines() == lines
