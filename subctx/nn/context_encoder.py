"""The context-aware encoder of Voita et al. 2018 ("Context-aware neural machine translation learns
anaphora resolution").

It reuses the Transformer's embeddings, positions and decoder (subctx.nn.transformer); context
arrives apart from the source (subctx.layout.separate_context): `ctx` = <ctx> s_k </s> ... s_1 </s>.

    the source and the context go through the same first N-1 encoder layers; the context then
    through its own last layer; the source's last layer attends to itself and to the context:
        c_self = SelfAttn(LN(x)),  c_ctx = Attn(LN(x), context)
        g = sigmoid(W_g [c_self; c_ctx] + b_g)
        x = x + Dropout(g * c_self + (1 - g) * c_ctx);   x = x + FFN(LN(x))
    (pre-norm, as the rest of our models; the paper is post-norm). The context's leading <ctx>
    tells the shared layers which kind of sentence they encode.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from subctx.nn.config import ModelConfig
from subctx.nn.transformer import (
    Dropout,
    EncoderLayer,
    FeedForward,
    MultiHeadAttention,
    Transformer,
)


class GatedContextLayer(nn.Module):
    """The source encoder's last layer: self-attention and context attention mixed by a gate."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.norm = nn.LayerNorm(cfg.d_model)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.ctx_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.gate = nn.Linear(2 * cfg.d_model, cfg.d_model)
        self.ffn = FeedForward(cfg.d_model, cfg.ff_dim, cfg.dropout)
        self.dropout = Dropout(cfg.dropout)
        self.last_gate: Tensor | None = None

    def forward(self, x: Tensor, mask: Tensor, ctx: Tensor, ctx_mask: Tensor,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        y = self.norm(x)
        c_self = self.self_attn(y, y, mask)[0]
        c_ctx, weights = self.ctx_attn(y, ctx, ctx_mask, need_weights)
        g = torch.sigmoid(self.gate(torch.cat([c_self, c_ctx], dim=-1)))
        self.last_gate = g.detach()
        x = x + self.dropout(g * c_self + (1.0 - g) * c_ctx)
        return x + self.dropout(self.ffn(x)), weights


class ContextEncoderTransformer(Transformer):
    """Voita et al. 2018: shared first N-1 encoder layers, separate last layers, gated."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.enc_layers < 2:
            raise ValueError("the context-aware encoder needs at least 2 encoder layers")
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers - 1))
        self.source_last = GatedContextLayer(cfg)
        self.context_last = EncoderLayer(cfg)
        self.context_norm = nn.LayerNorm(cfg.d_model)
        self.context_attention: Tensor | None = None  # (B, H-avg, S, C) when asked

    def adapt_state(self, state: dict[str, Tensor]) -> dict[str, Tensor]:
        """Fit a sentence-level Transformer's weights to this model: its last encoder layer
        seeds both the source encoder's last layer (self-attention, FFN) and the context
        encoder's own last layer; context attention and gate start fresh."""
        last = f"encoder.{self.cfg.enc_layers - 1}."
        renames = {"self_norm.": ["source_last.norm.", "context_last.self_norm."],
                   "self_attn.": ["source_last.self_attn.", "context_last.self_attn."],
                   "ffn.": ["source_last.ffn.", "context_last.ffn."]}
        adapted = {k: v for k, v in state.items() if not k.startswith(last)}
        for key, value in state.items():
            if not key.startswith(last):
                continue
            rest = key[len(last):]
            for prefix, targets in renames.items():
                if rest.startswith(prefix):
                    for target in targets:
                        adapted.setdefault(target + rest[len(prefix):], value)
        if "encoder_norm.weight" in state:
            adapted.setdefault("context_norm.weight", state["encoder_norm.weight"])
            adapted.setdefault("context_norm.bias", state["encoder_norm.bias"])
        return adapted

    def encode(self, src: Tensor, src_positions: Tensor | None = None, ctx: Tensor | None = None,
               ctx_dist: Tensor | None = None, need_weights: bool = False
               ) -> tuple[Tensor, Tensor]:
        if ctx is None:
            raise ValueError("the context-aware encoder needs `ctx` (at least <ctx>)")
        mask = (src != self.cfg.pad_id)[:, None, None, :]
        ctx_mask = (ctx != self.cfg.pad_id)[:, None, None, :]
        x, c = self._embed(src, src_positions), self._embed(ctx, None)
        for layer in self.encoder:
            x, c = layer(x, mask), layer(c, ctx_mask)
        c = self.context_norm(self.context_last(c, ctx_mask))
        x, weights = self.source_last(x, mask, c, ctx_mask, need_weights)
        self.context_attention = weights.mean(1) if weights is not None else None
        return self.encoder_norm(x), mask

    def forward_batch(self, batch) -> tuple[Tensor, Tensor]:
        memory, mask = self.encode(batch.src, batch.positions, batch.ctx, batch.ctx_dist)
        return self.decode(batch.tgt_in, memory, mask)[0], memory.new_zeros(())
