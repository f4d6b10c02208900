"""Label-smoothed cross-entropy with per-token weights (context-discounted loss, Lupo et al.
2022: weight CD on target-context tokens, 1 on the current sentence)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class LossOutput:
    loss: torch.Tensor  # what is optimised: weighted sum / current-sentence tokens
    nll_sum: float  # plain NLL summed over current-sentence tokens (for perplexity)
    correct: int  # argmax hits on current-sentence tokens
    tokens: int  # current-sentence tokens


def discounted_loss(logits: torch.Tensor, target: torch.Tensor, weights: torch.Tensor,
                    current: torch.Tensor, label_smoothing: float = 0.1) -> LossOutput:
    """logits (B, T, V), target (B, T), weights (B, T) with 0 on padding, current (B, T) bool:
    the current sentence's tokens (what NLL, accuracy and the normalisation count; a CD of 1
    weighs context tokens like current ones but does not make them current)."""
    lprobs = F.log_softmax(logits.float(), dim=-1)
    nll = -lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    smooth = -lprobs.mean(-1)
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * smooth
    tokens = int(current.sum())
    loss = (per_token * weights).sum() / max(tokens, 1)
    with torch.no_grad():
        nll_sum = float(nll[current].sum())
        correct = int((lprobs.argmax(-1) == target)[current].sum())
    return LossOutput(loss, nll_sum, correct, tokens)
