"""Would a Russian-to-English model improve the English-to-Russian one's choices? Noisy-channel
reranking (Yee et al. 2019, without a language model): each dev sentence's n-best from the
English-to-Russian bundle is rescored by score = log p(ru | en) / |ru| + λ · log p(en | ru) /
|en|, the second term from the back-translation bundle forcing the English source, and the
pick of each λ is scored with chrF and BLEU against the references; the decoding and the
rescoring are timed, so that the gain can be weighed against what it costs per cue.

    python bench/noisy_channel.py --model assets/models/en-ru --channel runs/ruen-int8 \\
        --data ../shared/data/en-ru/dev/friends_dev.jsonl \\
        --data ../shared/data/en-ru/dev/flores_dev.jsonl --limit 300 --threads 1
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import sacrebleu

from subctx.backends import open_backend
from subctx.contract import Request
from subctx_train.data import read_documents
from subctx_train.report import show_table


def dev_pairs(path: Path, limit: int) -> list[tuple[str, str]]:
    """(English, Russian) pairs spread evenly over a dev file, at most `limit`."""
    pairs = [(s.src, s.tgt) for doc in read_documents([path]) for s in doc.segments
             if s.src and s.tgt]
    step = max(1, len(pairs) // max(1, limit))
    return pairs[::step][:limit]


def candidates(model, channel, pairs: list[tuple[str, str]], beam: int
               ) -> tuple[list[list[tuple[str, float, float]]], float, float]:
    """Per pair its n-best as (Russian, direct score, channel score), both per token; the
    seconds of decoding and of rescoring."""
    start = time.perf_counter()
    found = model.translate([Request(src) for src, _ in pairs], beam_size=beam,
                            num_hypotheses=beam)
    decoding = time.perf_counter() - start
    start = time.perf_counter()
    out = []
    for (src, _), translation in zip(pairs, found, strict=True):
        hyps = [(h.text, h.log_prob / max(1, h.tokens)) for h in translation.alternatives] \
            or [(translation.text, 0.0)]
        back = channel.score([Request(text) for text, _ in hyps], [src] * len(hyps))
        out.append([(text, direct, b.log_prob / max(1, b.tokens))
                    for (text, direct), b in zip(hyps, back, strict=True)])
    return out, decoding, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="English-to-Russian bundle.")
    parser.add_argument("--channel", type=Path, required=True,
                        help="Russian-to-English bundle (the back-translation model).")
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--limit", type=int, default=300, help="Sentences per file.")
    parser.add_argument("--beam", type=int, default=5, help="Beam size = n-best size.")
    parser.add_argument("--lambdas", default="0,0.2,0.4,0.7,1,1.5")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = open_backend(args.model, device="cpu", threads=args.threads)
    channel = open_backend(args.channel, device="cpu", threads=args.threads)
    lambdas = [float(x) for x in args.lambdas.split(",")]
    rows = []
    for path in args.data:
        pairs = dev_pairs(path, args.limit)
        cands, decoding, rescoring = candidates(model, channel, pairs, args.beam)
        refs = [ref for _, ref in pairs]
        for lam in lambdas:
            picked = [max(c, key=lambda x, lam=lam: x[1] + lam * x[2])[0] for c in cands]
            rows.append({"data": path.stem, "sentences": len(pairs), "lambda": lam,
                         "chrf": round(sacrebleu.corpus_chrf(picked, [refs]).score, 2),
                         "bleu": round(sacrebleu.corpus_bleu(picked, [refs]).score, 2),
                         "decode_s": round(decoding, 1), "rescore_s": round(rescoring, 1)})
    show_table(f"noisy-channel reranking, n-best {args.beam}", rows)
    if args.json:
        args.json.write_text(json.dumps({"model": str(args.model), "channel": str(args.channel),
                                         "beam": args.beam, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
