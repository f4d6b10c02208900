"""Context decoding schedules side by side on real dialogue (dev documents, in order).

For each setting: seconds, cues/s, the share of cues identical to the sequential decoder's,
chrF/BLEU against the references, and how many cues the guard sent back to their plain
translation. `--context 0` is the baseline for the cost of context.

    python bench/context_schedule.py --model assets/models/en-ru \
        --data ../shared/data/en-ru/dev/friends_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import sacrebleu

from subctx.engine import open_engine
from subctx.guard import GuardSettings
from subctx.pipeline import DecodeOptions, translate_documents
from training.data import read_documents
from training.evaluate import plan_from_document
from training.report import show_table

SETTINGS = {
    "context 0": dict(context=0),
    "sequential": dict(schedule="sequential", guard=GuardSettings(enabled=False)),
    "batched": dict(schedule="batched", guard=GuardSettings(enabled=False)),
    "batched + guard": dict(schedule="batched"),
    "sequential + guard": dict(schedule="sequential"),
    "two-pass": dict(schedule="two-pass", guard=GuardSettings(enabled=False)),
    "two-pass + guard": dict(schedule="two-pass"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("assets/models/en-ru"))
    parser.add_argument("--data", type=Path, nargs="+", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--margin", type=float, nargs="*", default=[],
                        help="Also run the guard with these margins (nats per token).")
    parser.add_argument("--json", type=Path, help="Write the rows here.")
    args = parser.parse_args()

    engine = open_engine(args.model, device="cpu", threads=args.threads)
    docs = read_documents(args.data)
    refs = [s.tgt for d in docs for s in d.segments]
    settings = dict(SETTINGS)
    for margin in args.margin:
        settings[f"guard margin {margin}"] = dict(guard=GuardSettings(margin=margin))
    outputs, rows = {}, []
    for name, kwargs in settings.items():
        options = DecodeOptions(**{"context": engine.manifest.context.default_k,
                                   "beam_size": args.beam, **kwargs})
        start = time.perf_counter()
        results = translate_documents([plan_from_document(d) for d in docs], engine, options)
        seconds = time.perf_counter() - start
        translations = [t for r in results for t in r.translations]
        outputs[name] = [t.text for t in translations]
        rows.append({"setting": name, "seconds": round(seconds, 2),
                     "cues_per_s": round(len(refs) / seconds, 1),
                     "chrf": round(sacrebleu.corpus_chrf(outputs[name], [refs]).score, 2),
                     "bleu": round(sacrebleu.corpus_bleu(outputs[name], [refs]).score, 2),
                     "fallbacks": sum(t.fallback is not None for t in translations)})
    reference = outputs["sequential"]
    base = next(r["seconds"] for r in rows if r["setting"] == "context 0")
    for row in rows:
        same = sum(a == b for a, b in zip(outputs[row["setting"]], reference, strict=True))
        row["identical_to_sequential"] = round(same / len(reference), 4)
        row["cost_vs_context_0"] = round(row["seconds"] / base, 2)
    show_table(f"context schedules: {len(refs)} cues of {', '.join(map(str, args.data))}",
               rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
