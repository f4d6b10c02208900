"""A network's shape and configuration: plain dataclasses, no torch (the trainer's config
extends `ModelShape`; a bundle's `model.json` stores a `ModelConfig`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass(kw_only=True)
class ModelShape:
    """The network's size: part of the training configuration and of the model's own config
    (each field's help is what `subctx-train train --help` shows)."""

    d_model: int = field(default=256, metadata={"help": "model width"})
    n_heads: int = field(default=4, metadata={"help": "attention heads"})
    ff_dim: int = field(default=1024, metadata={"help": "feed-forward inner width"})
    enc_layers: int = field(default=3, metadata={"help": "encoder layers"})
    dec_layers: int = field(default=3, metadata={"help": "decoder layers"})
    dropout: float = field(default=0.1, metadata={"help": "dropout probability"})
    max_positions: int = field(default=1024, metadata={
        "help": "longest token sequence (source with its context)"})

    def shape(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(ModelShape)}


@dataclass(kw_only=True)
class ModelConfig(ModelShape):
    vocab_size: int
    pad_id: int = 0

    def to_dict(self) -> dict:
        return asdict(self)
