"""Context decoding schedules side by side: on real dialogue (dev documents, in order; and the
same lines as one film, a single context chain) and on a synthetic 1,500-cue film, whole and
cut into 20 short episodes.

For each setting: seconds, cues/s, the share of cues identical to the sequential decoder's,
chrF/BLEU against the references, and how many cues the guard (or the 'agreement' scope)
sent back to their plain translation. `--context 0` is the baseline for the cost of context.
`--batch-size N...` adds the default setting (and `--context 0`) at other batch sizes: requests
searched together and blocks side by side.

    python bench/context_schedule.py --model assets/models/en-ru \
        --data ../shared/data/en-ru/dev/friends_dev.jsonl --synthetic 1500 --episodes 20 \
        --film 1344
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import sacrebleu

from subctx.backends import open_backend
from subctx.decoding import SCHEDULES, SCOPES, DecodeOptions, translate_documents
from subctx.formats.srt import parse_srt_text
from subctx.guard import GuardSettings
from subctx.units import plan_document
from subctx_train.data import read_documents
from subctx_train.evaluate import plan_from_document
from subctx_train.report import show_table

OFF = GuardSettings(enabled=False)
SEQUENTIAL, BLOCKS, AGREEMENT = SCHEDULES["sequential"], SCHEDULES["blocks"], SCOPES["agreement"]
SETTINGS = {
    "context 0": dict(context=0),
    "sequential": dict(schedule=SEQUENTIAL, guard=OFF),
    "blocks": dict(schedule=BLOCKS, guard=OFF),
    "blocks + agreement": dict(schedule=BLOCKS, guard=OFF, scope=AGREEMENT),
    "sequential + agreement": dict(schedule=SEQUENTIAL, guard=OFF, scope=AGREEMENT),
    "blocks + guard": dict(schedule=BLOCKS),
    "sequential + guard": dict(schedule=SEQUENTIAL),
}


def synthetic_plans(cues: int, episodes: int) -> list:
    """A synthetic film (bench/translate_speed.py's), whole or cut into `episodes` files."""
    from translate_speed import synthetic_film  # bench/ is this script's folder

    per = cues // episodes
    return [plan_document(parse_srt_text(synthetic_film(per, seed=e))) for e in range(episodes)]


def one_film(docs: list, cues: int) -> list:
    """Real dialogue lines as one film: the first `cues` dev lines, 2.5 s apart (one context
    chain, as a film of continuous dialogue is), with their references."""
    from subctx_train.data import Document, Segment

    lines = [s for d in docs for s in d.segments][:cues]
    return [Document("film", [Segment(s.src, s.tgt, 2.5 * i, 2.5 * i + 2.0)
                              for i, s in enumerate(lines)])]


def run(engine, name: str, plans: list, refs: list[str] | None, settings: dict, beam: int
        ) -> list[dict]:
    """Every setting on the same documents; rows with speed, quality and agreement."""
    outputs, rows = {}, []
    cues = sum(len(p.units) for p in plans)
    default_batch = engine.batch_size
    for setting, kwargs in settings.items():
        options = DecodeOptions(**{"context": engine.manifest.context.default_k,
                                   "beam_size": beam, **kwargs})
        engine.batch_size = options.batch_size  # the searches' batches, as the app sets them
        start = time.perf_counter()
        results = translate_documents(plans, engine, options)
        seconds = time.perf_counter() - start
        engine.batch_size = default_batch
        translations = [t for r in results for t in r.translations]
        outputs[setting] = [t.text for t in translations]
        row = {"data": name, "setting": setting, "seconds": round(seconds, 2),
               "cues_per_s": round(cues / seconds, 1)}
        if refs is not None:
            row["chrf"] = round(sacrebleu.corpus_chrf(outputs[setting], [refs]).score, 2)
            row["bleu"] = round(sacrebleu.corpus_bleu(outputs[setting], [refs]).score, 2)
        row["fallbacks"] = sum(t.fallback is not None for t in translations)
        rows.append(row)
    base = next(r["seconds"] for r in rows if r["setting"] == "context 0")
    for row in rows:  # against the sequential decoder with the same scope, where it ran
        scoped = "agreement" in row["setting"] and "sequential + agreement" in outputs
        reference = outputs["sequential + agreement" if scoped else "sequential"]
        same = sum(a == b for a, b in zip(outputs[row["setting"]], reference, strict=True))
        row["identical_to_sequential"] = round(same / len(reference), 4)
        row["cost_vs_context_0"] = round(row["seconds"] / base, 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("assets/models/en-ru"))
    parser.add_argument("--data", type=Path, nargs="*", default=[],
                        help="Dev documents (.jsonl) with references: real dialogue.")
    parser.add_argument("--synthetic", type=int, default=0,
                        help="Also a synthetic film of this many cues, and the same cut into "
                             "--episodes files.")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--film", type=int, default=0,
                        help="Also the --data lines as one film of this many cues, 2.5 s apart "
                             "(one context chain).")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), metavar="SETTING",
                        help="Only these settings ('context 0' and 'sequential' always run).")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--margin", type=float, nargs="*", default=[],
                        help="Also run the guard with these margins (nats per token).")
    parser.add_argument("--batch-size", type=int, nargs="*", default=[],
                        help="Also 'blocks + agreement' and 'context 0' at these batch sizes.")
    parser.add_argument("--json", type=Path, help="Write the rows here.")
    args = parser.parse_args()

    engine = open_backend(args.model, device="cpu", threads=args.threads)
    settings = {k: v for k, v in SETTINGS.items() if not args.settings
                or k in {"context 0", "sequential", *args.settings}}
    for margin in args.margin:
        settings[f"guard margin {margin}"] = dict(guard=GuardSettings(margin=margin))
    for size in args.batch_size:
        for name in ("context 0", "blocks + agreement"):
            settings[f"{name}, batch {size}"] = {**SETTINGS[name], "batch_size": size}
    rows = []
    if args.data:
        docs = read_documents(args.data)
        rows += run(engine, "dev dialogue", [plan_from_document(d) for d in docs],
                    [s.tgt for d in docs for s in d.segments], settings, args.beam)
        if args.film:
            film = one_film(docs, args.film)
            rows += run(engine, f"dialogue film of {len(film[0].segments)}",
                        [plan_from_document(d) for d in film],
                        [s.tgt for s in film[0].segments], settings, args.beam)
    if args.synthetic:
        rows += run(engine, f"film of {args.synthetic}", synthetic_plans(args.synthetic, 1),
                    None, settings, args.beam)
        rows += run(engine, f"{args.episodes} episodes",
                    synthetic_plans(args.synthetic, args.episodes), None, settings, args.beam)
    show_table("context schedules, side by side", rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
