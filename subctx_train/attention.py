"""Attention to context in the context-aware encoder (the analyses of Voita et al. 2018, §5.2).

For each source word, the attention mass its last encoder layer gives to context *words*
(not <ctx>, </s> or punctuation), averaged per word, by sentence length and by token position,
and the gate's share of context (1 - g: how much of that attention reaches the encoder's
output at all; near 0 when the model has learnt to shut its context out); plots as PNG and
one heatmap.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import sentencepiece as spm
import torch

from subctx.layout import piece_words
from subctx.nn.context_encoder import ContextEncoderTransformer
from subctx_train.examples import EOS, Example, collate, render_separate

PRONOUNS = {"it", "he", "she", "they", "you", "him", "her", "them", "its", "his", "their"}


@torch.no_grad()
def analyse(model: ContextEncoderTransformer, sp: spm.SentencePieceProcessor,
            examples: list[Example], ctx_bos: int, batch_size: int = 32,
            min_count: int = 10) -> dict:
    model.eval()
    per_word: dict[str, list[float]] = defaultdict(list)
    by_length: dict[int, list[float]] = defaultdict(list)
    by_position: dict[int, list[float]] = defaultdict(list)
    context_share: dict[str, list[float]] = defaultdict(list)  # word -> (1 - g) per occurrence
    usable = [ex for ex in examples if ex.src_ctx]
    for start in range(0, len(usable), batch_size):
        chunk = usable[start:start + batch_size]
        rendered = [render_separate(ex, 1, ctx_bos) for ex in chunk]
        batch = collate(rendered)
        model.encode(batch.src, None, batch.ctx, batch.ctx_dist, need_weights=True)
        att = model.context_attention  # (B, S, C)
        share = 1.0 - model.source_last.last_gate.mean(-1)  # (B, S): context's part per token
        for b, r in enumerate(rendered):
            ctx_pieces = [sp.id_to_piece(t) for t in r.ctx]
            ctx_word_positions = [i for _, idx in piece_words(ctx_pieces) for i in idx
                                  if r.ctx[i] not in (ctx_bos, EOS)]
            src_pieces = [sp.id_to_piece(t) for t in r.src[:-1]]
            words = piece_words(src_pieces)
            for position, (word, idx) in enumerate(words):
                mass = float(att[b, idx][:, ctx_word_positions].sum(-1).mean())
                per_word[word.lower()].append(mass)
                by_length[len(words)].append(mass)
                by_position[position].append(mass)
                context_share[word.lower()].append(float(share[b, idx].mean()))

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    words = {w: (mean(v), len(v)) for w, v in per_word.items()}
    frequent = {w: m for w, (m, n) in words.items() if n >= min_count}
    top = sorted(frequent.items(), key=lambda kv: -kv[1])[:10]
    overall = mean([m for v in per_word.values() for m in v]) if per_word else 0.0
    shares = [m for v in context_share.values() for m in v]
    return {
        "examples": len(usable), "overall": overall, "top10": top,
        "pronouns": {w: words[w][0] for w in sorted(PRONOUNS) if w in words},
        "context_share": {
            "overall": mean(shares) if shares else 0.0,
            "pronouns": {w: mean(context_share[w]) for w in sorted(PRONOUNS)
                         if w in context_share},
        },
        "by_length": {k: mean(v) for k, v in sorted(by_length.items()) if len(v) >= min_count},
        "by_position": {k: mean(v) for k, v in sorted(by_position.items())
                        if len(v) >= min_count},
    }


def plot(stats: dict, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(7, 4))
    words = [w for w, _ in stats["top10"]]
    ax.barh(words[::-1], [m for _, m in stats["top10"]][::-1])
    ax.axvline(stats["overall"], color="gray", linestyle="--", label="all words")
    ax.set_xlabel("attention to context words")
    ax.set_title("source words attending most to context")
    ax.legend()
    fig.tight_layout()
    paths.append(out_dir / "attention_top_words.png")
    fig.savefig(paths[-1], dpi=100)
    for key, label, name in (("by_length", "source sentence length (words)", "length"),
                             ("by_position", "token position in the sentence", "position")):
        fig, ax = plt.subplots(figsize=(7, 4))
        xs = list(stats[key])
        ax.plot(xs, [stats[key][x] for x in xs], marker="o")
        ax.set_xlabel(label)
        ax.set_ylabel("attention to context words")
        fig.tight_layout()
        paths.append(out_dir / f"attention_by_{name}.png")
        fig.savefig(paths[-1], dpi=100)
    plt.close("all")
    return paths


@torch.no_grad()
def heatmap(model: ContextEncoderTransformer, sp: spm.SentencePieceProcessor, example: Example,
            ctx_bos: int, out_png: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rendered = render_separate(example, 1, ctx_bos)
    batch = collate([rendered])
    model.encode(batch.src, None, batch.ctx, batch.ctx_dist, need_weights=True)
    att = model.context_attention[0].numpy()
    fig, ax = plt.subplots(figsize=(max(6, len(rendered.ctx) * 0.45),
                                    max(4, len(rendered.src) * 0.35)))
    ax.imshow(att, cmap="Blues", aspect="auto")
    ax.set_xticks(range(len(rendered.ctx)))
    ax.set_xticklabels([sp.id_to_piece(t) for t in rendered.ctx], rotation=70, fontsize=8)
    ax.set_yticks(range(len(rendered.src)))
    ax.set_yticklabels([sp.id_to_piece(t) for t in rendered.src], fontsize=8)
    ax.set_xlabel("context (previous sentence)")
    ax.set_ylabel("source")
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)
    plt.close(fig)
    return out_png


def pronoun_example(examples: list[Example], sp: spm.SentencePieceProcessor) -> Example | None:
    for ex in examples:
        if ex.src_ctx and 4 <= len(ex.src) <= 40:
            words = {w.lower() for w, _ in piece_words([sp.id_to_piece(t) for t in ex.src])}
            if words & {"it", "she", "he", "they"}:
                return ex
    return None


def write_report(stats: dict, out_dir: Path) -> Path:
    path = out_dir / "attention.json"
    path.write_text(json.dumps(stats, indent=1, ensure_ascii=False), encoding="utf-8")
    return path
