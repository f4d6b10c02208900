"""A CTranslate2 bundle read back into PyTorch weights: the inverse of subctx_train.export.

So that a shipped model can be trained further (e.g. fine-tuned on a GPU machine, which has
neither ctranslate2 nor room to carry float weights beside the bundle): `unbundle` writes a
run folder that `subctx-train train --init-from` starts from, with the weights
subctx.nn.ct2_weights reads from model.bin (dequantised: the shipped model's, not the float
weights it was quantised from).
"""

from __future__ import annotations

import json
from pathlib import Path

import sentencepiece as spm
import torch

from subctx.bundle import load_bundle
from subctx.errors import BundleError
from subctx.nn import ARCHITECTURES
from subctx.nn.ct2_weights import model_config, read_model_bin, transformer_state
from subctx_train.checkpoint import save_chunked
from subctx_train.tokenizer import add_user_pieces, control_symbols

SUPPORTED_ARCHITECTURES = tuple(name for name, a in ARCHITECTURES.items()
                                if a.backend == "ctranslate2")


def with_new_rows(embedding: torch.Tensor, rows: int, seed: int = 1234) -> torch.Tensor:
    """The shared embedding with `rows` more, drawn like its own (zero mean, its elements'
    standard deviation), for pieces added to the tokenizer."""
    if not rows:
        return embedding
    generator = torch.Generator().manual_seed(seed)
    extra = torch.randn(rows, embedding.shape[1], generator=generator) * embedding.std()
    return torch.cat([embedding, extra.to(embedding.dtype)])


def unbundle(bundle_dir: Path, out: Path, control_tags: bool = False) -> Path:
    """Write a run folder holding a CTranslate2 bundle's weights (final-*.safetensors), its
    training config, tokenizer and step count: what `train --init-from` starts from.
    `control_tags` adds the control tags' pieces a bundle made before them lacks to the
    tokenizer (after its own ids) and as fresh rows of the embedding, so that a fine-tune with
    `control_share` can teach them."""
    bundle = load_bundle(bundle_dir)
    manifest = bundle.manifest
    if manifest.backend != "ctranslate2" or manifest.architecture not in SUPPORTED_ARCHITECTURES:
        raise BundleError(f"{bundle_dir}: unbundle reads CTranslate2 bundles of "
                         f"{' or '.join(SUPPORTED_ARCHITECTURES)} models")
    if manifest.source_spm != manifest.target_spm:
        raise BundleError(f"{bundle_dir}: the trainer shares one tokenizer")
    training = dict(manifest.info.get("training", {}))
    train_cfg = {"architecture": manifest.architecture, **training.get("config", {})}
    variables = read_model_bin(bundle.file("model.bin"))
    cfg = model_config(variables, train_cfg)
    state = transformer_state(variables, cfg)
    tokenizer = bundle.file(manifest.source_spm).read_bytes()
    if control_tags:
        tokenizer = add_user_pieces(tokenizer, control_symbols(manifest.special_tokens))
        pieces = spm.SentencePieceProcessor(model_proto=tokenizer).get_piece_size()
        state["embed.weight"] = with_new_rows(state["embed.weight"], pieces - cfg.vocab_size)
        cfg.vocab_size = pieces
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_chunked(state, out, "final")
    (out / "spm.model").write_bytes(tokenizer)
    # the bundle's training progress, as the last metrics record of a run would hold it
    record = {"step": int(training.get("steps") or 0), "epoch": training.get("epochs") or 0,
              "elapsed_min": training.get("minutes") or 0.0,
              "precision": training.get("precision", "fp32"), **training.get("final_dev", {})}
    (out / "metrics.jsonl").write_text(json.dumps(record) + "\n")
    weights = f"{training.get('weights', 'weights')} of {bundle_dir}, " \
              f"{training.get('quantization', 'float32')} as shipped"
    (out / "final.json").write_text(json.dumps({"averaged_checkpoints": [], "weights": weights,
                                                "unbundled_from": str(bundle_dir)}, indent=1))
    (out / "config.json").write_text(json.dumps(
        {"train": train_cfg, "model": cfg.to_dict(), "init_from": training.get("init_from"),
         "data": training.get("data"), "hardware": training.get("device"),
         "unbundled_from": str(bundle_dir),
         # the stages before the bundle's last, as its card had them (their runs are gone)
         "pretraining": training.get("pretraining") or []}, indent=1, ensure_ascii=False))
    return out
