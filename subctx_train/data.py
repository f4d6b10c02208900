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


# Corpora that began as machine translations which people then edited line by line (the
# abalabokhin team's WeiDU translations and the Sandrah saga: shared/data/README.md, round 3):
# `--weight machine-drafted=W` scales them, as `synthetic=W` scales back-translations.
MACHINE_DRAFTED = (
    "weidu/bgee-thalantyr-ex", "weidu/bsofb", "weidu/bg2dorn", "weidu/bloodandfaith",
    "weidu/cassianpc", "weidu/dark-tidings", "weidu/groveofchaos", "weidu/lanna",
    "weidu/loretakers", "weidu/throne-of-the-mad-god", "weidu/iwdcrossmod",  # abalabokhin
    "weidu/sandraheet", "weidu/sandrahrtf", "weidu/sandrahtot",  # the Sandrah saga
)
TAGS = ("synthetic", "machine-drafted")  # weight names that scale, not name, documents


def has_prefix(doc_id: str, prefix: str) -> bool:
    """Whether `prefix` is the id or a leading run of its '/'-separated parts."""
    return doc_id == prefix or doc_id.startswith(prefix.rstrip("/") + "/")


def machine_drafted(doc: Document) -> bool:
    return any(has_prefix(doc.doc_id, p) for p in MACHINE_DRAFTED)


def weight_rule(doc: Document, weights: dict[str, float]) -> tuple[str, float]:
    """Which weight a document gets and why: the longest doc-id prefix named in `weights`
    (a corpus such as `friends`, or a part of one such as `weidu/sandraheet`), else its
    domain, else 1 ('' names no rule); then times `synthetic` for back-translated documents
    and times `machine-drafted` for MACHINE_DRAFTED ones."""
    parts = doc.doc_id.split("/")
    rule, weight = "", 1.0
    for n in range(len(parts), 0, -1):
        prefix = "/".join(parts[:n])
        if prefix in weights and prefix not in TAGS:
            rule, weight = prefix, weights[prefix]
            break
    else:
        if doc.domain in weights and doc.domain not in TAGS:
            rule, weight = doc.domain, weights[doc.domain]
    if doc.synthetic and "synthetic" in weights:
        weight *= weights["synthetic"]
    if "machine-drafted" in weights and machine_drafted(doc):
        weight *= weights["machine-drafted"]
    return rule, weight


def weight_of(doc: Document, weights: dict[str, float]) -> float:
    """A document's sampling weight per epoch (copies of its examples): see weight_rule."""
    return weight_rule(doc, weights)[1] if weights else 1.0


def read_weights(path: str | Path) -> dict[str, float]:
    """A weights file: TOML `NAME = W` lines (NAME: a doc-id prefix, a domain, `synthetic` or
    `machine-drafted`; quote names with '/'), optionally inside a [weights] table."""
    import tomllib

    raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    raw = raw.get("weights", raw)
    out = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{path}: {name} = {value!r}: expected a number >= 0")
        out[str(name)] = float(value)
    return out


def weight_flags(weights: dict[str, float]) -> list[str]:
    """The same weights as `subctx-train train` options (--weight NAME=W ...)."""
    return [arg for name, w in weights.items() for arg in ("--weight", f"{name}={w:g}")]


# -- filters ---------------------------------------------------------------------------------
_CREDIT = re.compile(
    r"(subtitles? by|synced? (and corrected )?by|\bsync\b|corrected by|opensubtitles|addic7ed|"
    r"русские субтитры|субтитры (подготовил|сделал)|переведено на|перевод(ы)? (сделал|выполнил)|"
    r"https?://|www\.|\S+@\S+\.\w+)")  # searched in lower case: 2.4x faster than IGNORECASE
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
    if _CREDIT.search(src.lower()) or _CREDIT.search(tgt.lower()):
        return "credit/sync"
    if not _CYRILLIC.search(tgt) and re.search(r"[A-Za-z]{3}", tgt):
        return "target-not-russian"
    return None


def filter_documents(docs: Iterable[Document]) -> tuple[list[Document], dict[str, int]]:
    """Turn bad pairs' targets into None (they stay as source-side context, never as training
    targets) and drop repeated one-segment documents. Returns documents and counts per reason."""
    counts: dict[str, int] = {}
    return list(filtered(docs, counts)), counts


def filtered(docs: Iterable[Document], counts: dict[str, int]) -> Iterator[Document]:
    """filter_documents one document at a time (counts per reason added to `counts`)."""
    seen: set[tuple[str, str]] = set()
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
            yield doc
