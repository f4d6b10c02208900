"""Readers that turn other parallel formats into `Document`s.

- OPUS OpenSubtitles XML (sentence files with <time> stamps + an XCES alignment file),
- OPUS Moses text (.en/.ru line-aligned) with its .ids alignment file,
- a pair of .srt files of the same film, aligned by time overlap,
- plain parallel text, an empty line on both sides marking a document boundary.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from subctx.formats import read_subtitles
from subctx.formats.timing import parse_timestamp
from subctx.units import plan_document
from subctx_train.data import Document, Segment


def _open_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8")


@dataclass
class _Sentence:
    text: str
    start: float | None
    end: float | None


def read_opus_sentences(path: Path) -> dict[str, _Sentence]:
    """Sentences of one OPUS XML subtitle file by id, with times from its <time> tags.

    A sentence starts at the last 'S' time seen before or inside it and ends at the last 'E'
    time inside it (or the next 'E' after it, when the cue ends later)."""
    root = ET.fromstring(_open_text(path))
    sentences: dict[str, _Sentence] = {}
    last_start: float | None = None
    pending_end: list[_Sentence] = []
    for s in root.iter("s"):
        start, end = last_start, None
        words: list[str] = []
        for node in s.iter():
            if node.tag == "time":
                value = parse_timestamp(node.get("value", "").replace(".", ","))
                if node.get("id", "").endswith("S"):
                    last_start = value
                    if start is None or not words:
                        start = value
                else:
                    end = value
                    for waiting in pending_end:
                        waiting.end = value
                    pending_end = []
            elif node.tag == "w" and node.text:
                words.append(node.text)
        if not words:  # the 'raw' OPUS flavour: text between the <time> tags
            words = ["".join(s.itertext())]
        text = " ".join(" ".join(words).split())
        text = re.sub(r" ([,.!?;:%)\]])", r"\1", text).replace("( ", "(")
        sentence = _Sentence(text, start, end)
        if end is None:
            pending_end.append(sentence)
        sentences[s.get("id", str(len(sentences) + 1))] = sentence
    return sentences


def read_opus_xml(alignment: Path, root: Path | None = None) -> Iterator[Document]:
    """Documents from an XCES alignment file (<linkGrp fromDoc= toDoc=><link xtargets=>)."""
    alignment = Path(alignment)
    root = Path(root) if root else alignment.parent
    tree = ET.fromstring(_open_text(alignment))
    for group in tree.iter("linkGrp"):
        src_doc = read_opus_sentences(_resolve(root, group.get("fromDoc", "")))
        tgt_doc = read_opus_sentences(_resolve(root, group.get("toDoc", "")))
        segments = []
        for link in group.iter("link"):
            src_ids, _, tgt_ids = link.get("xtargets", "").partition(";")
            src = [src_doc[i] for i in src_ids.split() if i in src_doc]
            tgt = [tgt_doc[i] for i in tgt_ids.split() if i in tgt_doc]
            if not src or not tgt:
                continue
            starts = [s.start for s in src if s.start is not None]
            ends = [s.end for s in src if s.end is not None]
            segments.append(Segment(" ".join(s.text for s in src), " ".join(t.text for t in tgt),
                                    min(starts) if starts else None,
                                    max(ends) if ends else None))
        if segments:
            yield Document(group.get("fromDoc", ""), segments, "subtitles")


def _resolve(root: Path, name: str) -> Path:
    for candidate in (root / name, root / name.removesuffix(".gz"), root / f"{name}.gz"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"{root / name}: aligned document not found")


def read_moses_with_ids(src_file: Path, tgt_file: Path, ids_file: Path) -> Iterator[Document]:
    """OPUS Moses files; lines whose .ids row names the same document pair form a document."""
    with open(src_file, encoding="utf-8") as fs, open(tgt_file, encoding="utf-8") as ft, \
            open(ids_file, encoding="utf-8") as fi:
        current: tuple[str, str] | None = None
        segments: list[Segment] = []
        for src, tgt, ids in zip(fs, ft, fi, strict=True):
            fields = ids.rstrip("\n").split("\t")
            key = (fields[0], fields[1] if len(fields) > 1 else "")
            if key != current and segments:
                yield Document(f"{current[0]}|{current[1]}", segments, "subtitles")
                segments = []
            current = key
            segments.append(Segment(src.strip(), tgt.strip()))
        if segments and current:
            yield Document(f"{current[0]}|{current[1]}", segments, "subtitles")


def read_plain(src_file: Path, tgt_file: Path) -> Iterator[Document]:
    """Line-aligned text; a line empty on both sides ends a document."""
    with open(src_file, encoding="utf-8") as fs, open(tgt_file, encoding="utf-8") as ft:
        segments: list[Segment] = []
        count = 0
        for src, tgt in zip(fs, ft, strict=True):
            if not src.strip() and not tgt.strip():
                if segments:
                    count += 1
                    yield Document(f"{Path(src_file).stem}/{count}", segments)
                    segments = []
                continue
            segments.append(Segment(src.strip(), tgt.strip()))
        if segments:
            yield Document(f"{Path(src_file).stem}/{count + 1}", segments)


def align_srt_pair(src_srt: Path, tgt_srt: Path, min_overlap: float = 0.3) -> Document:
    """Sentence pairs from two subtitle files of one film, by time overlap.

    Cues are linked when they overlap by at least `min_overlap` of the shorter one; each
    connected group of linked cues becomes one pair (so 2:1 and 1:2 splits are merged)."""
    def cues(path: Path) -> list[tuple[float, float, str]]:
        sub = read_subtitles(path)
        plan = plan_document(sub)
        out = []
        for index, cue in enumerate(sub.cues):
            text = " ".join(plan.units[u].text for u in plan.layouts[index].units)
            if cue.start is not None and cue.end is not None and text:
                out.append((cue.start, cue.end, text))
        return out

    src, tgt = cues(Path(src_srt)), cues(Path(tgt_srt))
    parent = list(range(len(src) + len(tgt)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    j0 = 0
    for i, (s0, e0, _) in enumerate(src):
        while j0 < len(tgt) and tgt[j0][1] <= s0:
            j0 += 1
        j = j0
        while j < len(tgt) and tgt[j][0] < e0:
            s1, e1, _ = tgt[j]
            overlap = min(e0, e1) - max(s0, s1)
            if overlap >= min_overlap * max(1e-3, min(e0 - s0, e1 - s1)):
                parent[find(i)] = find(len(src) + j)
            j += 1
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for i in range(len(src)):
        groups.setdefault(find(i), ([], []))[0].append(i)
    for j in range(len(tgt)):
        groups.setdefault(find(len(src) + j), ([], []))[1].append(j)
    segments = []
    for s_idx, t_idx in sorted(groups.values(), key=lambda g: min(g[0] or [10**9])):
        if not s_idx or not t_idx:
            continue
        segments.append(Segment(" ".join(src[i][2] for i in s_idx),
                                " ".join(tgt[j][2] for j in t_idx),
                                min(src[i][0] for i in s_idx), max(src[i][1] for i in s_idx)))
    return Document(Path(src_srt).stem, segments, "subtitles")
