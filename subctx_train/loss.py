"""Label-smoothed cross-entropy with per-token weights (context-discounted loss, Lupo et al.
2022: weight CD on target-context tokens, 1 on the current sentence)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class LossTerms:
    """One step's loss and metrics, left on the device: reading them is a host sync, which the
    trainer does once per record (`log_every`), not per step."""

    loss: torch.Tensor  # what is optimised: weighted sum / current-sentence tokens
    nll_sum: torch.Tensor  # 0-dim: plain NLL summed over current-sentence tokens
    correct: torch.Tensor  # 0-dim: argmax hits on current-sentence tokens
    tokens: int  # current-sentence tokens (known on the host)


@dataclass
class LossOutput:
    loss: torch.Tensor  # what is optimised: weighted sum / current-sentence tokens
    nll_sum: float  # plain NLL summed over current-sentence tokens (for perplexity)
    correct: int  # argmax hits on current-sentence tokens
    tokens: int  # current-sentence tokens


def loss_terms(logits: torch.Tensor, target: torch.Tensor, weights: torch.Tensor,
               current: torch.Tensor, label_smoothing: float = 0.1,
               current_index: torch.Tensor | None = None) -> LossTerms:
    """logits (B, T, V), target (B, T), weights (B, T) with 0 on padding, current (B, T) bool:
    the current sentence's tokens (what NLL, accuracy and the normalisation count; a CD of 1
    weighs context tokens like current ones but does not make them current).

    `current_index`: the flat positions of `current` (Batch.current_index, made on the host),
    so that nothing here waits for the device: the token count is its length, and the NLL and
    hits are summed over the same elements, in the same order, as a boolean mask would take
    them (identical sums). Without it the mask is read from the device (a sync)."""
    lprobs = F.log_softmax(logits.float(), dim=-1)
    nll = -lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    smooth = -lprobs.mean(-1)
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * smooth
    if current_index is None:
        current_index = current.reshape(-1).nonzero().squeeze(-1)  # a host sync
    tokens = current_index.numel()
    loss = (per_token * weights).sum() / max(tokens, 1)
    with torch.no_grad():
        nll_sum = nll.reshape(-1).index_select(0, current_index).sum()
        hits = (lprobs.argmax(-1) == target).reshape(-1).index_select(0, current_index)
        correct = hits.sum()
    return LossTerms(loss, nll_sum, correct, tokens)


def discounted_loss(logits: torch.Tensor, target: torch.Tensor, weights: torch.Tensor,
                    current: torch.Tensor, label_smoothing: float = 0.1,
                    current_index: torch.Tensor | None = None) -> LossOutput:
    """`loss_terms` with the metrics read on the host (evaluation, tests)."""
    terms = loss_terms(logits, target, weights, current, label_smoothing, current_index)
    return LossOutput(terms.loss, float(terms.nll_sum), int(terms.correct), terms.tokens)
