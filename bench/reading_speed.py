"""Reading-speed fit (subctx/reading.py) on timed subtitles: the share of cues over --max-cps
and over --max-lines, and chrF against the references, before and after the fit, for each
margin; and what the fit costs against translating the documents (CPU time of this process:
wall time on a shared machine says more of the neighbours than of the fit).

Each document of the .jsonl files (segments with src, tgt, start, end) becomes a SubRip file
translated as `subctx translate` does (units, context, the bundle's scope; cues rendered at
--width and --max-lines); chrF / BLEU are over the rendered cues against the segments'
references. The default's row is timed from cold; the sweep's rows re-use its n-best (the same
requests), so only the choice differs between them.

    python bench/reading_speed.py --threads 2 --data $D/dev/srt/morevna_dev.jsonl \
        --data $D/train/anime_subs.jsonl --data $D/train/film_subs.jsonl \
        --margins 0.2 0.3 1e9 --totals 1 2 4 --partial --json docs/comparison/reading_speed.json
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import sacrebleu

from subctx.backends import open_backend
from subctx.bundle import load_bundle
from subctx.decoding import DecodeOptions, DocumentResult, translate_documents
from subctx.formats.srt import parse_srt_text
from subctx.reading import FitReport, ReadingFit, fit_reading_speed
from subctx.units import plan_document, render_cues
from subctx.wrap import Layout, readability
from subctx_train.data import Document, read_jsonl
from subctx_train.report import show_table


def _stamp(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def as_srt(doc: Document) -> tuple[str, list[str]]:
    """A document as SubRip text, and the references of its cues (segments with text, a
    reference and a positive duration)."""
    blocks, refs = [], []
    for s in doc.segments:
        src = "\n".join(line.strip() for line in (s.src or "").splitlines() if line.strip())
        if not src or not s.tgt or s.start is None or s.end is None or s.end <= s.start:
            continue
        blocks.append(f"{len(blocks) + 1}\n{_stamp(s.start)} --> {_stamp(s.end)}\n{src}\n")
        refs.append(" ".join(s.tgt.split()))
    return "\n".join(blocks), refs


class Cached:
    """A translator that remembers its answers: the sweep's settings ask for the same n-best."""

    def __init__(self, engine):
        self.engine, self.memo = engine, {}
        self.max_context, self.uses_target_context = engine.max_context, \
            engine.uses_target_context
        self.supports_forced_start = engine.supports_forced_start

    def translate(self, requests, **kwargs):
        key = tuple(sorted(kwargs.items()))
        todo = [r for r in dict.fromkeys(requests) if (r, key) not in self.memo]
        for r, out in zip(todo, self.engine.translate(todo, **kwargs) if todo else [],
                          strict=True):
            self.memo[(r, key)] = out
        return [self.memo[(r, key)] for r in requests]

    def score(self, requests, candidates):
        todo = [(r, c) for r, c in dict.fromkeys(zip(requests, candidates, strict=True))
                if (r, c) not in self.memo]
        if todo:
            for pair, hyp in zip(todo, self.engine.score(*map(list, zip(*todo, strict=True))),
                                 strict=True):
                self.memo[pair] = hyp
        return [self.memo[pair] for pair in zip(requests, candidates, strict=True)]


def measure(name: str, setting: str, results: list[DocumentResult], timings: list, refs: list,
            layout: Layout, reports: list[FitReport] | None = None) -> dict:
    hyps, over_cps, over_lines, cues = [], 0, 0, 0
    for result, timing in zip(results, timings, strict=True):
        lines = render_cues(result.plan, result.texts(), layout.width, layout.max_lines)
        checks = readability(timing, lines, layout.max_lines, layout.max_cps)
        over_cps, over_lines, cues = (over_cps + len(checks.too_fast),
                                      over_lines + len(checks.over_lines), cues + len(lines))
        hyps += [" ".join(cue) for cue in lines]
    row = {"data": name, "setting": setting, "cues": cues,
           f"% >{layout.max_cps:g} cps": round(100 * over_cps / cues, 1),
           f"% >{layout.max_lines} lines": round(100 * over_lines / cues, 1),
           "chrF": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2),
           "BLEU": round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)}
    if reports is not None:
        row["shortened"] = sum(len(r.shortened) for r in reports)
        row["units redone"] = sum(r.units for r in reports)
    return row


def fitted(results: list[DocumentResult], timings: list, translator, options: DecodeOptions,
           layout: Layout, fit: ReadingFit) -> tuple[list[DocumentResult], list[FitReport]]:
    copies = [r.copy() for r in results]
    reports = [fit_reading_speed(r, t, translator, options, layout, fit)
               for r, t in zip(copies, timings, strict=True)]
    return copies, reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("assets/models/en-ru"))
    parser.add_argument("--data", type=Path, action="append", required=True,
                        help="Timed documents (.jsonl); each file is measured on its own.")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--hypotheses", type=int, default=ReadingFit.hypotheses)
    parser.add_argument("--margins", type=float, nargs="*", default=[],
                        help="Per-token margins (nats) to sweep.")
    parser.add_argument("--totals", type=float, nargs="*", default=[],
                        help="Margins on the total log-probability (nats) to sweep.")
    parser.add_argument("--partial", action="store_true",
                        help="Also the default with the shortest candidates for a cue none "
                             "brings within the limits.")
    parser.add_argument("--max-cut", type=float, default=ReadingFit.max_cut)
    parser.add_argument("--max-cps", type=float, default=Layout.max_cps)
    parser.add_argument("--max-lines", type=int, default=Layout.max_lines)
    parser.add_argument("--width", type=int, default=Layout.width)
    parser.add_argument("--json", type=Path, help="Write the rows here.")
    args = parser.parse_args()

    bundle = load_bundle(args.model)
    engine = open_backend(bundle, device="cpu", threads=args.threads)
    options = DecodeOptions.for_model(bundle.manifest.context, beam_size=args.beam)
    layout = Layout(args.width, args.max_lines, args.max_cps)
    default = ReadingFit(hypotheses=args.hypotheses, max_cut=args.max_cut)
    sweep = [replace(default, margin=m) for m in args.margins] + \
            [replace(default, margin=m, per_token=False) for m in args.totals] + \
            ([replace(default, partial=True)] if args.partial else [])
    rows = []
    for path in args.data:
        subs, refs = [], []
        for doc in read_jsonl(path):
            text, doc_refs = as_srt(doc)
            if doc_refs:
                subs.append(parse_srt_text(text))
                refs += doc_refs
        plans = [plan_document(sub) for sub in subs]
        timings = [[(c.start, c.end) for c in sub.cues] for sub in subs]
        start, cpu = time.perf_counter(), time.process_time()
        results = translate_documents(plans, engine, options)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        base = measure(path.stem, "no fit", results, timings, refs, layout)
        base["seconds"], base["CPU s"] = round(seconds, 2), round(cpu, 2)
        rows.append(base)
        cached = Cached(engine)  # empty: the default's time is a cold run's
        start, fit_cpu = time.perf_counter(), time.process_time()
        out, reports = fitted(results, timings, cached, options, layout, default)
        fit_seconds, fit_cpu = time.perf_counter() - start, time.process_time() - fit_cpu
        row = measure(path.stem, f"fit: {default.hypotheses} best, {default.margin:g}/token",
                      out, timings, refs, layout, reports)
        row["seconds"], row["CPU s"] = round(fit_seconds, 2), round(fit_cpu, 2)
        row["CPU vs translating"] = round(fit_cpu / cpu, 2)
        rows.append(row)
        for fit in sweep:
            out, reports = fitted(results, timings, cached, options, layout, fit)
            name = f"margin {fit.margin:g}" + ("/token" if fit.per_token else " total") + \
                (", shortest where none fits" if fit.partial else "")
            rows.append(measure(path.stem, name, out, timings, refs, layout, reports))
    columns = list(dict.fromkeys(c for row in rows for c in row))
    show_table("reading-speed fit", [{c: row.get(c, "") for c in columns} for row in rows])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
