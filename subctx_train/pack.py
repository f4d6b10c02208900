"""Document JSONL as columns, to carry data compactly (`subctx-train pack-docs` /
`unpack-docs`; gpu_recipe.sh packs and unpacks with them).

A pack is a folder of plain text columns, one line per document or per segment, in file and
document order; xz over the folder (tar) then compresses each language with its own kind:

    manifest.json   {"format": "subctx-docpack/1", "files": [{"name", "docs", "segments"}]}
    docs.tsv        doc id <TAB> domain <TAB> segments <TAB> flags ("s": synthetic)
    time.txt        "start end" per segment ("-" for a missing one; empty: untimed)
    src.txt         English per segment
    tgt.txt         Russian per segment
    mt.txt          own translations per segment (only when a file has them)

Text is escaped (backslash, newline, carriage return, tab) and None is `\\N`, so that every
line is one value. Unpacking gives the same documents (`read_jsonl` of the original and of the
unpacked file agree), written as `write_jsonl` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

from subctx_train.data import Document, Segment, dedup_key, jsonl_files, write_jsonl

FORMAT = "subctx-docpack/1"
TEXT_COLUMNS = ("src", "tgt", "mt")
_DOC_KEYS = {"doc", "domain", "segments", "synthetic"}
_SEGMENT_KEYS = {"src", "tgt", "start", "end", "mt"}
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def escape(text: str | None) -> str:
    if text is None:
        return "\\N"
    if not any(c in text for c in _ESCAPES):
        return text
    return "".join(_ESCAPES.get(c, c) for c in text)


def unescape(line: str) -> str | None:
    if line == "\\N":
        return None
    if "\\" not in line:
        return line
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            out.append(_UNESCAPES.get(line[i + 1], "\\" + line[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _time(start: float | None, end: float | None) -> str:
    if start is None and end is None:
        return ""
    return " ".join("-" if t is None else repr(float(t)) for t in (start, end))


def _untime(line: str) -> tuple[float | None, float | None]:
    if not line:
        return None, None
    start, end = line.split(" ")
    return (None if start == "-" else float(start)), (None if end == "-" else float(end))


def _read_raw(path: Path) -> Iterator[tuple[str, str, bool, list[dict]]]:
    """(doc id, domain, synthetic, segments) of each document line, every key checked."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            raw = json.loads(line)
            unknown = set(raw) - _DOC_KEYS
            for seg in raw["segments"]:
                unknown |= set(seg) - _SEGMENT_KEYS
            if unknown:
                raise ValueError(f"{path}:{number}: cannot pack the keys {sorted(unknown)}")
            yield (raw.get("doc", f"{path.stem}/{number}"), raw.get("domain", ""),
                   bool(raw.get("synthetic", False)), raw["segments"])


def pack_documents(paths: list[str | Path], out: str | Path,
                   known: set[str] | frozenset[str] = frozenset(),
                   skip: set[str] | frozenset[str] = frozenset()) -> dict:
    """Write the .jsonl files (or folders of them) as one pack folder; returns the manifest.
    File names must differ (a pack unpacks into one folder). `known`: dedup keys of Russian
    whose segments are left out (monolingual data whose Russian has a real English side);
    `skip`: ids of documents left out (already back-translated)."""
    files = jsonl_files(paths)
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise ValueError(f"two files of one name in a pack: {sorted(names)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"format": FORMAT, "files": []}
    has_mt = False
    with ExitStack() as stack:
        def column(name: str):
            return stack.enter_context(open(out / name, "w", encoding="utf-8", newline="\n"))

        docs_out, time_out = column("docs.tsv"), column("time.txt")
        text_out = {c: column(f"{c}.txt") for c in TEXT_COLUMNS}
        for file in files:
            n_docs = n_segments = left_out = 0
            for doc_id, domain, synthetic, segments in _read_raw(file):
                if doc_id in skip:
                    continue
                if known:
                    kept = [s for s in segments
                            if not s.get("tgt") or dedup_key(s["tgt"]) not in known]
                    left_out += len(segments) - len(kept)
                    segments = kept
                    if not segments:
                        continue
                docs_out.write(f"{escape(doc_id)}\t{escape(domain)}\t{len(segments)}\t"
                               f"{'s' if synthetic else ''}\n")
                for seg in segments:
                    time_out.write(_time(seg.get("start"), seg.get("end")) + "\n")
                    for c in TEXT_COLUMNS:
                        text_out[c].write(escape(seg.get(c)) + "\n")
                    has_mt = has_mt or seg.get("mt") is not None
                n_docs += 1
                n_segments += len(segments)
            manifest["files"].append({"name": file.name, "docs": n_docs,
                                      "segments": n_segments}
                                     | ({"left_out": left_out} if known else {}))
    if not has_mt:
        (out / "mt.txt").unlink()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def read_pack(folder: str | Path) -> Iterator[tuple[str, Document]]:
    """(file name, document) of every document of a pack, in order."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{folder}: not a {FORMAT} pack")
    with ExitStack() as stack:
        def lines(name: str) -> Iterator[str]:
            path = folder / name
            if not path.exists():
                return iter(lambda: "\\N", None)  # a column nobody wrote: all None
            handle = stack.enter_context(open(path, encoding="utf-8", newline="\n"))
            return (line.removesuffix("\n") for line in handle)

        docs, times = lines("docs.tsv"), lines("time.txt")
        texts = [lines(f"{c}.txt") for c in TEXT_COLUMNS]
        for entry in manifest["files"]:
            for _ in range(entry["docs"]):
                doc_id, domain, count, flags = next(docs).split("\t")
                segments = []
                for _ in range(int(count)):
                    start, end = _untime(next(times))
                    src, tgt, mt = (unescape(next(t)) for t in texts)
                    segments.append(Segment(src, tgt, start, end, mt))
                yield entry["name"], Document(unescape(doc_id), segments, unescape(domain),
                                              "s" in flags)


def unpack_documents(folder: str | Path, out: str | Path) -> list[Path]:
    """Write a pack's documents back as .jsonl files (their original names) under `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with ExitStack() as stack:
        handle = None
        for name, doc in read_pack(folder):
            if not written or written[-1].name != name:
                if handle is not None:
                    handle.close()
                written.append(out / name)
                handle = stack.enter_context(open(out / name, "w", encoding="utf-8"))
            write_jsonl([doc], handle)
    return written
