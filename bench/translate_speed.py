"""Translation speed, measured side by side in one run.

1. `subctx` on a synthetic 1,500-cue film: with context (K=1, previous translation as target
   prefix) vs --context 0 — cues/s and output tokens/s, and their ratio.
2. CTranslate2 vs a plain PyTorch greedy decoder (no KV cache) on the same weights, same
   sentences, greedy, batch 32 — sentences/s and the ratio (CTranslate2 int8 and float32).

    python bench/translate_speed.py --run runs/concat-cd-shift     # a trained run
    python bench/translate_speed.py                                # random cpu-small weights
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from subctx.backends.ct2 import CTranslate2Backend
from subctx.contract import Request
from subctx.decoding import DecodeOptions, translate_documents
from subctx.formats.srt import parse_srt_text
from subctx.formats.timing import srt_timestamp
from subctx.units import plan_document

LINES = [
    "Where were you last night?", "I told you, I was at work.", "You never call me anymore.",
    "She said she would be here by nine.", "Did you see what he did?", "Give it back to me.",
    "We have to talk about your brother.", "I don't think that's a good idea.",
    "Are you coming with us or not?", "He left the keys on the table.",
    "Thank you for everything you did for us.", "It's not what it looks like.",
    "Can you hear me?", "Let's get out of here.", "Why didn't you tell me?",
    "The doctor will see you now.", "I've been waiting for you all day.", "Is she your sister?",
]


def synthetic_film(cues: int = 1500, seed: int = 0) -> str:
    """An .srt with realistic timing: short pauses, and a scene break (> 7 s) now and then."""
    rng = random.Random(seed)
    t, blocks = 1.0, []
    for i in range(1, cues + 1):
        dur = rng.uniform(1.5, 4.0)
        a, b = t, t + dur
        text = rng.choice(LINES)
        if rng.random() < 0.15:
            text = f"- {text}\n- {rng.choice(LINES)}"
        blocks.append(f"{i}\n{srt_timestamp(a)} --> {srt_timestamp(b)}\n{text}\n")
        t = b + (rng.uniform(8, 20) if rng.random() < 0.05 else rng.uniform(0.2, 2.0))
    return "\n".join(blocks)


def load_weights(run: Path | None, workdir: Path):
    """(PyTorch model, bundle path) holding the same weights."""
    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer
    from subctx_train.bundle_card import export_run
    from subctx_train.export import export_bundle
    from subctx_train.tokenizer import train_tokenizer

    if run is not None:
        from subctx_train.train import load_final_model

        model, _ = load_final_model(run)
        bundle = export_run(run, workdir / "bundle-f32")
        return model, bundle, run / "spm.model"
    from subctx.bundle import ContextSettings, Manifest

    spm_file = train_tokenizer(LINES * 50, workdir / "spm.model", vocab_size=200)
    import sentencepiece as spm

    vocab = spm.SentencePieceProcessor(model_file=str(spm_file)).get_piece_size()
    torch.manual_seed(0)
    model = Transformer(ModelConfig(vocab_size=vocab, dropout=0.0)).eval()
    manifest = Manifest("concat", source_spm="spm.model", target_spm="spm.model",
                        context=ContextSettings(max_k=3, default_k=1, segment_shift=16))
    return model, export_bundle(model, spm_file, manifest, workdir / "bundle-f32"), spm_file


def time_film(engine: CTranslate2Backend, film: str, context: int) -> tuple[float, int, int]:
    plan = plan_document(parse_srt_text(film))
    start = time.perf_counter()
    [result] = translate_documents([plan], engine, DecodeOptions(context=context, beam_size=4))
    seconds = time.perf_counter() - start
    tokens = sum(len(engine.target_sp.encode(t)) for t in result.texts())
    return seconds, len(plan.layouts), tokens


def time_greedy_ct2(engine: CTranslate2Backend, sentences: list[str]) -> float:
    start = time.perf_counter()
    for i in range(0, len(sentences), 32):
        engine.translate([Request(s) for s in sentences[i:i + 32]], beam_size=1)
    return time.perf_counter() - start


@torch.no_grad()
def time_greedy_torch(model, sp, sentences: list[str]) -> float:
    model.eval()
    start = time.perf_counter()
    for i in range(0, len(sentences), 32):
        batch = [sp.encode(s) + [3] for s in sentences[i:i + 32]]
        width = max(map(len, batch))
        ids = torch.tensor([b + [0] * (width - len(b)) for b in batch])
        model.greedy(ids, 2, 3, max_len=2 * width + 10)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, help="trained run folder (default: random weights)")
    parser.add_argument("--cues", type=int, default=1500)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--greedy-sentences", type=int, default=256)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    console = Console()
    film = synthetic_film(args.cues)
    with tempfile.TemporaryDirectory() as tmp:
        model, bundle, spm_file = load_weights(args.run, Path(tmp))
        int8 = CTranslate2Backend(bundle, device="cpu", compute_type="int8", threads=args.threads)
        f32 = CTranslate2Backend(bundle, device="cpu", compute_type="float32", threads=args.threads)

        table = Table(title=f"subctx translate, synthetic film of {args.cues} cues "
                            "(CTranslate2 int8, beam 4)")
        for col in ("setting", "seconds", "cues/s", "tokens/s"):
            table.add_column(col, justify="right")
        runs = {}
        for k in (1, 0):
            seconds, cues, tokens = time_film(int8, film, k)
            runs[k] = (cues / seconds, tokens / seconds)
            table.add_row(f"--context {k}", f"{seconds:.1f}", f"{cues / seconds:.1f}",
                          f"{tokens / seconds:.0f}")
        console.print(table)
        console.print(f"context cost: with context / without = "
                      f"{runs[1][0] / runs[0][0]:.2f}× cues/s, "
                      f"{runs[1][1] / runs[0][1]:.2f}× tokens/s")

        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=str(spm_file))
        rng = random.Random(1)
        sentences = [rng.choice(LINES) for _ in range(args.greedy_sentences)]
        t_torch = time_greedy_torch(model, sp, sentences)
        t_f32 = time_greedy_ct2(f32, sentences)
        t_int8 = time_greedy_ct2(int8, sentences)
        table = Table(title=f"greedy decoding, {len(sentences)} sentences, batch 32")
        for col in ("decoder", "seconds", "sentences/s", "speed-up vs PyTorch"):
            table.add_column(col, justify="right")
        for name, t in (("PyTorch (plain, float32)", t_torch), ("CTranslate2 float32", t_f32),
                        ("CTranslate2 int8", t_int8)):
            table.add_row(name, f"{t:.2f}", f"{len(sentences) / t:.1f}", f"{t_torch / t:.1f}×")
        console.print(table)


if __name__ == "__main__":
    main()
