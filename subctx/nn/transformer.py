"""A pre-norm Transformer for translation, laid out so that it maps 1:1 onto CTranslate2's
TransformerSpec (see subctx_train/export.py).

The concatenation model of Lupo et al. 2022 is this same network fed concatenated context
(subctx.layout); its only architectural twist, segment-shifted encoder positions, enters through
the optional `src_positions` argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from subctx.nn.config import ModelConfig


def sinusoidal_table(length: int, dim: int) -> Tensor:
    """Position encodings [sin | cos] (first half sines, second half cosines)."""
    positions = torch.arange(length, dtype=torch.float32)[:, None]
    freqs = torch.exp(-math.log(10000.0) * torch.arange(dim // 2, dtype=torch.float32)
                      / (dim // 2 - 1))
    angles = positions * freqs[None, :]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


class Dropout(nn.Module):
    """Inverted dropout whose mask comes from random bytes (p rounded to 1/256).

    On CPU, PyTorch's Bernoulli sampler was the slowest op of a bf16 training step (a third of
    the step's time); drawing 64-bit random integers and comparing their bytes to a threshold
    is about six times faster and equally random. CUDA keeps the stock kernel."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p
        self.threshold = round(p * 256)  # a byte below this drops the element

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.threshold == 0:
            return x
        if x.device.type != "cpu":
            return F.dropout(x, self.p, True)
        n = x.numel()
        words = torch.randint(-2 ** 63, 2 ** 63 - 1, ((n + 7) // 8,), dtype=torch.int64)
        keep = words.view(torch.uint8)[:n].view(x.shape) >= self.threshold
        return x * keep * (256 / (256 - self.threshold))

    def extra_repr(self) -> str:
        return f"p={self.p}"


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, query: Tensor, memory: Tensor, mask: Tensor | None,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """mask: bool, True where attention is allowed, broadcastable to (B, H, Tq, Tk)."""
        k, v = self.keys_values(memory)
        return self.attend(query, k, v, mask, need_weights)

    def _heads(self, x: Tensor) -> Tensor:
        b, _, d = x.shape
        return x.view(b, -1, self.n_heads, d // self.n_heads).transpose(1, 2)

    def keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Keys and values (B, H, Tk, D/H) of `memory`, reusable across decoding steps."""
        return self._heads(self.k(memory)), self._heads(self.v(memory))

    def attend(self, query: Tensor, k: Tensor, v: Tensor, mask: Tensor | None,
               need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        b, tq, d = query.shape
        h = self.n_heads
        q = self._heads(self.q(query))
        if need_weights:
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = scores.softmax(-1)
            ctx = F.dropout(weights, self.dropout, self.training) @ v
        else:
            weights = None
            ctx = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0)
        return self.out(ctx.transpose(1, 2).reshape(b, tq, d)), weights


class FeedForward(nn.Module):
    def __init__(self, d_model: int, ff_dim: int, dropout: float):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.inner = nn.Linear(d_model, ff_dim)
        self.outer = nn.Linear(ff_dim, d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.outer(self.dropout(F.relu(self.inner(self.norm(x)))))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_norm = nn.LayerNorm(cfg.d_model)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.ffn = FeedForward(cfg.d_model, cfg.ff_dim, cfg.dropout)
        self.dropout = Dropout(cfg.dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        y = self.self_norm(x)
        x = x + self.dropout(self.self_attn(y, y, mask)[0])
        return x + self.dropout(self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_norm = nn.LayerNorm(cfg.d_model)
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.cross_norm = nn.LayerNorm(cfg.d_model)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.dropout)
        self.ffn = FeedForward(cfg.d_model, cfg.ff_dim, cfg.dropout)
        self.dropout = Dropout(cfg.dropout)

    def forward(self, x: Tensor, memory: Tensor, self_mask: Tensor, cross_mask: Tensor,
                need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        y = self.self_norm(x)
        x = x + self.dropout(self.self_attn(y, y, self_mask)[0])
        attended, weights = self.cross_attn(self.cross_norm(x), memory, cross_mask, need_weights)
        x = x + self.dropout(attended)
        return x + self.dropout(self.ffn(x)), weights

    def step(self, x: Tensor, cache: LayerCache, cross_mask: Tensor) -> Tensor:
        """One decoding step: x (B, 1, D); appends this step's keys and values to `cache`."""
        y = self.self_norm(x)
        k, v = self.self_attn.keys_values(y)
        if cache.self_k is not None:
            k, v = torch.cat([cache.self_k, k], 2), torch.cat([cache.self_v, v], 2)
        cache.self_k, cache.self_v = k, v
        x = x + self.self_attn.attend(y, k, v, None)[0]
        x = x + self.cross_attn.attend(self.cross_norm(x), cache.cross_k, cache.cross_v,
                                       cross_mask)[0]
        return x + self.ffn(x)


@dataclass
class LayerCache:
    """One decoder layer's keys and values: self-attention's grow by a step at a time,
    cross-attention's are computed once from the encoder output."""
    cross_k: Tensor
    cross_v: Tensor
    self_k: Tensor | None = None
    self_v: Tensor | None = None


@dataclass
class DecoderCache:
    """Everything incremental decoding keeps between steps (rows = hypotheses)."""
    layers: list[LayerCache]
    src_mask: Tensor
    length: int = 0

    def reorder(self, rows: Tensor) -> None:
        """Keep the hypotheses `rows` (beam search: each survivor's parent)."""
        self.src_mask = self.src_mask[rows]
        for layer in self.layers:
            layer.cross_k, layer.cross_v = layer.cross_k[rows], layer.cross_v[rows]
            if layer.self_k is not None:
                layer.self_k, layer.self_v = layer.self_k[rows], layer.self_v[rows]


class Transformer(nn.Module):
    """Encoder-decoder with one shared (source = target = output) embedding matrix."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        nn.init.normal_(self.embed.weight, std=cfg.d_model ** -0.5)
        with torch.no_grad():
            self.embed.weight[cfg.pad_id].zero_()
        self.register_buffer("positions", sinusoidal_table(cfg.max_positions, cfg.d_model),
                             persistent=False)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.encoder_norm = nn.LayerNorm(cfg.d_model)
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.dec_layers))
        self.decoder_norm = nn.LayerNorm(cfg.d_model)
        self.dropout = Dropout(cfg.dropout)

    def _embed(self, ids: Tensor, positions: Tensor | None) -> Tensor:
        if positions is None:
            positions = torch.arange(ids.size(1), device=ids.device)[None, :]
        x = self.embed(ids) * math.sqrt(self.cfg.d_model) + self.positions[positions]
        return self.dropout(x)

    def encode(self, src: Tensor, src_positions: Tensor | None = None, ctx: Tensor | None = None,
               ctx_dist: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """src: (B, S) ids; returns memory (B, S, D) and the key mask (B, 1, 1, S). Context
        reaches this model concatenated to `src` (`ctx`, `ctx_dist`: multi-encoder models')."""
        mask = (src != self.cfg.pad_id)[:, None, None, :]
        x = self._embed(src, src_positions)
        for layer in self.encoder:
            x = layer(x, mask)
        return self.encoder_norm(x), mask

    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor,
               need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        """tgt_in: (B, T) ids starting with <s>; returns logits (B, T, V) and the last layer's
        cross-attention averaged over heads (B, T, S) when asked."""
        t = tgt_in.size(1)
        causal = torch.ones(t, t, dtype=torch.bool, device=tgt_in.device).tril()
        self_mask = causal[None, None] & (tgt_in != self.cfg.pad_id)[:, None, None, :]
        x = self._embed(tgt_in, None)
        weights = None
        for i, layer in enumerate(self.decoder):
            last = i == len(self.decoder) - 1
            x, w = layer(x, memory, self_mask, src_mask, need_weights and last)
            if w is not None:
                weights = w.mean(1)
        return self.decoder_norm(x) @ self.embed.weight.T, weights

    def start_decoding(self, memory: Tensor, src_mask: Tensor) -> DecoderCache:
        """The cache for `decode_step`: cross-attention keys and values of every layer."""
        layers = [LayerCache(*layer.cross_attn.keys_values(memory)) for layer in self.decoder]
        return DecoderCache(layers, src_mask)

    def decode_step(self, tokens: Tensor, cache: DecoderCache) -> Tensor:
        """Logits (B, V) for the next token after `tokens` (B,), the previous step's output
        (<s> first); equals `decode`'s last position, at a fraction of the cost."""
        position = torch.full((tokens.size(0), 1), cache.length, device=tokens.device)
        x = self._embed(tokens[:, None], position)
        for layer, layer_cache in zip(self.decoder, cache.layers, strict=True):
            x = layer.step(x, layer_cache, cache.src_mask)
        cache.length += 1
        return (self.decoder_norm(x) @ self.embed.weight.T)[:, 0]

    def forward(self, src: Tensor, tgt_in: Tensor, src_positions: Tensor | None = None) -> Tensor:
        memory, mask = self.encode(src, src_positions)
        return self.decode(tgt_in, memory, mask)[0]

    def forward_batch(self, batch) -> tuple[Tensor, Tensor]:
        """Logits for a training batch, and an auxiliary loss (none here)."""
        return self(batch.src, batch.tgt_in, batch.positions), batch.src.new_zeros((),
                                                                                 dtype=torch.float)

    @torch.no_grad()
    def greedy(self, src: Tensor, bos: int, eos: int, max_len: int,
               prefix: list[list[int]] | None = None,
               src_positions: Tensor | None = None, **context: Tensor) -> list[list[int]]:
        """Plain greedy decoding (no KV cache); forced `prefix` tokens come first.
        `context` goes to `encode` (multi-encoder models).

        Returns generated ids after <s> (prefix included, eos excluded) per sentence.
        """
        memory, mask = self.encode(src, src_positions, **context)
        batch = src.size(0)
        prefix = prefix or [[] for _ in range(batch)]
        out: list[list[int]] = [[] for _ in range(batch)]
        done = [False] * batch
        tokens = torch.full((batch, 1), bos, dtype=torch.long, device=src.device)
        for step in range(max_len + max(map(len, prefix))):
            logits = self.decode(tokens, memory, mask)[0][:, -1]
            best = logits.argmax(-1).tolist()
            column = []
            for b in range(batch):
                if step < len(prefix[b]):
                    choice = prefix[b][step]
                else:
                    choice = best[b]
                    if choice == eos or step >= len(prefix[b]) + max_len:
                        done[b] = True
                if not done[b]:
                    out[b].append(choice)
                column.append(choice if not done[b] else self.cfg.pad_id)
            if all(done):
                break
            tokens = torch.cat([tokens, torch.tensor(column, device=src.device)[:, None]], 1)
        return out
