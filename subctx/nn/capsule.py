"""The query-guided capsule network of Yang et al. 2019 ("Enhancing context modeling with a
query-guided capsule network for document-level translation").

It reuses the Transformer's embeddings, positions and decoder (subctx.nn.transformer); context
arrives apart from the source (subctx.layout.separate_context): `ctx` = <ctx> s_k </s> ... s_1 </s>,
`ctx_dist` = each token's sentence distance (0 for <ctx>). The paper text we have lost its
equations; these are the ones implemented, with our choices marked (*):
    input capsules   u_i = W_u [e_i ; onehot(dist_i)]          e_i: context word embedding (*)
    predictions      û_{j|i} = W_j u_i                          j = 1..J output capsules (J=4)
    query            q_j^(0) = W_q mean_t(e_t^src)  for all j   (source embeddings, tiled) (*)
    routing, r = 1..R (R=4), logits b_ij^(1) = 0:
        c_ij = softmax_j(b_ij)
        v_j  = squash(sum_i c_ij û_{j|i}) + q_j^(r)
        b_ij += (û_{j|i} · v_j) / sqrt(d)  +  pearson(û_{j|i}, q_j^(r))     (*scale 1/sqrt(d))
        q_j^(r+1) = v_j                                          (*query updated to v_j)
    squash(s) = |s|^2 / (1 + |s|^2) * s / |s|
    every encoder layer: x = x + SelfAttn(LN(x)); x = x + Attn(LN(x), v_1..J); x = x + FFN(LN(x))
    regulariser: plain capsule networks (same routing, no query, no distance) over the source
    embeddings and over the target (decoder input) embeddings give V^src, V^tgt;
        L_reg = 1 - mean_j pearson(V^src_j, V^tgt_j),   loss = L_NMT + lambda * L_reg  (lambda
    = 0.1 *). The regulariser only shapes training; decoding does not use it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from subctx.nn.transformer import DecoderLayer, ModelConfig, Transformer

MAX_DISTANCE = 3  # sentence distances beyond this share one input feature


def squash(s: Tensor, dim: int = -1, eps: float = 1e-8) -> Tensor:
    norm2 = (s * s).sum(dim, keepdim=True)
    return norm2 / (1.0 + norm2) * s / torch.sqrt(norm2 + eps)


def pearson(a: Tensor, b: Tensor, dim: int = -1, eps: float = 1e-8) -> Tensor:
    a = a - a.mean(dim, keepdim=True)
    b = b - b.mean(dim, keepdim=True)
    return (a * b).sum(dim) / (a.norm(dim=dim) * b.norm(dim=dim) + eps)


class Routing(nn.Module):
    """Dynamic routing from input capsules to `n_out` output capsules, optionally query-guided."""

    def __init__(self, d_in: int, d: int, n_out: int, iterations: int, guided: bool,
                 bias: bool = True):
        super().__init__()
        self.n_out, self.iterations, self.guided, self.d = n_out, iterations, guided, d
        self.inputs = nn.Linear(d_in, d, bias=bias)
        self.predict = nn.Linear(d, n_out * d, bias=False)
        self.query = nn.Linear(d, d) if guided else None

    def forward(self, words: Tensor, mask: Tensor, query: Tensor | None = None
                ) -> tuple[Tensor, Tensor]:
        """words (B, W, d_in), mask (B, W) True for real words, query (B, d).
        Returns output capsules (B, J, d) and coupling coefficients (B, W, J)."""
        b_size, w = words.shape[:2]
        u = self.inputs(words)
        u_hat = self.predict(u).view(b_size, w, self.n_out, self.d)
        q = None
        if self.guided:
            assert query is not None and self.query is not None
            q = self.query(query)[:, None, :].expand(b_size, self.n_out, self.d)
        logits = u_hat.new_zeros(b_size, w, self.n_out)
        keep = mask[..., None].to(u_hat.dtype)
        for r in range(self.iterations):
            coupling = logits.softmax(-1) * keep
            v = squash((coupling[..., None] * u_hat).sum(1))
            if q is not None:
                v = v + q
            if r == self.iterations - 1:
                break
            agreement = (u_hat * v[:, None]).sum(-1) / math.sqrt(self.d)
            if q is not None:
                agreement = agreement + pearson(u_hat, q[:, None].expand_as(u_hat))
                q = v
            logits = logits + agreement
        return v, coupling


class CapsuleTransformer(Transformer):
    """Yang et al. 2019: a query-guided capsule network summarises the context words into J
    capsules that every encoder layer attends to; plus the Pearson regulariser."""

    def __init__(self, cfg: ModelConfig, n_capsules: int = 4, iterations: int = 4,
                 reg_weight: float = 0.1):
        super().__init__(cfg)
        d = cfg.d_model
        # self-attention, attention over the capsules, FFN: a decoder layer's shape, used with a
        # non-causal mask
        self.encoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.capsules = Routing(d + MAX_DISTANCE + 1, d, n_capsules, iterations, guided=True)
        # the regulariser's capsule network, shared by source and target (see the module doc)
        self.plain = Routing(d, d, n_capsules, iterations, guided=False, bias=False)
        self.reg_weight = reg_weight

    def _words(self, ids: Tensor) -> Tensor:
        return self.embed(ids) * math.sqrt(self.cfg.d_model)

    def encode(self, src: Tensor, src_positions: Tensor | None = None, ctx: Tensor | None = None,
               ctx_dist: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if ctx is None or ctx_dist is None:
            raise ValueError("the capsule model needs `ctx` and `ctx_dist`")
        mask = (src != self.cfg.pad_id)[:, None, None, :]
        src_keep = (src != self.cfg.pad_id).float()
        query = (self._words(src) * src_keep[..., None]).sum(1) / src_keep.sum(1, keepdim=True)
        distance = F.one_hot(ctx_dist.clamp(0, MAX_DISTANCE), MAX_DISTANCE + 1).float()
        words = torch.cat([self._words(ctx), distance], dim=-1)
        capsules, _ = self.capsules(words, ctx != self.cfg.pad_id, query)
        x = self._embed(src, src_positions)
        for layer in self.encoder:
            x = layer(x, capsules, mask, None)[0]
        return self.encoder_norm(x), mask

    def regulariser(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """1 - the mean correlation, across the batch, of the source's and the target's
        capsule features (0 for a batch of one sentence: nothing to correlate)."""
        if src.size(0) < 2:
            return src.new_zeros((), dtype=torch.float32)
        v_src, _ = self.plain(self._words(src), src != self.cfg.pad_id)
        v_tgt, _ = self.plain(self._words(tgt_in), tgt_in != self.cfg.pad_id)
        return 1.0 - pearson(v_src.flatten(1), v_tgt.flatten(1), dim=0).mean()

    def forward_batch(self, batch) -> tuple[Tensor, Tensor]:
        memory, mask = self.encode(batch.src, batch.positions, batch.ctx, batch.ctx_dist)
        logits = self.decode(batch.tgt_in, memory, mask)[0]
        aux = self.reg_weight * self.regulariser(batch.src, batch.tgt_in) if self.training \
            else memory.new_zeros(())
        return logits, aux
