"""Corpus weighting, reversed documents, tagged back-translation, target-side context as
inference shows it, and the resumable corpus translator."""

import random

import sentencepiece as spm
import torch

from subctx_train.backtranslate import finished_documents, plan_jobs, translate_corpus
from subctx_train.data import (
    Document,
    Segment,
    read_jsonl,
    reverse_documents,
    weight_of,
    write_jsonl,
)
from subctx_train.examples import (
    BOS,
    EOS,
    ContextNoise,
    Example,
    collate,
    epoch_sample,
    perturb,
    render,
    tokenize_documents,
)
from subctx_train.loss import discounted_loss
from subctx_train.tokenizer import train_tokenizer
from tests.helpers import CORPUS


def _doc(doc_id="friends/e1", domain="subtitles", synthetic=False):
    return Document(doc_id, [Segment(s, t, 2.0 * i, 2.0 * i + 1) for i, (s, t)
                             in enumerate(CORPUS)], domain, synthetic)


def test_weights_by_corpus_then_domain_and_synthetic_scale():
    weights = {"friends": 3.0, "news": 0.5, "synthetic": 0.5}
    assert weight_of(_doc("friends/e1"), weights) == 3.0
    assert weight_of(_doc("wmt21/x", "news"), weights) == 0.5
    assert weight_of(_doc("renpy/x", "dialogue"), weights) == 1.0
    assert weight_of(_doc("stalker/x", "dialogue", synthetic=True), weights) == 0.5


def test_weights_by_longest_doc_id_prefix_and_machine_drafted_scale(tmp_path):
    from subctx_train.data import read_weights, weight_flags, weight_rule

    weights = {"weidu": 0.6, "weidu/sandraheet/x": 0.1, "dialogue": 1.0, "game": 0.3,
               "machine-drafted": 0.5, "synthetic": 0.5}
    assert weight_rule(_doc("weidu/bg1npc/a", "dialogue"), weights) == ("weidu", 0.6)
    # the Sandrah saga is machine-drafted: the corpus weight times machine-drafted's
    assert weight_rule(_doc("weidu/sandraheet/y", "dialogue"), weights) == ("weidu", 0.3)
    assert weight_rule(_doc("weidu/sandraheet/x", "dialogue"), weights)[1] == 0.05
    assert weight_rule(_doc("weidus/a", "game"), weights) == ("game", 0.3)  # whole parts only
    assert weight_rule(_doc("stalker/a", "news"), weights) == ("", 1.0)
    assert weight_rule(_doc("stalker/a", "dialogue", synthetic=True), weights) == (
        "dialogue", 0.5)
    assert weight_of(_doc("weidu/lanna/a", "dialogue"), {"machine-drafted": 0}) == 0
    path = tmp_path / "w.toml"
    path.write_text('[weights]\nsubtitles = 4\n"weidu/lanna" = 0.5\nmachine-drafted = 0\n')
    assert read_weights(path) == {"subtitles": 4.0, "weidu/lanna": 0.5, "machine-drafted": 0.0}
    assert weight_flags(read_weights(path)) == [
        "--weight", "subtitles=4", "--weight", "weidu/lanna=0.5", "--weight", "machine-drafted=0"]


def test_a_weight_that_matches_nothing_is_said_and_all_zero_is_an_error(capsys):
    """A misspelt --weight used to do nothing and say nothing."""
    import pytest

    from subctx_train.data import DataError, unmatched_weights

    sp = spm.SentencePieceProcessor(model_file=str(_tokenizer_file()))
    capsys.readouterr()
    docs = [_doc("friends/e1"), _doc("weidu/bg1npc/a", "dialogue"), _doc("wmt/x", "news")]
    weights = {"freinds": 2.0, "weidu/bg1npc": 0.5, "news": 2.0, "synthetic": 0.5}
    examples = tokenize_documents(docs, sp, max_k=1, weights=weights)
    assert len(examples) == 3 * len(CORPUS)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "warning: --weight freinds, synthetic: match no corpus, part or domain of the data, so "
        "they do nothing (did you mean friends?); corpora: friends, weidu, wmt; domains: "
        "subtitles, dialogue, news")
    assert unmatched_weights(docs, {"friends": 2, "weidu": 1, "dialogue": 1,
                                    "machine-drafted": 0.5}) == (
        "--weight machine-drafted: matches no corpus, part or domain of the data, so it does "
        "nothing; corpora: friends, weidu, wmt; domains: subtitles, dialogue, news; or "
        "synthetic, machine-drafted, a doc-id prefix (e.g. weidu/bsofb)")
    assert unmatched_weights(docs, {"friends": 2, "weidu/bg1npc": 1, "news": 1}) is None
    tokenize_documents(docs, sp, max_k=1)
    assert capsys.readouterr().err == ""  # no weights: nothing to say
    with pytest.raises(DataError, match="every document has weight 0"):
        tokenize_documents(docs, sp, max_k=1, weights={"friends": 0, "weidu": 0, "news": 0})


def _tokenizer_file():
    import tempfile
    from pathlib import Path

    out = Path(tempfile.mkdtemp()) / "spm.model"
    return train_tokenizer([s for pair in CORPUS for s in pair] * 20, out, vocab_size=120)


def test_the_shipped_weights_files_parse_as_train_options():
    from pathlib import Path

    from subctx_train.config import load_config
    from subctx_train.data import read_weights, weight_flags

    for path in sorted((Path(__file__).parent.parent / "subctx_train/configs/weights").glob(
            "*.toml")):
        weights = read_weights(path)
        assert load_config("tiny", weight_flags(weights)).corpus_weights == weights, path


def test_data_report_shares_follow_the_weights(tmp_path):
    from subctx_train.data_report import corpus_rows, markdown

    docs = [_doc("friends/e1"), _doc("paradox/x", "game-narrative"),
            _doc("weidu/lanna/a", "dialogue"), _doc("weidu/bg1npc/a", "dialogue"),
            _doc("plays/1", "drama", synthetic=True)]
    path = tmp_path / "train.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(docs, handle)
    weights = {"subtitles": 4, "game-narrative": 0.5, "synthetic": 0.5, "machine-drafted": 0}
    rows, counts = corpus_rows([tmp_path], weights)
    by_name = {r.name: r for r in rows}
    pairs = len(CORPUS)
    assert set(by_name) == {"friends · subtitles", "paradox · game-narrative",
                            "weidu · machine-drafted", "weidu", "plays · synthetic"}
    assert by_name["friends · subtitles"].examples == 4 * pairs
    assert by_name["weidu · machine-drafted"].examples == 0
    total = (4 + 0.5 + 0 + 1 + 0.5) * pairs
    assert abs(by_name["paradox · game-narrative"].share - 0.5 * pairs / total) < 1e-9
    assert abs(sum(r.share for r in rows) - 1) < 1e-9
    [weidu] = [r for r in corpus_rows([path], weights, by="corpus")[0] if r.corpus == "weidu"]
    assert weidu.pairs == 2 * pairs and weidu.weight == 0.5  # the mean of 0 and 1
    table = markdown(rows)
    row = f"| friends · subtitles | train | subtitles | {pairs} | 4 | {4 * pairs} | 66.7 % |"
    assert row in table


def test_epoch_sample_repeats_by_weight():
    rng = random.Random(0)
    examples = [Example([1], [2], [], [], weight=w) for w in (0.0, 1.0, 2.5)]
    counts = [0, 0, 0]
    for _ in range(2000):
        for ex in epoch_sample(examples, rng):
            counts[examples.index(ex)] += 1
    assert counts[0] == 0 and counts[1] == 2000
    assert 2.4 < counts[2] / 2000 < 2.6


def test_reverse_documents_swaps_sides_and_drops_untranslated():
    doc = Document("d", [Segment("ctx only", None), Segment("Hi.", "Привет.", 1.0, 2.0)])
    [rev] = reverse_documents([doc])
    assert [(s.src, s.tgt, s.start) for s in rev.segments] == [("Привет.", "Hi.", 1.0)]


def test_jsonl_round_trip_keeps_mt_and_synthetic(tmp_path):
    doc = _doc(synthetic=True)
    doc.segments[0].mt = "Здравствуй, как ты?"
    path = tmp_path / "docs.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl([doc], handle)
    assert "\\u" not in path.read_text(encoding="utf-8")
    [back] = list(read_jsonl(path))
    assert back.synthetic and back.segments[0].mt == "Здравствуй, как ты?"
    assert back.segments[1].mt is None and back.segments[3].start == 6.0


def test_synthetic_sources_start_with_the_tag(tmp_path):
    sentences = [s for pair in CORPUS for s in pair] * 20
    sp = spm.SentencePieceProcessor(model_file=str(
        train_tokenizer(sentences, tmp_path / "spm.model", vocab_size=120)))
    tag = sp.piece_to_id("<bt>")
    real = tokenize_documents([_doc()], sp, max_k=1)
    synthetic = tokenize_documents([_doc(synthetic=True)], sp, max_k=1)
    assert all(tag not in ex.src for ex in real)
    assert all(ex.src[0] == tag and ex.src_ctx[-1][0] == tag for ex in synthetic[1:])
    assert [ex.tgt for ex in real] == [ex.tgt for ex in synthetic]  # targets untouched


def test_examples_hold_each_sentences_own_ids_whatever_the_mix(tmp_path, monkeypatch):
    """The corpus is encoded in batched calls: every example still gets the ids of its own
    sentences (segments without a target, empty targets, own translations, weight-0
    documents left out, batches that end mid-document)."""
    from subctx_train import examples

    sentences = [s for pair in CORPUS for s in pair] * 20
    sp = spm.SentencePieceProcessor(model_file=str(
        train_tokenizer(sentences, tmp_path / "spm.model", vocab_size=120)))
    mixed = _doc("friends/e2")
    mixed.segments[1].tgt = None  # a line without a target: context only
    mixed.segments[2].tgt = ""
    mixed.segments[3].mt = "Здравствуй."
    docs = [_doc("news/a", "news"), mixed, _doc("friends/e3", synthetic=True)]
    monkeypatch.setattr(examples, "ENCODE_BATCH", 3)
    got = tokenize_documents(docs, sp, max_k=1, weights={"news": 0})
    ids = {text: sp.encode(text) for s in mixed.segments for text in (s.src, s.tgt, s.mt) if text}
    want_src = [ids[s.src] for s in mixed.segments]
    assert len(got) == len(CORPUS) - 1 + len(CORPUS)  # news weighs 0; one line has no target
    first = [ex for ex in got if ex.src in want_src]
    assert [ex.tgt for ex in first] == [ids.get(s.tgt, []) for s in mixed.segments
                                        if s.tgt is not None]
    # the line after the one with its own translation has it as context (segments 0, 2, 3, 4)
    assert first[3].mt_ctx == [ids["Здравствуй."]] and first[2].mt_ctx == [None]
    tag = sp.piece_to_id("<bt>")
    assert all(ex.src[0] == tag for ex in got[len(first):])


def test_examples_share_their_neighbours_ids_instead_of_copies(tmp_path):
    """A sentence's ids are one list, shared by its own example and the context of the next
    ones, and each id value is one int object: what keeps a million examples in memory."""
    sentences = [s for pair in CORPUS for s in pair] * 20
    sp = spm.SentencePieceProcessor(model_file=str(
        train_tokenizer(sentences, tmp_path / "spm.model", vocab_size=120)))
    got = tokenize_documents([_doc(), _doc("friends/e2", synthetic=True)], sp, max_k=2)
    for docs in (got[:len(CORPUS)], got[len(CORPUS):]):
        for before, ex in zip(docs, docs[1:], strict=False):
            assert ex.src_ctx[-1] is before.src and ex.tgt_ctx[-1] is before.tgt
    ids = [i for ex in got for i in (*ex.src, *ex.tgt)]
    assert len({id(i) for i in ids}) == len(set(ids))
    long = tokenize_documents([_doc()], sp, max_k=1, max_len=3)
    assert all(len(ex.src) <= 3 and len(ex.tgt) <= 3 for ex in long)
    assert [ex.src for ex in long] == [sp.encode(s)[:3] for s, _ in CORPUS]


def test_own_and_perturbed_target_context():
    ex = Example([10], [20, 21], [[5]], [[8, 8, 8, 8, 8, 8]], mt_ctx=[[7, 7, 7]])
    gold = render(ex, 1, sep=4, cd_weight=0.01, shift=0)
    assert gold.tgt == [BOS, 8, 8, 8, 8, 8, 8, 4, 20, 21, EOS] and gold.prefix_len == 7
    own = render(ex, 1, sep=4, cd_weight=0.01, shift=0, noise=ContextNoise(own=1.0),
                 rng=random.Random(0))
    assert own.tgt == [BOS, 7, 7, 7, 4, 20, 21, EOS] and own.prefix_len == 4
    # without rng (dev evaluation) the reference context is used whatever the noise
    assert render(ex, 1, sep=4, cd_weight=0.01, shift=0, noise=ContextNoise(1.0, 1.0)) == gold
    rng = random.Random(1)
    cuts = [perturb(list(range(20)), rng) for _ in range(200)]
    assert all(1 <= len(c) < 20 or c == list(range(20)) for c in cuts)
    assert any(c == list(range(len(c))) and len(c) < 20 for c in cuts)  # cut short
    assert any(c != list(range(len(c))) for c in cuts)  # words dropped inside


def test_current_tokens_are_a_mask_not_a_weight_value():
    """With CD = 1 the context tokens weigh like current ones but are not counted as current:
    a 4-token context prefix and a 3-token sentence (+ </s>) count 4 tokens, not 9."""
    ex = Example([10], [20, 21, 22], [[5]], [[8, 9, 9]])
    batch = collate([render(ex, 1, sep=4, cd_weight=1.0, shift=0)])
    assert batch.target_tokens == 4
    logits = torch.zeros(1, batch.tgt_out.size(1), 30)
    out = discounted_loss(logits, batch.tgt_out, batch.weights, batch.current, 0.0)
    assert out.tokens == 4
    assert abs(out.loss.item() - torch.log(torch.tensor(30.0)).item() * 8 / 4) < 1e-4


def _mono(tmp_path):
    path = tmp_path / "mono.jsonl"
    docs = [Document(f"plays/{i}", [Segment(None, t, None, None) for _, t in CORPUS[i:i + 3]],
                     "drama") for i in range(3)]
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(docs, handle)
    return path


def test_back_translation_keeps_order_marks_synthetic_and_resumes(tmp_path):
    source, out_dir = _mono(tmp_path), tmp_path / "bt"
    calls = []

    def fake(texts):
        calls.append(len(texts))
        return [f"EN({t})" for t in texts]

    [job] = plan_jobs([source], out_dir, "back")
    assert job.todo == 9
    translate_corpus(job, fake, "back", chunk=3)
    docs = list(read_jsonl(out_dir / "mono.jsonl"))
    assert [d.doc_id for d in docs] == ["plays/0", "plays/1", "plays/2"]
    assert all(d.synthetic for d in docs)
    assert [s.src for s in docs[1].segments] == [f"EN({t})" for _, t in CORPUS[1:4]]
    # an interrupted run: the last document torn in the middle of its line
    out = out_dir / "mono.jsonl"
    data = out.read_bytes()
    out.write_bytes(data[: data.rfind(b"\n", 0, len(data) - 1) + 20])
    assert finished_documents(out) == {"plays/0", "plays/1"}
    [job] = plan_jobs([source], out_dir, "back")
    assert job.todo == 3
    calls.clear()
    translate_corpus(job, fake, "back", chunk=3)
    assert calls == [3]
    assert [d.doc_id for d in read_jsonl(out)] == ["plays/0", "plays/1", "plays/2"]


def test_back_translation_of_the_first_documents_only(tmp_path):
    [job] = plan_jobs([_mono(tmp_path)], tmp_path / "bt", "back", max_segments=4)
    assert job.todo == 6  # two whole documents of 3 segments reach 4
    translate_corpus(job, lambda texts: ["x"] * len(texts), "back")
    assert [d.doc_id for d in read_jsonl(tmp_path / "bt" / "mono.jsonl")] == ["plays/0", "plays/1"]


def test_own_translations_fill_mt(tmp_path):
    path = tmp_path / "par.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl([_doc()], handle)
    [job] = plan_jobs([path], tmp_path / "own", "own")
    translate_corpus(job, lambda texts: [t.upper() for t in texts], "own")
    [doc] = read_jsonl(tmp_path / "own" / "par.jsonl")
    assert doc.segments[0].mt == CORPUS[0][0].upper() and doc.segments[0].tgt == CORPUS[0][1]
    assert not doc.synthetic
