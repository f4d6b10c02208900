"""Machine translations of whole corpora, written as document JSONL, resumably.

Two uses, one loop:
- back-translation (DocRepair-style, Voita et al. 2019): a Russian-to-English bundle turns the
  Russian side of monolingual documents into synthetic English `src`; documents keep their order
  and timings and are marked `synthetic` (their sources get the tag token in training);
- own translations: an English-to-Russian bundle writes its translation of each `src` into `mt`,
  so that a context model can be trained on target-side context as it will see it at inference.

Sentences are translated one by one (no context), in large batches. Output is appended document
by document and flushed, so an interrupted run goes on from the first missing document.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from subctx_train.data import Document, read_jsonl, write_jsonl

SIDES = {"back": ("tgt", "src"), "own": ("src", "mt")}  # mode -> (read side, written side)


@dataclass
class CorpusJob:
    source: Path
    out: Path
    done: set[str]
    todo: int  # segments left to translate
    max_segments: int | None = None  # whole documents, in file order, up to this many segments


def job_documents(job: CorpusJob) -> Iterator[Document]:
    """The documents of a job's input (the first ones holding `max_segments`, if given)."""
    total = 0
    for doc in read_jsonl(job.source):
        if job.max_segments is not None and total >= job.max_segments:
            return
        total += len(doc.segments)
        yield doc


def finished_documents(out: Path) -> set[str]:
    """Ids of the complete documents in an output file; a torn last line is cut off."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        with open(out, "r+b") as handle:
            handle.truncate(keep)
    done = set()
    for line in data[:keep].decode("utf-8").splitlines():
        if line.strip():
            done.add(json.loads(line)["doc"])
    return done


def plan_jobs(inputs: list[Path], out_dir: Path, mode: str,
              max_segments: int | None = None) -> list[CorpusJob]:
    read_side = SIDES[mode][0]
    jobs = []
    for source in inputs:
        out = out_dir / source.name
        job = CorpusJob(source, out, finished_documents(out), 0, max_segments)
        job.todo = sum(1 for doc in job_documents(job) if doc.doc_id not in job.done
                       for seg in doc.segments if getattr(seg, read_side))
        jobs.append(job)
    return jobs


def _batches(docs: Iterator[Document], read_side: str, size: int
             ) -> Iterator[list[Document]]:
    """Groups of whole documents holding about `size` sentences to translate."""
    group: list[Document] = []
    count = 0
    for doc in docs:
        group.append(doc)
        count += sum(1 for s in doc.segments if getattr(s, read_side))
        if count >= size:
            yield group
            group, count = [], 0
    if group:
        yield group


def translate_corpus(job: CorpusJob, translate: Callable[[list[str]], list[str]], mode: str,
                     on_done: Callable[[int], None] = lambda n: None,
                     chunk: int = 2000) -> int:
    """Translate the documents of `job` not yet in its output; returns sentences translated."""
    read_side, write_side = SIDES[mode]
    job.out.parent.mkdir(parents=True, exist_ok=True)
    pending = (d for d in job_documents(job) if d.doc_id not in job.done)
    total = 0
    with open(job.out, "a", encoding="utf-8") as handle:
        for group in _batches(pending, read_side, chunk):
            segments = [s for d in group for s in d.segments if getattr(s, read_side)]
            outputs = translate([getattr(s, read_side) for s in segments])
            for seg, text in zip(segments, outputs, strict=True):
                setattr(seg, write_side, text)
            if mode == "back":
                for doc in group:
                    doc.segments = [s for s in doc.segments if s.src]
                    doc.synthetic = True
            write_jsonl([d for d in group if d.segments], handle)
            handle.flush()
            total += len(segments)
            on_done(len(segments))
    return total
