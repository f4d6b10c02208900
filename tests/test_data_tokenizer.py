"""A run's tokenizer: a given one is checked before it enters the run folder, --spm is never
silently ignored beside --init-from, and `subctx-train tokenizer` says what it does and what
size it made."""

import io
import json

import pytest
import sentencepiece as spm

from subctx.bundle import SpecialTokens
from subctx.errors import SubctxError
from subctx_train.config import make_config
from subctx_train.data import DataError
from subctx_train.runs import ensure_tokenizer
from subctx_train.tokenizer import (
    TokenizerError,
    add_user_pieces,
    build_tokenizer,
    check_tokenizer,
    min_vocab_size,
    train_tokenizer,
)
from tests.helpers import CORPUS

SENTENCES = [s for pair in CORPUS for s in pair] * 20


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    """Two subctx tokenizers of different sizes and a plain SentencePiece model (its own ids)."""
    out = tmp_path_factory.mktemp("tok")
    small = train_tokenizer(SENTENCES, out / "small.model", vocab_size=120)
    other = train_tokenizer(SENTENCES, out / "other.model", vocab_size=120, control_tags=False)
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SENTENCES), model_writer=buffer,
                                   vocab_size=100, hard_vocab_limit=False, minloglevel=2)
    plain = out / "plain.model"
    plain.write_bytes(buffer.getvalue())
    return {"small": small, "other": other, "plain": plain}


def _init_run(path, spm_file):
    path.mkdir()
    (path / "spm.model").write_bytes(spm_file.read_bytes())
    return path


def test_check_tokenizer_says_what_is_wrong(tokenizers, tmp_path):
    assert check_tokenizer(tokenizers["small"].read_bytes(), "small").get_piece_size() > 0
    for data in (b"", b'{"doc": "x"}\n', b"\x00\x01garbage"):
        with pytest.raises(TokenizerError, match="x.model: not a SentencePiece model"):
            check_tokenizer(data, "x.model")
    with pytest.raises(TokenizerError, match=r"plain: a SentencePiece model not made by subctx "
                                             r"\(pad, unk, <s>, </s> have ids \(-1, 0, 1, 2\)"):
        check_tokenizer(tokenizers["plain"].read_bytes(), "plain")
    assert issubclass(TokenizerError, SubctxError)


@pytest.mark.parametrize("bad", ["plain", "not-a-model"])
def test_a_bad_spm_leaves_nothing_in_the_run_and_the_right_one_then_works(tokenizers, tmp_path,
                                                                        bad):
    """A failed start used to leave the wrong tokenizer in the run folder, so that the right
    command then failed with 'has a different tokenizer'."""
    cfg = make_config("tiny")
    run = tmp_path / "run"
    run.mkdir()
    given = tokenizers.get(bad) or tmp_path / "dev.jsonl"
    if bad == "not-a-model":
        given.write_text('{"doc": "x", "segments": []}\n', encoding="utf-8")
    with pytest.raises(TokenizerError, match=str(given)):
        ensure_tokenizer(run, [], cfg, spm_model=given)
    assert list(run.iterdir()) == []
    path = ensure_tokenizer(run, [], cfg, spm_model=tokenizers["small"])
    assert path.read_bytes() == tokenizers["small"].read_bytes()
    with pytest.raises(DataError, match="has a different tokenizer"):  # a run keeps its own
        ensure_tokenizer(run, [], cfg, spm_model=tokenizers["other"])


def test_spm_beside_init_from_is_used_or_refused_never_ignored(tokenizers, tmp_path):
    cfg = make_config("tiny")
    init = _init_run(tmp_path / "init", tokenizers["small"])
    with pytest.raises(DataError, match=r"--spm .*other\.model is not the tokenizer of the "
                                        r"--init-from run"):
        ensure_tokenizer(tmp_path / "a", [], cfg, init_from=init, spm_model=tokenizers["other"])
    assert not (tmp_path / "a" / "spm.model").exists()
    for name, spm_model in (("b", None), ("c", tokenizers["small"])):  # its own: fine
        (tmp_path / name).mkdir()
        path = ensure_tokenizer(tmp_path / name, [], cfg, init_from=init, spm_model=spm_model)
        assert path.read_bytes() == tokenizers["small"].read_bytes()
    # the init run's tokenizer with pieces appended (the ids it was trained on unchanged)
    grown = tmp_path / "grown.model"
    grown.write_bytes(add_user_pieces(tokenizers["small"].read_bytes(), ["<new>"]))
    (tmp_path / "d").mkdir()
    path = ensure_tokenizer(tmp_path / "d", [], cfg, init_from=init, spm_model=grown)
    assert path.read_bytes() == grown.read_bytes()
    # resumed without --spm, it goes on with its own
    assert ensure_tokenizer(tmp_path / "d", [], cfg, init_from=init).read_bytes() == \
        grown.read_bytes()


def test_vocabulary_sizes_are_refused_or_said(tmp_path, capsys):
    with pytest.raises(TokenizerError, match="vocabulary size 0: give at least"):
        train_tokenizer(SENTENCES, tmp_path / "zero.model", vocab_size=0)
    with pytest.raises(TokenizerError, match="no sentence"):
        train_tokenizer([], tmp_path / "none.model", vocab_size=1000)
    assert not (tmp_path / "zero.model").exists()
    capsys.readouterr()
    path = train_tokenizer(SENTENCES, tmp_path / "huge.model", vocab_size=100_000)
    made = spm.SentencePieceProcessor(model_file=str(path)).get_piece_size()
    err = capsys.readouterr().err
    assert "training SentencePiece (unigram, 100,000 pieces) on 240 sentences" in err
    assert f"the tokenizer has {made:,} pieces, not the 100,000 asked (these sentences make " \
           "no more)" in err
    train_tokenizer(SENTENCES, tmp_path / "small.model", vocab_size=10)
    assert f"not the 10 asked ({min_vocab_size(SpecialTokens())} at least hold the bytes" in \
        capsys.readouterr().err


def test_the_tokenizer_command_refuses_a_size_before_reading_and_says_each_step(tmp_path,
                                                                                capsys):
    with pytest.raises(TokenizerError, match=f"--vocab-size 100: give at least "
                                             f"{min_vocab_size(SpecialTokens())} "):
        build_tokenizer([tmp_path / "not-read.jsonl"], tmp_path / "t.model", vocab_size=100)
    data = tmp_path / "par.jsonl"
    data.write_text("".join(json.dumps({"doc": f"x/{i}", "segments": [
        {"src": s, "tgt": t} for s, t in CORPUS]}, ensure_ascii=False) + "\n"
        for i in range(20)), encoding="utf-8")
    mono = tmp_path / "mono.jsonl"
    mono.write_text(json.dumps({"doc": "m/1", "segments": [{"src": None, "tgt": "Где дверь?"}]},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    sentences, pieces = build_tokenizer([data], tmp_path / "t.model", [mono], vocab_size=600)
    assert sentences == 20 * 12 + 1 and pieces == spm.SentencePieceProcessor(
        model_file=str(tmp_path / "t.model")).get_piece_size()
    err = capsys.readouterr().err
    assert "reading 2 data paths" in err and "training SentencePiece" in err
