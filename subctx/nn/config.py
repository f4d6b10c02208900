"""A network's shape and configuration: plain dataclasses, no torch (the trainer's config
extends `ModelShape`; a bundle's `model.json` stores a `ModelConfig`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(kw_only=True)
class ModelShape:
    """The network's size: part of the training configuration and of the model's own config."""
    d_model: int = 256
    n_heads: int = 4
    ff_dim: int = 1024
    enc_layers: int = 3
    dec_layers: int = 3
    dropout: float = 0.1
    max_positions: int = 1024

    def shape(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(ModelShape)}


@dataclass(kw_only=True)
class ModelConfig(ModelShape):
    vocab_size: int
    pad_id: int = 0

    def to_dict(self) -> dict:
        return asdict(self)
