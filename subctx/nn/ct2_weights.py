"""A CTranslate2 model.bin read into PyTorch weights: the inverse of the export's layout.

The format (binary version 6) is read directly, without ctranslate2: int8 / int16 weights are
dequantised with their scales, so the weights are the shipped model's. The trainer's `unbundle`
turns them into a run to train further; the PyTorch backend serves a CTranslate2 bundle with
them where CTranslate2 cannot (not installed, or no CUDA libraries for a GPU).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch

from subctx.errors import BundleError
from subctx.nn.config import ModelConfig

# the order of CTranslate2's DataType enum (include/ctranslate2/types.h)
_DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")
_NUMPY = {"float32": np.float32, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "float16": np.float16, "bfloat16": np.uint16}


class _Reader:
    def __init__(self, stream: BinaryIO):
        self.stream = stream

    def unpack(self, fmt: str):
        size = struct.calcsize(fmt)
        data = self.stream.read(size)
        if len(data) != size:
            raise BundleError("model.bin ends early")
        return struct.unpack(fmt, data)[0]

    def string(self) -> str:
        return self.stream.read(self.unpack("H"))[:-1].decode("utf-8")


def _as_float(raw: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":  # the upper half of a float32
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32)


def read_model_bin(path: Path) -> dict[str, np.ndarray]:
    """Every variable of a CTranslate2 model.bin (binary version 6), aliases resolved and
    quantised weights turned back into float32 (`name_scale` is consumed)."""
    with open(path, "rb") as stream:
        reader = _Reader(stream)
        version = reader.unpack("I")
        if version != 6:
            raise BundleError(f"{path}: model.bin version {version}, this reader knows 6")
        reader.string()  # spec name
        reader.unpack("I")  # spec revision
        raw: dict[str, tuple[np.ndarray, str]] = {}
        for _ in range(reader.unpack("I")):
            name = reader.string()
            shape = [reader.unpack("I") for _ in range(reader.unpack("B"))]
            dtype = _DTYPES[reader.unpack("B")]
            data = stream.read(reader.unpack("I"))
            raw[name] = np.frombuffer(data, dtype=_NUMPY[dtype]).reshape(shape), dtype
        aliases = {reader.string(): reader.string() for _ in range(reader.unpack("I"))}
    out: dict[str, np.ndarray] = {}
    for name, (value, dtype) in raw.items():
        if name.endswith("_scale") and name[: -len("_scale")] in raw:
            continue
        scale = raw.get(f"{name}_scale")
        if scale is not None and dtype in ("int8", "int16"):
            factor = _as_float(*scale)
            value = value.astype(np.float32) / (factor[:, None] if factor.ndim else factor)
        elif dtype in ("float16", "bfloat16", "float32"):
            value = _as_float(value, dtype)
        out[name] = value
    for alias, target in aliases.items():
        out[alias] = out[target]
    return out


def _split(weight: np.ndarray, parts: int) -> list[np.ndarray]:
    return np.split(weight, parts, axis=0)


def _attention(state: dict, prefix: str, v: dict, spec: str, cross: bool) -> None:
    if cross:
        state[f"{prefix}.q.weight"] = v[f"{spec}/linear_0/weight"]
        state[f"{prefix}.q.bias"] = v[f"{spec}/linear_0/bias"]
        kv = zip(["k", "v"], _split(v[f"{spec}/linear_1/weight"], 2),
                 _split(v[f"{spec}/linear_1/bias"], 2), strict=True)
        out = "linear_2"
    else:
        kv = zip(["q", "k", "v"], _split(v[f"{spec}/linear_0/weight"], 3),
                 _split(v[f"{spec}/linear_0/bias"], 3), strict=True)
        out = "linear_1"
    for name, weight, bias in kv:
        state[f"{prefix}.{name}.weight"], state[f"{prefix}.{name}.bias"] = weight, bias
    state[f"{prefix}.out.weight"] = v[f"{spec}/{out}/weight"]
    state[f"{prefix}.out.bias"] = v[f"{spec}/{out}/bias"]


def _norm(state: dict, name: str, v: dict, spec: str) -> None:
    state[f"{name}.weight"], state[f"{name}.bias"] = v[f"{spec}/gamma"], v[f"{spec}/beta"]


def _ffn(state: dict, layer: str, v: dict, spec: str) -> None:
    _norm(state, f"{layer}.ffn.norm", v, f"{spec}/ffn/layer_norm")
    for ours, theirs in (("inner", "linear_0"), ("outer", "linear_1")):
        state[f"{layer}.ffn.{ours}.weight"] = v[f"{spec}/ffn/{theirs}/weight"]
        state[f"{layer}.ffn.{ours}.bias"] = v[f"{spec}/ffn/{theirs}/bias"]


def transformer_state(v: dict[str, np.ndarray], cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """subctx_train.model.Transformer weights from CTranslate2 TransformerSpec variables (as
    subctx_train.export.build_spec lays them out: one shared embedding, pre-norm). The decoder's
    copy of the embedding is the unscaled one (a segment-shifted encoder's is pre-scaled)."""
    state: dict[str, np.ndarray] = {"embed.weight": v["decoder/embeddings/weight"]}
    _norm(state, "encoder_norm", v, "encoder/layer_norm")
    _norm(state, "decoder_norm", v, "decoder/layer_norm")
    for i in range(cfg.enc_layers):
        spec, layer = f"encoder/layer_{i}", f"encoder.{i}"
        _norm(state, f"{layer}.self_norm", v, f"{spec}/self_attention/layer_norm")
        _attention(state, f"{layer}.self_attn", v, f"{spec}/self_attention", cross=False)
        _ffn(state, layer, v, spec)
    for i in range(cfg.dec_layers):
        spec, layer = f"decoder/layer_{i}", f"decoder.{i}"
        _norm(state, f"{layer}.self_norm", v, f"{spec}/self_attention/layer_norm")
        _attention(state, f"{layer}.self_attn", v, f"{spec}/self_attention", cross=False)
        _norm(state, f"{layer}.cross_norm", v, f"{spec}/attention/layer_norm")
        _attention(state, f"{layer}.cross_attn", v, f"{spec}/attention", cross=True)
        _ffn(state, layer, v, spec)
    # CTranslate2 stores equal variables once (aliases): every tensor gets its own copy
    return {k: torch.from_numpy(np.array(a, dtype=np.float32, copy=True))
            for k, a in state.items()}


def model_config(variables: dict[str, np.ndarray], training: dict) -> ModelConfig:
    """The architecture, from the variables' shapes (and the heads the training recorded)."""
    vocab, d_model = variables["decoder/embeddings/weight"].shape
    enc = sum(1 for k in variables if k.startswith("encoder/layer_") and
              k.endswith("/ffn/linear_0/weight"))
    dec = sum(1 for k in variables if k.startswith("decoder/layer_") and
              k.endswith("/ffn/linear_0/weight"))
    heads = int(variables.get("encoder/num_heads", np.array(training.get("n_heads", 8))))
    return ModelConfig(vocab_size=int(vocab), d_model=int(d_model), n_heads=heads,
                       ff_dim=int(variables["encoder/layer_0/ffn/linear_0/weight"].shape[0]),
                       enc_layers=enc, dec_layers=dec,
                       max_positions=int(variables["decoder/position_encodings/encodings"]
                                         .shape[0]),
                       dropout=float(training.get("dropout", 0.1)))
