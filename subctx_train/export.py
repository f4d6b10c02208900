"""Export a trained Transformer to a subctx model bundle (CTranslate2 model + manifest + card).

One converter per architecture that CTranslate2 serves (`CONVERTERS`), after `check_options` has
rejected what it cannot run; then validate, optimize (quantize), save and a test load, as
CTranslate2's own `Converter.convert` does.

The mapping is exact: the CTranslate2 spec gets the very position table the PyTorch model adds,
and segment-shifted encoder positions travel as a second source stream whose embedding table is
that position table (CTranslate2's own encoder positions are then zero).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import ctranslate2
import numpy as np
import torch
from ctranslate2.specs import common_spec, transformer_spec
from ctranslate2.specs.model_spec import ACCEPTED_MODEL_TYPES

from subctx.bundle import MANIFEST, Manifest, write_manifest
from subctx.nn import ARCHITECTURES, architecture
from subctx.nn.transformer import DecoderLayer, EncoderLayer, MultiHeadAttention, Transformer


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()


def _linear(spec, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    spec.weight = _np(weight)
    if bias is not None:
        spec.bias = _np(bias)


def _norm(spec, norm: torch.nn.LayerNorm) -> None:
    spec.gamma = _np(norm.weight)
    spec.beta = _np(norm.bias)


def _self_attention(spec, attn: MultiHeadAttention, norm: torch.nn.LayerNorm) -> None:
    _norm(spec.layer_norm, norm)
    _linear(spec.linear[0], torch.cat([attn.q.weight, attn.k.weight, attn.v.weight]),
            torch.cat([attn.q.bias, attn.k.bias, attn.v.bias]))
    _linear(spec.linear[1], attn.out.weight, attn.out.bias)


def _cross_attention(spec, attn: MultiHeadAttention, norm: torch.nn.LayerNorm) -> None:
    _norm(spec.layer_norm, norm)
    _linear(spec.linear[0], attn.q.weight, attn.q.bias)
    _linear(spec.linear[1], torch.cat([attn.k.weight, attn.v.weight]),
            torch.cat([attn.k.bias, attn.v.bias]))
    _linear(spec.linear[2], attn.out.weight, attn.out.bias)


def _ffn(spec, layer: EncoderLayer | DecoderLayer) -> None:
    _norm(spec.layer_norm, layer.ffn.norm)
    _linear(spec.linear_0, layer.ffn.inner.weight, layer.ffn.inner.bias)
    _linear(spec.linear_1, layer.ffn.outer.weight, layer.ffn.outer.bias)


def build_spec(model: Transformer, vocabulary: list[str], position_features: bool,
               bos: str = "<s>", eos: str = "</s>", unk: str = "<unk>"):
    """Build a CTranslate2 TransformerSpec carrying `model`'s weights."""
    cfg = model.cfg
    spec = transformer_spec.TransformerSpec.from_config(
        (cfg.enc_layers, cfg.dec_layers), cfg.n_heads, pre_norm=True,
        activation=common_spec.Activation.RELU,
        num_source_embeddings=2 if position_features else 1,
        embeddings_merge=common_spec.EmbeddingsMerge.ADD,
    )
    table = _np(model.positions)
    enc, dec = spec.encoder, spec.decoder
    if position_features:
        # Sum of two lookups (tokens pre-scaled by sqrt(d), then the shifted-position rows);
        # CTranslate2's own encoder positions are zero so they add nothing.
        enc.scale_embeddings = False
        enc.embeddings[0].weight = _np(model.embed.weight) * np.float32(np.sqrt(cfg.d_model))
        enc.embeddings[1].weight = table
        enc.position_encodings.encodings = np.zeros_like(table)
    else:
        enc.embeddings[0].weight = _np(model.embed.weight)
        enc.position_encodings.encodings = table
    _norm(enc.layer_norm, model.encoder_norm)
    for layer_spec, layer in zip(enc.layer, model.encoder, strict=True):
        _self_attention(layer_spec.self_attention, layer.self_attn, layer.self_norm)
        _ffn(layer_spec.ffn, layer)
    dec.embeddings.weight = _np(model.embed.weight)
    dec.position_encodings.encodings = table
    _norm(dec.layer_norm, model.decoder_norm)
    dec.projection.weight = _np(model.embed.weight)
    for layer_spec, layer in zip(dec.layer, model.decoder, strict=True):
        _self_attention(layer_spec.self_attention, layer.self_attn, layer.self_norm)
        _cross_attention(layer_spec.attention, layer.cross_attn, layer.cross_norm)
        _ffn(layer_spec.ffn, layer)

    spec.config.bos_token = bos
    spec.config.eos_token = eos
    spec.config.unk_token = unk
    spec.config.decoder_start_token = bos
    spec.config.layer_norm_epsilon = model.encoder_norm.eps
    spec.register_source_vocabulary(vocabulary)
    if position_features:
        spec.register_source_vocabulary([f"p{i}" for i in range(cfg.max_positions)])
    spec.register_target_vocabulary(vocabulary)
    return spec


def sentence_spec(model: Transformer, manifest: Manifest, vocabulary: list[str]):
    """`transformer`: one sentence in, plain positions."""
    return build_spec(model, vocabulary, False, bos=manifest.special_tokens.bos,
                      eos=manifest.special_tokens.eos, unk=manifest.special_tokens.unk)


def concat_spec(model: Transformer, manifest: Manifest, vocabulary: list[str]):
    """`concat`: context and sentence in one sequence; shifted positions as a second stream."""
    return build_spec(model, vocabulary, manifest.context.segment_shift > 0,
                      bos=manifest.special_tokens.bos, eos=manifest.special_tokens.eos,
                      unk=manifest.special_tokens.unk)


Converter = Callable[[Transformer, Manifest, list[str]], transformer_spec.TransformerSpec]
# one per architecture whose backend is "ctranslate2" (subctx.nn.ARCHITECTURES)
CONVERTERS: dict[str, Converter] = {"transformer": sentence_spec, "concat": concat_spec}


def check_options(model: Transformer, manifest: Manifest, vocabulary: list[str],
                  quantization: str | None) -> Converter:
    """The architecture's converter, once everything CTranslate2 cannot run is ruled out;
    ValueError before any weight is copied otherwise."""
    name = manifest.architecture
    if name not in CONVERTERS:
        served = [a for a in ARCHITECTURES if a in CONVERTERS]
        raise ValueError(f"CTranslate2 cannot run the {name} architecture (it runs "
                         f"{', '.join(served)}); export it with --backend torch")
    if manifest.backend != "ctranslate2":
        raise ValueError(f"the manifest says backend {manifest.backend!r}, not ctranslate2")
    if type(model) is not Transformer:
        raise ValueError(f"{type(model).__name__} is not the {name} network (Transformer)")
    cfg = model.cfg
    if len(vocabulary) != cfg.vocab_size:
        raise ValueError(f"tokenizer has {len(vocabulary)} pieces, model {cfg.vocab_size}")
    missing = [t for t in (manifest.special_tokens.bos, manifest.special_tokens.eos,
                           manifest.special_tokens.unk) if t not in vocabulary]
    if missing:
        raise ValueError(f"special tokens not in the vocabulary: {', '.join(missing)}")
    if manifest.max_positions != cfg.max_positions:
        raise ValueError(f"manifest max_positions {manifest.max_positions} differs from the "
                         f"model's {cfg.max_positions}")
    if manifest.context.segment_shift and not architecture(name).segment_shift:
        raise ValueError(f"the {name} architecture has no segment-shifted positions")
    if len({m.eps for m in model.modules() if isinstance(m, torch.nn.LayerNorm)}) > 1:
        raise ValueError("CTranslate2 takes one layer-norm epsilon for the whole model")
    if quantization is not None and quantization not in ACCEPTED_MODEL_TYPES:
        raise ValueError(f"quantization {quantization!r} is not one of "
                         f"{', '.join(ACCEPTED_MODEL_TYPES)}")
    return CONVERTERS[name]


def export_bundle(model: Transformer, spm_model: Path, manifest: Manifest, out_dir: Path,
                  quantization: str | None = None, model_card: str | None = None) -> Path:
    """Write a complete bundle: CTranslate2 model, SentencePiece model, manifest, model card.
    It is built beside `out_dir` and replaces it whole once complete (a bundle exported there
    before leaves no file behind; a failed export leaves it as it was); a folder that is not
    a bundle is refused (RunError)."""
    from subctx_train.checkpoint import check_output_folder, replaced_folder

    out_dir = check_output_folder(out_dir, MANIFEST)
    with replaced_folder(out_dir, MANIFEST) as staged:
        write_bundle(model, spm_model, manifest, staged, quantization, model_card)
    return out_dir


def write_bundle(model: Transformer, spm_model: Path, manifest: Manifest, folder: Path,
                 quantization: str | None = None, model_card: str | None = None) -> Path:
    """The bundle's files, written into `folder` (new or empty), checked by a test load."""
    import sentencepiece as spm

    folder = Path(folder)
    processor = spm.SentencePieceProcessor(model_file=str(spm_model))
    vocabulary = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    convert = check_options(model, manifest, vocabulary, quantization)
    spec = convert(model.eval(), manifest, vocabulary)
    spec.validate()
    spec.optimize(quantization=quantization)
    folder.mkdir(parents=True, exist_ok=True)
    spec.save(str(folder))
    for name in {manifest.source_spm, manifest.target_spm}:
        shutil.copyfile(spm_model, folder / name)
    write_manifest(folder, manifest)
    if model_card is not None:
        (folder / "README.md").write_text(model_card, encoding="utf-8")
    ctranslate2.Translator(str(folder), device="cpu")  # fail here, not in the app
    return folder
