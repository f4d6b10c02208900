"""Machine translations of whole corpora, written as document JSONL, resumably.

Two uses, one loop:
- back-translation (DocRepair-style, Voita et al. 2019): a Russian-to-English bundle turns the
  Russian side of monolingual documents into synthetic English `src`; documents keep their order
  and timings and are marked `synthetic` (their sources get the tag token in training).
  Segments whose Russian already has a real English side in the parallel data (`known`) are
  left out; the synthetic source is the beam's best, or drawn from the model, or the beam's
  best with noise (`SAMPLINGS`, Edunov et al. 2018);
- own translations: an English-to-Russian bundle writes its translation of each `src` into `mt`,
  so that a context model can be trained on target-side context as it will see it at inference.

Sentences are translated one by one (no context), in large batches of similar lengths. Output is
appended document by document and flushed, so an interrupted run goes on from the first missing
document.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from subctx_train.data import Document, dedup_key, jsonl_files, read_jsonl, warn, write_jsonl

SIDES = {"back": ("tgt", "src"), "own": ("src", "mt")}  # mode -> (read side, written side)


@dataclass(frozen=True)
class Sampling:
    """How a synthetic source is made: `beam` (beam search's best), `top_k` (draw each token
    from the model's k most likely, 0: from all of them), `noise` (Edunov et al. 2018's
    beam + noise: words deleted and replaced by a filler with these chances each, and words
    moved by less than 3 places)."""

    name: str
    draw: bool = False
    top_k: int = 0
    noise: float = 0.0
    help: str = ""


SAMPLINGS = {s.name: s for s in (
    Sampling("beam", help="beam search's best translation"),
    Sampling("sample", draw=True, help="drawn from the model's whole distribution"),
    Sampling("top10", draw=True, top_k=10, help="drawn from the 10 likeliest tokens a step"),
    Sampling("noised", noise=0.1,
             help="beam's best, words deleted (10 %), blanked (10 %) and swapped (< 3 places)"),
)}
BLANK = "<blank>"  # the filler word of noised sources


def noised(text: str, rng: random.Random, p: float = 0.1, distance: int = 3) -> str:
    """Edunov et al. 2018's noise on a synthetic source: each word deleted with chance `p`,
    else replaced by BLANK with chance `p`, then words shuffled by less than `distance`
    places (Lample et al. 2018's local permutation). Never empty."""
    words = text.split()
    if not words:
        return text
    kept = []
    for word in words:
        roll = rng.random()
        if roll < p:
            continue
        kept.append(BLANK if roll < 2 * p else word)
    kept = kept or [rng.choice(words)]
    keys = [i + rng.uniform(0, distance) for i in range(len(kept))]
    return " ".join(w for _, w in sorted(zip(keys, kept, strict=True)))


def known_keys(paths: Iterable[str | Path]) -> set[str]:
    """The dedup keys of the Russian side of parallel documents: a monolingual segment with one
    of them already has a real English side."""
    keys = set()
    for file in jsonl_files(paths):
        for doc in read_jsonl(file):
            keys.update(k for s in doc.segments if s.tgt and (k := dedup_key(s.tgt)))
    return keys


def without_known(doc: Document, known: set[str]) -> int:
    """Leave out the segments whose Russian is known (a gap in the document, as a filter
    leaves); returns how many."""
    if not known:
        return 0
    before = len(doc.segments)
    doc.segments = [s for s in doc.segments if not s.tgt or dedup_key(s.tgt) not in known]
    return before - len(doc.segments)


@dataclass
class CorpusJob:
    source: Path
    out: Path
    done: set[str]
    todo: int  # segments left to translate
    max_segments: int | None = None  # whole documents, in file order, up to this many segments
    known: frozenset[str] | set[str] = frozenset()  # Russian keys not to back-translate
    dropped: int = 0  # segments left out as known (of the documents to do)
    translated: int = 0  # sentences translated by translate_corpus
    empty: int = 0  # of them, translations that came back empty
    empty_docs: int = 0  # documents none of whose sentences got a translation (back)


def _job_documents(job: CorpusJob) -> Iterator[tuple[Document, int]]:
    total = 0
    for doc in read_jsonl(job.source):
        if job.max_segments is not None and total >= job.max_segments:
            return
        total += len(doc.segments)
        yield doc, without_known(doc, job.known)


def job_documents(job: CorpusJob) -> Iterator[Document]:
    """The documents of a job's input (the first ones holding `max_segments`, if given),
    without their known segments."""
    return (doc for doc, _ in _job_documents(job))


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


def plan_jobs(inputs: list[Path], out_dir: Path, mode: str, max_segments: int | None = None,
              known: set[str] | frozenset[str] = frozenset()) -> list[CorpusJob]:
    """One job per input file, its output `out_dir`/NAME, with what is left to do; `known`
    (back-translation): Russian keys whose segments are left out."""
    read_side = SIDES[mode][0]
    jobs = []
    for source in inputs:
        out = out_dir / source.name
        job = CorpusJob(source, out, finished_documents(out), 0, max_segments,
                        known if mode == "back" else frozenset())
        for doc, dropped in _job_documents(job):
            if doc.doc_id not in job.done:
                job.dropped += dropped
                job.todo += sum(1 for seg in doc.segments if getattr(seg, read_side))
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


def by_length(translate: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    """`translate` given its sentences longest first (batches of similar lengths pad and
    search less), the translations returned in the given order."""
    def sorted_translate(texts: list[str]) -> list[str]:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        outputs = translate([texts[i] for i in order])
        result = [""] * len(texts)
        for i, text in zip(order, outputs, strict=True):
            result[i] = text
        return result
    return sorted_translate


def engine_translate(engine, sampling: Sampling, beam: int, batch_size: int, seed: int = 1
                     ) -> Callable[[list[str]], list[str]]:
    """A corpus translator over a serving backend: beam search, or drawing from the model
    (CTranslate2 or PyTorch), or beam + noise; seeded by each call's first sentence, so that a
    resumed run draws what an uninterrupted one would (PyTorch; CTranslate2 seeds its threads
    once per process, so there a resumed run draws anew)."""
    from subctx.contract import Request

    if sampling.draw and not hasattr(engine, "sample"):
        raise ValueError(f"--sampling {sampling.name} draws from the model, which this "
                         f"bundle's backend cannot do")

    def translate(texts: list[str]) -> list[str]:
        requests = [Request(t) for t in texts]
        call_seed = zlib.crc32(f"{seed}:{texts[0] if texts else ''}".encode())
        if sampling.draw:
            results = engine.sample(requests, top_k=sampling.top_k,
                                    max_batch_size=batch_size, seed=call_seed)
        else:
            results = engine.translate(requests, beam_size=beam, max_batch_size=batch_size)
        outputs = [r.text for r in results]
        if sampling.noise:
            rng = random.Random(call_seed)
            outputs = [noised(t, rng, sampling.noise) for t in outputs]
        return outputs
    return by_length(translate)


def translate_corpus(job: CorpusJob, translate: Callable[[list[str]], list[str]], mode: str,
                     on_done: Callable[[int], None] = lambda n: None,
                     chunk: int = 2000) -> int:
    """Translate the documents of `job` not yet in its output; returns sentences translated.
    Back-translation leaves out the segments whose translation came back empty (a gap, as a
    filter leaves); a document none of whose segments got one is written as it came, with
    empty sources (done: a rerun does not translate it again; training filters its pairs as
    `empty`). Empty translations are counted in `job` and said on stderr."""
    read_side, write_side = SIDES[mode]
    job.out.parent.mkdir(parents=True, exist_ok=True)
    pending = (d for d in job_documents(job) if d.doc_id not in job.done)
    total = 0
    with open(job.out, "a", encoding="utf-8") as handle:
        for group in _batches(pending, read_side, chunk):
            segments = [s for d in group for s in d.segments if getattr(s, read_side)]
            outputs = translate([getattr(s, read_side) for s in segments]) if segments else []
            for seg, text in zip(segments, outputs, strict=True):
                setattr(seg, write_side, text)
            job.empty += sum(1 for text in outputs if not text.strip())
            if mode == "back":
                for doc in group:
                    kept = [s for s in doc.segments if s.src and s.src.strip()]
                    tried = [s for s in doc.segments if s.src is not None]
                    if not kept and tried:
                        kept = tried  # all empty: written, so that it is done
                        job.empty_docs += 1
                    doc.segments = kept
                    doc.synthetic = True
            write_jsonl([d for d in group if d.segments], handle)
            handle.flush()
            total += len(segments)
            on_done(len(segments))
    job.translated += total
    if job.empty:
        none = (f"; {job.empty_docs} documents got none (written with empty sources, so that "
                "a rerun does not translate them again)" if job.empty_docs else "")
        warn(f"{job.source.name}: {job.empty} of {job.translated} translations came back "
             f"empty{none}")
    return total
