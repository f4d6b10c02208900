"""Documents of parallel segments: the document-JSONL reader and the pair filters.

Other corpus formats (OPUS XML, Moses + ids, aligned .srt pairs, plain text) live in
subctx_train/corpora.py and produce the same `Document`s.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from subctx.errors import SubctxError


class DataError(SubctxError, ValueError):
    """Training or evaluation data the trainer cannot use: one line that names the file (and
    line) to mend; `subctx-train` prints it without a traceback."""


def warn(message: str) -> None:
    """One warning line on stderr (the first process only, under torchrun)."""
    if os.environ.get("RANK", "0") == "0":
        print(f"warning: {message}", file=sys.stderr, flush=True)


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
    # where the document was read (read_jsonl): the file (one string shared by its documents)
    # and the line, for messages about it; not part of what a document is
    file: str = field(default="", compare=False, repr=False)
    line: int = field(default=0, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.timed = any(s.start is not None for s in self.segments)

    @property
    def where(self) -> str:
        """'FILE:LINE' of a document read from a file, else its id (for messages)."""
        return f"{self.file}:{self.line}" if self.file else f"document {self.doc_id}"

    @property
    def corpus(self) -> str:
        """The corpus a document comes from: its id up to the first '/'."""
        return self.doc_id.split("/", 1)[0]


_TEXT = (str, type(None))
_TIME = (int, float, type(None))


def _segment(raw, number: int) -> Segment:
    """A Segment of one `segments` entry; DataError (without the file) where it is not one."""
    if type(raw) is dict and "src" in raw:  # the common case, checked quickly
        src, tgt, start, end, mt = (raw["src"], raw.get("tgt"), raw.get("start"),
                                    raw.get("end"), raw.get("mt"))
        if (type(src) is str or src is None) and (type(tgt) is str or tgt is None) \
                and (mt is None or type(mt) is str) \
                and (start is None or type(start) is float or type(start) is int) \
                and (end is None or type(end) is float or type(end) is int):
            return Segment(src, tgt, start, end, mt)
    if not isinstance(raw, dict):
        raise DataError(f"segment {number} is {type(raw).__name__}, not an object")
    if "src" not in raw:
        raise DataError(f'segment {number} has no "src" (null where it has none)')
    values = (raw["src"], raw.get("tgt"), raw.get("start"), raw.get("end"), raw.get("mt"))
    for key, value, kinds in zip(("src", "tgt", "start", "end", "mt"), values,
                                 (_TEXT, _TEXT, _TIME, _TIME, _TEXT), strict=True):
        if not isinstance(value, kinds) or isinstance(value, bool):
            what = "a string or null" if kinds is _TEXT else "a number of seconds or null"
            raise DataError(f'segment {number}: "{key}" is {json.dumps(value)[:40]}, not {what}')
    return Segment(*values)


def read_jsonl(path: str | Path) -> Iterator[Document]:
    """Read the shared document-JSONL format (one document per line). A line that is not a
    document (broken JSON, no `segments`, a text that is neither a string nor null...) is a
    DataError naming the file and line."""
    name = str(path)
    with open(path, encoding="utf-8") as handle:
        number = 0
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    raw = json.loads(line)
                    if not isinstance(raw, dict):
                        raise DataError(f"a JSON {type(raw).__name__}, not a document object")
                    if not isinstance(raw.get("segments"), list):
                        raise DataError('no "segments" list' if "segments" not in raw else
                                        '"segments" is not a list')
                    segments = [_segment(s, k) for k, s in enumerate(raw["segments"], 1)]
                    doc_id = raw.get("doc", f"{Path(path).stem}/{number}")
                    domain = raw.get("domain") or ""
                    if not isinstance(doc_id, str) or not isinstance(domain, str):
                        raise DataError('"doc" and "domain" must be strings')
                except (json.JSONDecodeError, DataError) as err:
                    raise DataError(f"{path}:{number}: not a document line ({err})") from None
                yield Document(doc_id, segments, domain, bool(raw.get("synthetic", False)),
                               file=name, line=number)
        except UnicodeDecodeError as err:
            raise DataError(f"{path}:{number + 1}: not UTF-8 text ({err.reason}): not a "
                            "document .jsonl file") from None


def jsonl_files(paths: Iterable[str | Path]) -> list[Path]:
    """The given .jsonl files, and every .jsonl file of the given folders."""
    return [f for p in map(Path, paths)
            for f in (sorted(p.glob("*.jsonl")) if p.is_dir() else [p])]


def read_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Read .jsonl files, or every .jsonl file of the given folders. A folder without .jsonl
    files, a named file without a document, or no document at all is a DataError (an empty
    file inside a folder just adds none)."""
    docs: list[Document] = []
    read: list[Path] = []
    for given in map(Path, paths):
        files = jsonl_files([given])
        if given.is_dir() and not files:
            raise DataError(f"{given}: no .jsonl files in this folder")
        before = len(docs)
        for file in files:
            docs.extend(read_jsonl(file))
        if not given.is_dir() and len(docs) == before:
            raise DataError(f"{given}: no documents (an empty file)")
        read += files
    if read and not docs:
        raise DataError(f"no documents in {_names(read)} (empty files)")
    return docs


def _names(files: Iterable[str | Path], most: int = 6) -> str:
    """'a.jsonl, b.jsonl' (the first `most`, then how many more)."""
    names = list(dict.fromkeys(map(str, files)))
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


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
            out.append(Document(doc.doc_id, segments, doc.domain, doc.synthetic,
                                file=doc.file, line=doc.line))
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


class WeightUse:
    """Which corpus weights match the documents `add`ed (a doc-id prefix, a domain;
    `synthetic` / `machine-drafted` where there are such documents), to say which match none
    (`unmatched`): a misspelt name would do nothing."""

    def __init__(self, weights: dict[str, float]):
        self.names = list(weights)
        self.wanted = set(weights)
        self.matched: set[str] = set()
        self.corpora: dict[str, None] = {}
        self.domains: dict[str, None] = {}
        self.parts: set[str] = set()  # doc-id prefixes short of a whole id

    def add(self, doc: Document) -> None:
        if not self.names:
            return
        pieces = doc.doc_id.split("/")
        self.corpora.setdefault(pieces[0])
        if doc.domain:
            self.domains.setdefault(doc.domain)
        names = self.wanted
        for n in range(1, len(pieces) + 1):
            prefix = "/".join(pieces[:n])
            if n < len(pieces):
                self.parts.add(prefix)
            if prefix in names:
                self.matched.add(prefix)
        if doc.domain in names:
            self.matched.add(doc.domain)
        if doc.synthetic:
            self.matched.add("synthetic")
        if "machine-drafted" in names and machine_drafted(doc):
            self.matched.add("machine-drafted")

    def unmatched(self) -> str | None:
        """One line naming the weights that matched no document and what they could name, or
        None when each matched some."""
        missing = [n for n in self.names if n not in self.matched]
        if not missing:
            return None
        known = [*self.corpora, *self.domains, *TAGS, *sorted(self.parts)]
        guesses = [g for n in missing
                   for g in difflib.get_close_matches(n, [k for k in known if k != n], 1, 0.6)]

        def listed(values: Iterable[str], most: int = 12) -> str:
            values = list(values)
            return ", ".join(values[:most]) + (f" (+{len(values) - most})"
                                               if len(values) > most else "")

        one = len(missing) == 1
        guess = f" (did you mean {', '.join(dict.fromkeys(guesses))}?)" if guesses else ""
        return (f"--weight {', '.join(missing)}: {'matches' if one else 'match'} no corpus, "
                f"part or domain of the data, so {'it does' if one else 'they do'} "
                f"nothing{guess}; corpora: {listed(self.corpora) or 'none'}; domains: "
                f"{listed(self.domains) or 'none'}; or synthetic, machine-drafted, a doc-id "
                "prefix (e.g. weidu/bsofb)")


def unmatched_weights(docs: Iterable[Document], weights: dict[str, float]) -> str | None:
    """WeightUse.unmatched of `docs`: one line naming the weights that match none of them
    (and what they could name), or None."""
    use = WeightUse(weights)
    for doc in docs:
        use.add(doc)
    return use.unmatched()


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


CONTEXT_ONLY = "context-only"  # the count of segments that came without a target (tgt null)


def filter_documents(docs: Iterable[Document]) -> tuple[list[Document], dict[str, int]]:
    """Turn bad pairs' targets into None (they stay as source-side context, never as training
    targets) and drop repeated one-segment documents. Returns documents and counts per reason
    (CONTEXT_ONLY: segments that had no target to begin with). Documents without one pair
    left (when there were documents) are a DataError naming their files: no training pair."""
    counts: dict[str, int] = {}
    docs = list(docs)
    kept = list(filtered(docs, counts))
    if docs and not kept:
        files = _names(d.file for d in docs if d.file)
        segments = sum(len(d.segments) for d in docs)
        reasons = ", ".join(f"{k} {v}" for k, v in counts.items()) or "none has a target"
        raise DataError(f"no training pair in {files or f'{len(docs)} documents'}: "
                        f"{segments} segments, none kept ({reasons})")
    return kept, counts


def filtered(docs: Iterable[Document], counts: dict[str, int]) -> Iterator[Document]:
    """filter_documents one document at a time (counts per reason added to `counts`). A
    segment without a source (src null: a monolingual document) is a DataError."""
    seen: set[tuple[str, str]] = set()
    for doc in docs:
        for number, seg in enumerate(doc.segments, 1):
            if seg.src is None:
                raise DataError(f'{doc.where}: segment {number} has no English source ("src": '
                                "null): a monolingual document? back-translate it first "
                                "(subctx-train back-translate)")
            if seg.tgt is None:
                counts[CONTEXT_ONLY] = counts.get(CONTEXT_ONLY, 0) + 1
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
