"""Addresses and long numbers (subctx/verbatim.py) on dev documents: the sentences whose
English holds such tokens, translated alone by a bundle, chrF over them before and after the
mend, and the sentences it changed.

    python bench/verbatim.py --threads 2 --data $D/dev/flores_dev.jsonl \
        --data $D/dev/friends_dev.jsonl [--show]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sacrebleu

from subctx.backends import open_backend
from subctx.bundle import default_bundle_path, load_bundle
from subctx.contract import Request
from subctx.verbatim import restore_verbatim, verbatim_tokens
from subctx_train.data import read_documents


def measure(path: Path, engine, show: bool = False) -> dict:
    """Sentences with tokens to copy, those the mend changed, chrF over them before/after."""
    segments = [s for d in read_documents([path]) for s in d.segments]
    pairs = [(s.src, s.tgt) for s in segments if s.tgt is not None and verbatim_tokens(s.src)]
    row = {"data": path.stem, "sentences": len(segments), "with tokens": len(pairs),
           "mended": 0, "chrF before": "", "chrF after": ""}
    if not pairs:
        return row
    machine = [t.text for t in engine.translate([Request(s) for s, _ in pairs], beam_size=4)]
    mended = [restore_verbatim(s, m) for (s, _), m in zip(pairs, machine, strict=True)]
    refs = [[t for _, t in pairs]]
    row.update({"mended": sum(a != b for a, b in zip(machine, mended, strict=True)),
                "chrF before": round(sacrebleu.CHRF().corpus_score(machine, refs).score, 2),
                "chrF after": round(sacrebleu.CHRF().corpus_score(mended, refs).score, 2)})
    if show:
        for (src, _), before, after in zip(pairs, machine, mended, strict=True):
            if before != after:
                print(f"EN  {src}\nMT  {before}\nNOW {after}\n")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--show", action="store_true", help="print each mended sentence")
    args = parser.parse_args()
    bundle = load_bundle(args.model or default_bundle_path())
    engine = open_backend(bundle, device="cpu", compute_type="auto", threads=args.threads)
    for path in args.data:
        print(measure(path, engine, args.show))


if __name__ == "__main__":
    main()
