"""Decoding speed of several bundles (CTranslate2 or PyTorch backend), side by side in one run.

Every bundle translates the same sentences, each with the previous sentence as context (what
`subctx translate` does inside a scene), beam 4, batch 32. Prints sentences/s, output tokens/s
and each bundle's ratio to the first one.

    python bench/backend_speed.py runs/bundles/concat runs/bundles/context_encoder \\
        --dev ../shared/data/en-ru/dev/friends_dev.jsonl --threads 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from subctx.backends import open_backend
from subctx.contract import Request

FALLBACK = [
    ("I lost my bag.", "It was on the table."), ("Doctor, thank you.", "Can you help me?"),
    ("Where is your sister?", "She said she would be here by nine."),
    ("We bought a new car.", "It is waiting outside."), ("Did you call him?", "He never answers."),
]


def dev_requests(path: Path | None, limit: int) -> list[tuple[str, str]]:
    """(previous sentence, sentence) pairs from a dev .jsonl, or a few built-in ones."""
    if path is None:
        return (FALLBACK * (limit // len(FALLBACK) + 1))[:limit]
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            segments = json.loads(line)["segments"]
            pairs += [(a["src"], b["src"]) for a, b in zip(segments, segments[1:], strict=False)]
    step = max(1, len(pairs) // limit)
    return pairs[::step][:limit]


def time_bundle(bundle: Path, pairs: list[tuple[str, str]], threads: int) -> dict:
    engine = open_backend(bundle, device="cpu", compute_type="auto", threads=threads)
    requests = [Request(text, (previous,)) for previous, text in pairs]
    if engine.uses_target_context:  # the concatenation model also reads a target prefix: give
        # it the reference-free equivalent, its own translation of the previous sentence
        firsts = engine.translate([Request(previous) for previous, _ in pairs], beam_size=4)
        requests = [Request(text, (previous,), (first.text,))
                    for (previous, text), first in zip(pairs, firsts, strict=True)]
    start = time.perf_counter()
    outputs = []
    for i in range(0, len(requests), 32):
        outputs += engine.translate(requests[i:i + 32], beam_size=4)
    seconds = time.perf_counter() - start
    tokens = sum(len(engine.target_sp.encode(o.text)) + 1 for o in outputs)
    return {"bundle": bundle.name, "backend": engine.manifest.backend,
            "architecture": engine.manifest.architecture, "seconds": seconds,
            "sent_s": len(requests) / seconds, "tok_s": tokens / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundles", type=Path, nargs="+")
    parser.add_argument("--dev", type=Path, help="dev .jsonl (default: built-in sentences)")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    pairs = dev_requests(args.dev, args.sentences)
    rows = [time_bundle(b, pairs, args.threads) for b in args.bundles]
    table = Table(title=f"{len(pairs)} sentences with one context sentence, beam 4, batch 32, "
                        f"CPU threads {args.threads or 'default'}")
    for col in ("bundle", "architecture", "backend", "seconds", "sent/s", "out tok/s",
                "tok/s vs first"):
        table.add_column(col, justify="left" if col in ("bundle", "architecture", "backend")
                         else "right")
    for r in rows:
        table.add_row(r["bundle"], r["architecture"], r["backend"], f"{r['seconds']:.1f}",
                      f"{r['sent_s']:.1f}", f"{r['tok_s']:.0f}",
                      f"{r['tok_s'] / rows[0]['tok_s']:.2f}×")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
