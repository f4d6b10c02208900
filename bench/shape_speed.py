"""Decoding speed of candidate model shapes, side by side in one run (the speed axis of the
shape choice; quality comes from subctx_train each shape, see docs/pareto.md).

Each shape gets random weights of the real size, is exported to CTranslate2 int8 like a real
bundle, and translates the same real dialogue documents in order as the app does, with the
previous translation as context (K=1) and without, and as a source-only context model
(sKto1: the previous line on the source side only, so no cue waits for another and context
decodes in the same large batches as no context). Random weights rarely choose </s>, so every
output runs to 1.2x the source length + 2 pieces (about a real translation's length): the
work per sentence is the same for every shape, only the network differs.

    python bench/shape_speed.py --data ../shared/data/en-ru/dev/friends_dev.jsonl \
        --spm runs/spm8k.model runs/spm16k.model --limit 300
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import sentencepiece as spm
import torch
from rich.console import Console

from subctx.backends import base as backend_base
from subctx.backends.ct2 import CTranslate2Backend
from subctx.bundle import ContextSettings, Manifest
from subctx.contract import Request
from subctx.nn.config import ModelConfig
from subctx.nn.transformer import Transformer
from subctx_train.data import read_documents
from subctx_train.export import export_bundle
from subctx_train.report import show_table

# name: (d_model, heads, ffn, encoder layers, decoder layers, vocabulary)
SHAPES = {
    "3+3 d256 (cpu-small)": (256, 4, 1024, 3, 3, 8000),
    "4+2 d256": (256, 4, 1024, 4, 2, 8000),
    "6+1 d256": (256, 4, 1024, 6, 1, 8000),
    "6+2 d256 (cpu-deep)": (256, 4, 1024, 6, 2, 8000),
    "6+2 d384 16k (gpu-deep)": (384, 6, 1536, 6, 2, 16000),
    "6+3 d512 16k": (512, 8, 2048, 6, 3, 16000),
    "6+6 d512 16k (gpu-base)": (512, 8, 2048, 6, 6, 16000),
    "12+2 d512 16k (gpu-big)": (512, 8, 2048, 12, 2, 16000),
    "12+1 d512 16k": (512, 8, 2048, 12, 1, 16000),
    "8+2 d512 16k": (512, 8, 2048, 8, 2, 16000),
}


def _requests(docs, with_context: bool) -> tuple[list[Request], list[int]]:
    requests, lengths = [], []
    for doc in docs:
        for i, seg in enumerate(doc.segments):
            ctx = doc.segments[i - 1] if with_context and i else None
            requests.append(Request(seg.src, (ctx.src,), (ctx.tgt,)) if ctx else Request(seg.src))
            lengths.append(len(seg.tgt))
    return requests, lengths


def measure(engine: CTranslate2Backend, requests: list[Request], batch: int, beam: int,
            repeat: int) -> float:
    """Sentences per second, decoding the requests in batches (as the app's scheduler does
    for independent units); the best of `repeat` runs (the least disturbed one)."""
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(0, len(requests), batch):
            engine.translate(requests[i:i + batch], beam_size=beam)
        best = max(best, len(requests) / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", required=True)
    parser.add_argument("--spm", type=Path, nargs="+", required=True,
                        help="SentencePiece models; each shape uses the one of its size.")
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), metavar="SHAPE",
                        help="Only these shapes (default: all).")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    # random weights repeat themselves: the backend's loop check would search every sentence
    # a second time (with all beam hypotheses), which a trained model rarely needs
    backend_base.loops = lambda source, text: False
    docs = read_documents(args.data)
    kept, total = [], 0
    for doc in docs:  # whole documents up to the limit
        kept.append(doc)
        total += len(doc.segments)
        if total >= args.limit:
            break
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (d, heads, ffn, enc, dec, vocab) in SHAPES.items():
            if args.shapes and name not in args.shapes:
                continue
            cfg = ModelConfig(vocab_size=vocab, d_model=d, n_heads=heads, ff_dim=ffn,
                              enc_layers=enc, dec_layers=dec, max_positions=1024, dropout=0.0)
            model = Transformer(cfg).eval()
            with torch.no_grad():  # </s> and <sep> never win: full-length outputs
                model.embed.weight[3] = 0.0
                model.embed.weight[4] = 0.0
            params = sum(p.numel() for p in model.parameters())
            manifest = Manifest(architecture="concat", source_spm="spm.model",
                                target_spm="spm.model",
                                context=ContextSettings(max_k=1, default_k=1))
            spm_file = next((p for p in args.spm if spm.SentencePieceProcessor(
                model_file=str(p)).get_piece_size() == vocab), None)
            if spm_file is None:
                Console().print(f"skipped {name}: no {vocab}-piece tokenizer given")
                continue
            bundle = export_bundle(model, spm_file, manifest, Path(tmp) / name.split()[0],
                                   quantization="int8")
            source_only = export_bundle(
                model, spm_file, Manifest(architecture="concat", source_spm="spm.model",
                                          target_spm="spm.model",
                                          context=ContextSettings(max_k=1, default_k=1,
                                                                  target_side="none")),
                Path(tmp) / f"{name.split()[0]}-sKto1", quantization="int8")
            engines = {path: CTranslate2Backend(path, device="cpu", compute_type="int8",
                                                threads=args.threads)
                       for path in (bundle, source_only)}
            for engine in engines.values():
                # about as long as real Russian output (1.1-1.2x the English pieces)
                engine.budget = lambda pieces: round(1.2 * pieces) + 2
            row = {"shape": name, "parameters_M": round(params / 1e6, 1),
                   "int8_MiB": round((bundle / "model.bin").stat().st_size / 2**20, 1)}
            # context requests of a concatenation model are decoded one by one (a chain waits
            # for its prefix); source-only context needs no prefix: batches of 32 as without
            for label, path, ctx, batch in (("no_context", bundle, False, 32),
                                            ("context", bundle, True, 1),
                                            ("source_only_context", source_only, True, 32)):
                requests, _ = _requests(kept, ctx)
                row[f"{label}_sent_per_s"] = round(
                    measure(engines[path], requests, batch, args.beam, args.repeat), 1)
            rows.append(row)
            Console().print(row)
    show_table(f"decoding speed of model shapes ({total} friends_dev sentences, beam "
               f"{args.beam}, {args.threads} threads, int8)", rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
