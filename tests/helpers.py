"""Test helpers: a tiny model bundle built through the real export path, and .srt writers."""

from __future__ import annotations

from pathlib import Path

from subctx.bundle import ContextSettings, Manifest

CORPUS = [
    ("Hello there, how are you?", "Привет, как дела?"),
    ("I do not know what you mean.", "Я не знаю, что ты имеешь в виду."),
    ("She said it was fine.", "Она сказала, что всё в порядке."),
    ("Where is the door?", "Где дверь?"),
    ("The door slams.", "Дверь хлопает."),
    ("Thank you very much.", "Большое спасибо."),
]


def build_tiny_bundle(out: Path, shift: int = 0, max_k: int = 3, seed: int = 0,
                      eos_bias: bool = True, shape: dict | None = None,
                      info: dict | None = None, quantization: str | None = None) -> Path:
    """A random-weight concatenation model (2+2 layers, d=32, or `shape`) exported to a real
    bundle (manifest `info` and int8 `quantization` as a shipped bundle has them)."""
    import torch

    from subctx.nn.config import ModelConfig
    from subctx.nn.transformer import Transformer
    from subctx_train.export import export_bundle
    from subctx_train.tokenizer import train_tokenizer

    spm_file = train_tokenizer([s for pair in CORPUS for s in pair] * 20, out / "spm.model",
                               vocab_size=120)
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(spm_file))
    vocab = sp.get_piece_size()
    torch.manual_seed(seed)
    cfg = ModelConfig(vocab_size=vocab, **(shape or dict(
        d_model=32, n_heads=4, ff_dim=64, enc_layers=2, dec_layers=2, max_positions=256,
        dropout=0.0)))
    model = Transformer(cfg)
    if eos_bias:  # make </s> and <sep> rare so random outputs are non-empty text, and
        # bytes and special pieces too, so that they are text at all (a zero row scores 0,
        # below the best of the random ones whatever the decoder state)
        with torch.no_grad():
            for i in range(vocab):
                if i in (3, 4) or sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i) \
                        or sp.id_to_piece(i).startswith("<"):
                    model.embed.weight[i] *= 0.0
    manifest = Manifest(
        architecture="concat", max_positions=cfg.max_positions,
        source_spm="spm.model", target_spm="spm.model",
        context=ContextSettings(max_k=max_k, default_k=min(1, max_k), segment_shift=shift),
        info=info or {})
    return export_bundle(model, spm_file, manifest, out / "bundle", quantization=quantization)




def write_srt(path: Path, text: str, encoding: str = "utf-8", newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode(encoding))
    return path
