"""Corpus readers on small fixture files written here."""

import gzip

from subctx_train.corpora import align_srt_pair, read_moses_with_ids, read_opus_xml, read_plain
from subctx_train.data import Document, Segment, filter_documents, read_jsonl
from tests.helpers import write_srt

EN_XML = """<?xml version="1.0" encoding="utf-8"?>
<document id="1">
  <s id="1">
    <time id="T1S" value="00:00:01,000" />
    <w id="1.1">Where</w> <w id="1.2">is</w> <w id="1.3">she</w> <w id="1.4">?</w>
    <time id="T1E" value="00:00:02,500" />
  </s>
  <s id="2">
    <time id="T2S" value="00:00:03,000" />
    <w id="2.1">She</w> <w id="2.2">left</w> <w id="2.3">.</w>
  </s>
  <s id="3">
    <w id="3.1">Bye</w> <w id="3.2">.</w>
    <time id="T2E" value="00:00:04,000" />
  </s>
</document>
"""
RU_XML = """<?xml version="1.0" encoding="utf-8"?>
<document id="2">
  <s id="1"><time id="T1S" value="00:00:01,000" />Где она?
    <time id="T1E" value="00:00:02,500" /></s>
  <s id="2"><time id="T2S" value="00:00:03,000" />Она ушла. Пока.
    <time id="T2E" value="00:00:04,000" /></s>
</document>
"""
ALIGN = """<?xml version="1.0" encoding="utf-8"?>
<cesAlign version="1.0">
<linkGrp targType="s" fromDoc="en/1999/1/a.xml.gz" toDoc="ru/1999/1/b.xml.gz">
<link xtargets="1;1" />
<link xtargets="2 3;2" />
<link xtargets=";" />
</linkGrp>
</cesAlign>
"""


def test_opus_xml_with_timestamps(tmp_path):
    (tmp_path / "en/1999/1").mkdir(parents=True)
    (tmp_path / "ru/1999/1").mkdir(parents=True)
    (tmp_path / "en/1999/1/a.xml.gz").write_bytes(gzip.compress(EN_XML.encode()))
    (tmp_path / "ru/1999/1/b.xml").write_text(RU_XML, encoding="utf-8")
    (tmp_path / "align.xml").write_text(ALIGN, encoding="utf-8")
    [doc] = list(read_opus_xml(tmp_path / "align.xml"))
    assert [(s.src, s.tgt) for s in doc.segments] == [
        ("Where is she?", "Где она?"), ("She left. Bye.", "Она ушла. Пока.")]
    assert (doc.segments[0].start, doc.segments[0].end) == (1.0, 2.5)
    assert (doc.segments[1].start, doc.segments[1].end) == (3.0, 4.0)
    assert doc.timed


def test_moses_with_ids_splits_documents(tmp_path):
    (tmp_path / "c.en").write_text("Hi.\nHow are you?\nNew film.\n", encoding="utf-8")
    (tmp_path / "c.ru").write_text("Привет.\nКак ты?\nНовый фильм.\n", encoding="utf-8")
    (tmp_path / "c.ids").write_text(
        "en/a.xml.gz\tru/a.xml.gz\t1\t1\nen/a.xml.gz\tru/a.xml.gz\t2\t2\n"
        "en/b.xml.gz\tru/b.xml.gz\t1\t1\n", encoding="utf-8")
    docs = list(read_moses_with_ids(tmp_path / "c.en", tmp_path / "c.ru", tmp_path / "c.ids"))
    assert [len(d.segments) for d in docs] == [2, 1]
    assert docs[0].segments[1].tgt == "Как ты?" and not docs[0].timed


def test_plain_text_with_document_boundaries(tmp_path):
    (tmp_path / "p.en").write_text("A.\nB.\n\nC.\n", encoding="utf-8")
    (tmp_path / "p.ru").write_text("А.\nБ.\n\nВ.\n", encoding="utf-8")
    docs = list(read_plain(tmp_path / "p.en", tmp_path / "p.ru"))
    assert [[s.src for s in d.segments] for d in docs] == [["A.", "B."], ["C."]]


def test_srt_pair_alignment_merges_split_cues(tmp_path):
    en = write_srt(tmp_path / "en.srt",
                   "1\n00:00:01,000 --> 00:00:02,000\nWhere is she?\n\n"
                   "2\n00:00:02,100 --> 00:00:03,000\nShe left\n\n"
                   "3\n00:00:03,000 --> 00:00:04,000\n<i>an hour ago.</i>\n\n"
                   "4\n00:00:20,000 --> 00:00:21,000\n- Who?\n- Anna.\n")
    ru = write_srt(tmp_path / "ru.srt",
                   "1\n00:00:01,100 --> 00:00:02,000\nГде она?\n\n"
                   "2\n00:00:02,200 --> 00:00:04,000\nОна ушла час назад.\n\n"
                   "3\n00:00:20,100 --> 00:00:21,000\n- Кто?\n- Анна.\n\n"
                   "4\n00:00:30,000 --> 00:00:31,000\nЛишняя строка.\n", "cp1251")
    doc = align_srt_pair(en, ru)
    assert [(s.src, s.tgt) for s in doc.segments] == [
        ("Where is she?", "Где она?"),
        ("She left an hour ago.", "Она ушла час назад."),
        ("Who? Anna.", "Кто? Анна."),
    ]
    assert doc.segments[1].start == 2.1 and doc.segments[1].end == 4.0


def test_jsonl_and_filters(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"doc": "x/1", "domain": "subtitles", "segments": ['
        '{"src": "Hello.", "tgt": "Привет.", "start": 1.0, "end": 2.0},'
        '{"src": "Subtitles by someone", "tgt": "Субтитры", "start": 3.0, "end": 4.0},'
        '{"src": "Short.", "tgt": "Очень-очень длинный перевод короткой фразы.", '
        '"start": null, "end": null}]}\n'
        '{"doc": "x/2", "segments": [{"src": "Hello.", "tgt": "Привет."}]}\n'
        '{"doc": "x/3", "segments": [{"src": "Hello!", "tgt": "Привет!"}]}\n',
        encoding="utf-8")
    docs = list(read_jsonl(path))
    assert docs[0].timed and not docs[1].timed
    kept, counts = filter_documents(docs + [Document("y", [Segment("Same", "Same")])])
    assert counts == {"credit/sync": 1, "length-ratio": 1, "duplicate": 1, "copy": 1}
    # a filtered pair stays as source-side context without a target
    assert [s.tgt for s in kept[0].segments] == ["Привет.", None, None]
    assert [d.doc_id for d in kept] == ["x/1", "x/2"]


def test_convert_command_writes_training_jsonl(tmp_path):
    from typer.testing import CliRunner

    from subctx_train.cli import app

    (tmp_path / "p.en").write_text("A.\nB.\n\nC.\n", encoding="utf-8")
    (tmp_path / "p.ru").write_text("А.\nБ.\n\nВ.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", "--out", str(out), "--plain",
                                      str(tmp_path / "p.en"), str(tmp_path / "p.ru")])
    assert result.exit_code == 0, result.output
    docs = list(read_jsonl(out))
    assert [len(d.segments) for d in docs] == [2, 1] and docs[1].segments[0].tgt == "В."
