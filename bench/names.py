"""Names and glossary (subctx/names.py) on dev documents, translated as the app translates them:
how many recurring names have more than one rendering in a document, how many are left in Latin
letters, chrF / BLEU, and the share of a glossary's entries that appear in the translations of
the lines whose English has them (the lines the app forces them in, names.glossary_wanted).

Three settings, side by side on the same translations: the model's (no names step), names
written one way (`--names`, the default), and names with a glossary. The glossary is one a
person could write from the references: for each name recurring in a file, the rendering its
reference translations use most (found as the app finds renderings).

    python bench/names.py --threads 2 --data $D/dev/friends_dev.jsonl \
        --data $D/dev/srt/morevna_dev.jsonl --json docs/comparison/names.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import sacrebleu

from subctx.backends import open_backend
from subctx.bundle import load_bundle
from subctx.decoding import DecodeOptions, DocumentResult, translate_documents
from subctx.names import (
    Glossary,
    NameRule,
    find_names,
    find_renderings,
    glossary_wanted,
    has_rendering,
    settle_names,
)
from subctx.transliterate import transliterate
from subctx_train.data import Document, read_documents
from subctx_train.evaluate import plan_from_document
from subctx_train.report import show_table


def recurring(doc: Document) -> dict[str, list[int]]:
    """The names of a document said in two lines or more."""
    return {n: u for n, u in find_names([s.src or "" for s in doc.segments]).items()
            if len(u) > 1}


def reference_glossary(docs: list[Document]) -> Glossary:
    """For each recurring name, the rendering the references use most (nominative)."""
    counts: dict[str, Counter] = {}
    for doc in docs:
        for name, units in recurring(doc).items():
            for u in units:
                for f in find_renderings(name, doc.segments[u].tgt or "", [transliterate(name)]):
                    if not f.latin:
                        counts.setdefault(name, Counter())[f.nominative] += 1
    return Glossary({name: c.most_common(1)[0][0] for name, c in counts.items()})


def measure(setting: str, docs: list[Document], results: list[DocumentResult],
            glossary: Glossary, seconds: float = 0.0) -> dict:
    names = spread = latin = hits = wanted = 0
    hyps, refs = [], []
    for doc, result in zip(docs, results, strict=True):
        texts = result.texts()
        for name, units in recurring(doc).items():
            found = [f for u in units for f in find_renderings(name, texts[u],
                                                               [transliterate(name)])]
            names += 1
            spread += len({f.nominative for f in found}) > 1
            latin += any(f.latin for f in found)
        for u, entries in glossary_wanted([s.src or "" for s in doc.segments],
                                          glossary).items():
            wanted += len(entries)
            hits += sum(has_rendering(texts[u], glossary.entries[e]) for e in entries)
        for u, seg in enumerate(doc.segments):
            if seg.tgt is not None:
                hyps.append(texts[u])
                refs.append(seg.tgt)
    return {"setting": setting, "recurring names": names,
            "with >1 rendering": spread, "in Latin": latin,
            "glossary lines": wanted,
            "glossary hit %": round(100 * hits / wanted, 1) if wanted else "",
            "chrF": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2),
            "BLEU": round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2),
            "seconds": round(seconds, 2)}


def settled(results: list[DocumentResult], engine, options: DecodeOptions, rule: NameRule
            ) -> tuple[list[DocumentResult], float]:
    copies = [r.copy() for r in results]
    start = time.perf_counter()
    for copy in copies:
        settle_names(copy, engine, options, rule)
    return copies, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("assets/models/en-ru"))
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--json", type=Path, help="Write the rows here.")
    args = parser.parse_args()

    bundle = load_bundle(args.model)
    engine = open_backend(bundle, device="cpu", threads=args.threads)
    options = DecodeOptions.for_model(bundle.manifest.context, beam_size=args.beam)
    rows = []
    for path in args.data:
        docs = read_documents([path])
        glossary = reference_glossary(docs)
        start = time.perf_counter()
        results = translate_documents([plan_from_document(d) for d in docs], engine, options)
        translating = time.perf_counter() - start
        for setting, rule in [("model", None), ("names", NameRule()),
                              ("names + glossary", NameRule(glossary=glossary))]:
            out, seconds = (results, translating) if rule is None else \
                settled(results, engine, options, rule)
            rows.append({"data": path.stem, **measure(setting, docs, out, glossary, seconds)})
        print(path.stem, "glossary:", glossary.entries)
    show_table("names and glossary", rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
