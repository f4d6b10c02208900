"""Documents of parallel segments: the document-JSONL reader and the pair filters.

Other corpus formats (OPUS XML, Moses + ids, aligned .srt pairs, plain text) live in
subctx_train/corpora.py and produce the same `Document`s.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Segment:
    src: str  # None only in monolingual (Russian) documents before back-translation
    tgt: str | None
    start: float | None = None
    end: float | None = None
    mt: str | None = None  # a model's own translation of src (training on own context)


@dataclass
class Document:
    doc_id: str
    segments: list[Segment]
    domain: str = ""
    synthetic: bool = False  # sources made by back-translation (tagged in training)
    timed: bool = field(init=False)

    def __post_init__(self) -> None:
        self.timed = any(s.start is not None for s in self.segments)

    @property
    def corpus(self) -> str:
        """The corpus a document comes from: its id up to the first '/'."""
        return self.doc_id.split("/", 1)[0]


def read_jsonl(path: str | Path) -> Iterator[Document]:
    """Read the shared document-JSONL format (one document per line)."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                segments = [Segment(s["src"], s.get("tgt"), s.get("start"), s.get("end"),
                                    s.get("mt")) for s in raw["segments"]]
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                raise ValueError(f"{path}:{number}: not a document line ({err})") from None
            yield Document(raw.get("doc", f"{Path(path).stem}/{number}"), segments,
                           raw.get("domain", ""), bool(raw.get("synthetic", False)))


def jsonl_files(paths: Iterable[str | Path]) -> list[Path]:
    """The given .jsonl files, and every .jsonl file of the given folders."""
    return [f for p in map(Path, paths)
            for f in (sorted(p.glob("*.jsonl")) if p.is_dir() else [p])]


def read_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Read .jsonl files, or every .jsonl file of the given folders."""
    return [doc for file in jsonl_files(paths) for doc in read_jsonl(file)]


def write_jsonl(docs: Iterable[Document], handle) -> int:
    """Write documents in the shared format to an open text file; returns how many."""
    n = 0
    for doc in docs:
        segments = [{"src": s.src, "tgt": s.tgt, "start": s.start, "end": s.end}
                    | ({"mt": s.mt} if s.mt is not None else {}) for s in doc.segments]
        record = {"doc": doc.doc_id, "domain": doc.domain, "segments": segments}
        if doc.synthetic:
            record["synthetic"] = True
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        n += 1
    return n


def reverse_documents(docs: Iterable[Document]) -> list[Document]:
    """The same documents with the languages swapped (to train a Russian-to-English model);
    segments without a Russian side stay out, since they cannot be a source."""
    out = []
    for doc in docs:
        segments = [Segment(s.tgt, s.src, s.start, s.end) for s in doc.segments
                    if s.tgt is not None]
        if segments:
            out.append(Document(doc.doc_id, segments, doc.domain, doc.synthetic))
    return out


def weight_of(doc: Document, weights: dict[str, float]) -> float:
    """A document's sampling weight per epoch: by its corpus if named, else by its domain,
    else 1; a synthetic document's is multiplied by the weight of 'synthetic'."""
    weight = weights[doc.corpus] if doc.corpus in weights else weights.get(doc.domain, 1.0)
    return weight * weights.get("synthetic", 1.0) if doc.synthetic else weight


# -- filters ---------------------------------------------------------------------------------
_CREDIT = re.compile(
    r"(subtitles? by|synced? (and corrected )?by|\bsync\b|corrected by|opensubtitles|addic7ed|"
    r"русские субтитры|субтитры (подготовил|сделал)|переведено на|перевод(ы)? (сделал|выполнил)|"
    r"https?://|www\.|\S+@\S+\.\w+)", re.IGNORECASE)
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def dedup_key(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def pair_problem(src: str, tgt: str, max_ratio: float = 3.0, max_chars: int = 1000) -> str | None:
    """Why a (src, tgt) pair should not be trained on, or None if it is fine."""
    if not src.strip() or not tgt.strip():
        return "empty"
    if src.strip() == tgt.strip():
        return "copy"
    ratio = max(len(src), len(tgt)) / max(1, min(len(src), len(tgt)))
    if ratio > max_ratio:
        return "length-ratio"
    if len(src) > max_chars or len(tgt) > max_chars:
        return "too-long"
    if _CREDIT.search(src) or _CREDIT.search(tgt):
        return "credit/sync"
    if not _CYRILLIC.search(tgt) and re.search(r"[A-Za-z]{3}", tgt):
        return "target-not-russian"
    return None


def filter_documents(docs: Iterable[Document]) -> tuple[list[Document], dict[str, int]]:
    """Turn bad pairs' targets into None (they stay as source-side context, never as training
    targets) and drop repeated one-segment documents. Returns documents and counts per reason."""
    counts: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    out = []
    for doc in docs:
        for seg in doc.segments:
            if seg.tgt is None:
                continue
            problem = pair_problem(seg.src, seg.tgt)
            if problem:
                counts[problem] = counts.get(problem, 0) + 1
                seg.tgt = None
        if len(doc.segments) == 1 and doc.segments[0].tgt is not None:
            key = (dedup_key(doc.segments[0].src), dedup_key(doc.segments[0].tgt))
            if key in seen:
                counts["duplicate"] = counts.get("duplicate", 0) + 1
                continue
            seen.add(key)
        if any(s.tgt is not None for s in doc.segments):
            out.append(doc)
    return out, counts
