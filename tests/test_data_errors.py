"""Bad training and evaluation data is one line naming the file (and line), and a non-zero exit,
never a traceback; segments without a target are counted; no data is said before anything is
built."""

import json
import sys
from types import SimpleNamespace

import pytest

from subctx.bundle import Manifest
from subctx.errors import SubctxError
from subctx_train.data import (
    CONTEXT_ONLY,
    DataError,
    filter_documents,
    read_documents,
    read_jsonl,
)
from tests.helpers import CORPUS

GOOD = {"doc": "friends/e1", "domain": "subtitles",
        "segments": [{"src": s, "tgt": t} for s, t in CORPUS[:3]]}


def _file(path, *lines: str):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _seg(**segment) -> str:
    return json.dumps({"doc": "friends/e2", "segments": [segment]}, ensure_ascii=False)


@pytest.mark.parametrize(("line", "says"), [
    ('{"doc": "x", "segments": [', "not a document line (Expecting"),
    ('{"doc": "x", "domain": "subtitles"}', 'no "segments" list'),
    ('{"doc": "x", "segments": {"src": "a"}}', '"segments" is not a list'),
    ('["a", "b"]', "a JSON list, not a document object"),
    (_seg(src="Hi.", tgt=5), 'segment 1: "tgt" is 5, not a string or null'),
    (_seg(src=["Hi."], tgt="Привет."), 'segment 1: "src" is ["Hi."], not a string or null'),
    (_seg(tgt="Привет."), 'segment 1 has no "src"'),
    (_seg(src="Hi.", tgt="Привет.", start="0:01"), '"start" is "0:01", not a number'),
    ('{"doc": "x", "segments": ["Hi."]}', "segment 1 is str, not an object"),
])
def test_a_line_that_is_not_a_document_is_a_data_error_naming_file_and_line(tmp_path, line,
                                                                            says):
    path = _file(tmp_path / "bad.jsonl", json.dumps(GOOD), "", line)
    with pytest.raises(DataError) as caught:
        list(read_jsonl(path))
    assert str(caught.value).startswith(f"{path}:3: not a document line")
    assert says in str(caught.value)
    assert isinstance(caught.value, SubctxError)  # what `subctx-train` prints as one line


def test_a_file_that_is_not_text_is_a_data_error(tmp_path):
    path = tmp_path / "model.jsonl"
    path.write_bytes(b"\x80\x81\x00 binary")
    with pytest.raises(DataError, match=f"{path}:1: not UTF-8 text"):
        list(read_jsonl(path))


def test_a_null_source_is_a_data_error_where_pairs_are_needed(tmp_path):
    """Monolingual documents (src null) read as documents, but the trainer's filters refuse
    them, naming the file and line, instead of an AttributeError."""
    path = _file(tmp_path / "mixed.jsonl", json.dumps(GOOD),
                 _seg(src=None, tgt="Привет."))
    docs = read_documents([path])
    assert docs[1].segments[0].src is None and docs[1].where == f"{path}:2"
    with pytest.raises(DataError, match=rf"{path}:2: segment 1 has no English source "
                                        r'\("src": null\).*back-translate'):
        filter_documents(docs)


def test_no_document_is_said_where_the_data_is_read(tmp_path):
    empty = _file(tmp_path / "empty.jsonl")
    with pytest.raises(DataError, match=f"{empty}: no documents"):
        read_documents([empty])
    (tmp_path / "tok").mkdir()
    (tmp_path / "tok" / "spm.model").write_bytes(b"x")
    with pytest.raises(DataError, match=f"{tmp_path / 'tok'}: no .jsonl files in this folder"):
        read_documents([tmp_path / "tok"])
    only_empty = tmp_path / "only_empty"
    only_empty.mkdir()
    _file(only_empty / "a.jsonl")
    _file(only_empty / "b.jsonl", "")
    with pytest.raises(DataError, match=r"no documents in .*a\.jsonl, .*b\.jsonl"):
        read_documents([only_empty])
    # an empty file inside a folder with documents adds none; no paths read nothing
    _file(only_empty / "c.jsonl", json.dumps(GOOD))
    assert [d.doc_id for d in read_documents([only_empty])] == ["friends/e1"]
    assert read_documents([]) == []


def test_segments_without_a_target_are_counted_and_no_pair_at_all_is_an_error(tmp_path):
    path = _file(tmp_path / "ctx.jsonl", json.dumps(GOOD),
                 _seg(src="I am only context."),  # no "tgt" key
                 json.dumps({"doc": "x/3", "segments": [{"src": "Me too.", "tgt": None}]}))
    kept, counts = filter_documents(read_documents([path]))
    assert [d.doc_id for d in kept] == ["friends/e1"]
    assert counts == {CONTEXT_ONLY: 2}
    only_context = _file(tmp_path / "only_context.jsonl", _seg(src="Context."),
                         _seg(src="Hi.", tgt="Hi."))  # a copy: filtered
    with pytest.raises(DataError, match=rf"no training pair in {only_context}: 2 segments, "
                                        rf"none kept \({CONTEXT_ONLY} 1, copy 1\)"):
        filter_documents(read_documents([only_context]))
    assert filter_documents([]) == ([], {})  # no documents given (finalize): nothing to say


@pytest.mark.parametrize(("lines", "says"), [
    ((), "empty.jsonl: no documents"),
    (('{"doc": "x", "segments": [',), "empty.jsonl:1: not a document line"),
    ((_seg(src=None, tgt="Привет."),), 'empty.jsonl:1: segment 1 has no English source'),
    ((_seg(src="Hi.", tgt=7),), 'empty.jsonl:1: not a document line (segment 1: "tgt" is 7'),
    ((_seg(src="Only context."),), "no training pair in"),
])
def test_train_on_bad_data_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys, lines, says):
    """What a user sees: `error: ...`, exit 1, before any model is built."""
    from subctx_train import cli

    data = _file(tmp_path / "empty.jsonl", *lines)
    monkeypatch.setattr(sys, "argv", ["subctx-train", "train", str(data), "--run",
                                      str(tmp_path / "run"), "--preset", "tiny",
                                      "--threads", "1"])
    with pytest.raises(SystemExit) as stopped:
        cli.main()
    err = capsys.readouterr().err
    assert stopped.value.code == 1
    assert err.startswith("error: ") and says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def _engine(source_lang="en"):
    """Enough of a backend for run_bleu to refuse data before it translates anything."""
    manifest = Manifest("concat", source_lang=source_lang,
                        target_lang="ru" if source_lang == "en" else "en")
    return SimpleNamespace(manifest=manifest, max_context=0)


def test_evaluate_refuses_an_empty_file_a_null_source_and_no_reference(tmp_path):
    from subctx_train.report import run_bleu

    empty = _file(tmp_path / "empty.jsonl")
    with pytest.raises(DataError, match=f"{empty}: no documents"):
        run_bleu(_engine(), [empty], None)
    null = _file(tmp_path / "null.jsonl", json.dumps(GOOD), _seg(src=None, tgt="Привет."))
    with pytest.raises(DataError, match=f"{null}:2: segment 1 has no source text to translate"):
        run_bleu(_engine(), [null], None)
    no_ref = _file(tmp_path / "noref.jsonl", _seg(src="Hi."))
    with pytest.raises(DataError, match=f"{no_ref}: no segment with a reference translation"):
        run_bleu(_engine(), [no_ref], None)
    # a Russian-to-English model reads the Russian sides: a monolingual file has no reference
    mono = _file(tmp_path / "mono.jsonl", _seg(src=None, tgt="Привет."))
    with pytest.raises(DataError, match=f"{mono}: no segment with a reference translation"):
        run_bleu(_engine("ru"), [mono], None)
