"""The columnar document pack (pack-docs / unpack-docs): the same documents back, escapes,
known Russian and done documents left out; data-report and weight-flags on tiny files."""

import json

import pytest
from typer.testing import CliRunner

from subctx_train.cli import app
from subctx_train.data import Document, Segment, read_jsonl, write_jsonl
from subctx_train.pack import escape, pack_documents, read_pack, unescape, unpack_documents
from tests.helpers import CORPUS

TRICKY = ["back\\slash", "\\N", "tab\there", "two\nlines", "cr\r", "", "\\n literally",
          "«Ёлки» — … ♪"]


def _write(path, docs):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(docs, handle)
    return path


def _docs():
    timed = Document("friends/e1", [Segment(s, t, 1.5 * i, 1.5 * i + 1.25)
                                    for i, (s, t) in enumerate(CORPUS)], "subtitles")
    timed.segments[1].start = None  # half a timing
    timed.segments[2].tgt = None  # context only
    odd = Document("odd/1", [Segment(t, t[::-1]) for t in TRICKY], "")
    odd.segments[0].mt = "своё"
    mono = Document("plays/1", [Segment(None, t) for _, t in CORPUS], "drama")
    synthetic = Document("bt/1", [Segment("EN", "РУ", 0.1, 0.2)], "drama", synthetic=True)
    return [timed, odd], [mono, synthetic]


def test_escapes_round_trip():
    for text in [*TRICKY, None]:
        line = escape(text)
        assert "\n" not in line and "\t" not in line
        assert unescape(line) == text


def test_pack_unpacks_to_the_same_documents(tmp_path):
    first, second = _docs()
    a = _write(tmp_path / "in" / "a.jsonl", first)
    b = _write(tmp_path / "in2" / "b.jsonl", second)
    manifest = pack_documents([tmp_path / "in", b], tmp_path / "pack")
    assert [f["name"] for f in manifest["files"]] == ["a.jsonl", "b.jsonl"]
    assert manifest["files"][0] == {"name": "a.jsonl", "docs": 2,
                                    "segments": len(CORPUS) + len(TRICKY)}
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == [
        "docs.tsv", "manifest.json", "mt.txt", "src.txt", "tgt.txt", "time.txt"]
    written = unpack_documents(tmp_path / "pack", tmp_path / "out")
    assert [p.name for p in written] == ["a.jsonl", "b.jsonl"]
    assert list(read_jsonl(tmp_path / "out" / "a.jsonl")) == list(read_jsonl(a))
    assert list(read_jsonl(tmp_path / "out" / "b.jsonl")) == list(read_jsonl(b))
    assert [name for name, _ in read_pack(tmp_path / "pack")] == ["a.jsonl"] * 2 + [
        "b.jsonl"] * 2


def test_pack_without_own_translations_has_no_mt_column(tmp_path):
    _, second = _docs()
    pack_documents([_write(tmp_path / "b.jsonl", second)], tmp_path / "pack")
    assert not (tmp_path / "pack" / "mt.txt").exists()
    [_, doc] = [d for _, d in read_pack(tmp_path / "pack")]
    assert doc.synthetic and doc.segments[0].mt is None


def test_pack_refuses_what_it_cannot_carry(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"doc": "x/1", "segments": [{"src": "a", "tgt": "б",
                                                            "speaker": "A"}]}) + "\n")
    with pytest.raises(ValueError, match="speaker"):
        pack_documents([path], tmp_path / "pack")
    (tmp_path / "y").mkdir()
    _write(tmp_path / "y" / "x.jsonl", _docs()[0])
    with pytest.raises(ValueError, match="two files of one name"):
        pack_documents([tmp_path / "x.jsonl", tmp_path / "y"], tmp_path / "pack2")


def test_pack_docs_leaves_out_known_russian_and_done_documents(tmp_path):
    runner = CliRunner()
    mono = _write(tmp_path / "mono" / "plays.jsonl", [
        Document(f"plays/{d}", [Segment(None, t) for _, t in CORPUS[d:d + 2]], "drama")
        for d in range(4)])
    parallel = _write(tmp_path / "par.jsonl", [Document("x/1", [Segment("It slams.",
                                                                        "дверь ХЛОПАЕТ")])])
    done = _write(tmp_path / "bt" / "plays.jsonl", [Document("plays/0", [Segment("a", "б")])])
    result = runner.invoke(app, ["pack-docs", str(tmp_path / "mono"), "--out",
                                 str(tmp_path / "pack"), "--known", str(parallel),
                                 "--skip-done", str(tmp_path / "bt")])
    assert result.exit_code == 0, result.output
    assert "(1 known left out)" in result.output
    result = runner.invoke(app, ["unpack-docs", str(tmp_path / "pack"), "--out",
                                 str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    docs = list(read_jsonl(tmp_path / "out" / "plays.jsonl"))
    assert [d.doc_id for d in docs] == ["plays/1", "plays/2", "plays/3"]
    assert [s.tgt for s in docs[1].segments] == [CORPUS[2][1], CORPUS[3][1]]
    assert [s.tgt for s in docs[2].segments] == [CORPUS[3][1]]  # «Дверь хлопает.» is known
    assert done.exists() and mono.exists()


def test_data_report_and_weight_flags_commands(tmp_path):
    runner = CliRunner()
    first, second = _docs()
    _write(tmp_path / "data" / "a.jsonl", first)
    weights = tmp_path / "w.toml"
    weights.write_text('subtitles = 4\n"odd/1" = 0.5\n')
    result = runner.invoke(app, ["data-report", str(tmp_path / "data"), "--weights",
                                 str(weights), "--weight", "subtitles=2", "--json",
                                 str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["weights"] == {"subtitles": 2.0, "odd/1": 0.5}
    rows = {r["name"]: r for r in report["rows"]}
    assert rows["friends · subtitles"]["pairs"] == len(CORPUS) - 1
    assert rows["odd · odd/1"]["weight"] == 0.5
    assert "| friends · subtitles |" in (tmp_path / "r.md").read_text()
    result = runner.invoke(app, ["data-report", str(tmp_path / "data"), "--by", "nothing"])
    assert result.exit_code != 0
    result = runner.invoke(app, ["weight-flags", str(weights)])
    assert result.output.strip() == "--weight subtitles=4 --weight odd/1=0.5"
