"""The model architectures: one registry from a name (as a manifest or a training config
states it) to what that architecture is.

Importing this registry imports no torch: the app reads it to choose a backend and to lay out a
request; the network classes (subctx.nn.transformer, .context_encoder, .capsule) are imported
only when a model is built, by the PyTorch backend or the trainer.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from subctx.registry import lookup


@dataclass(frozen=True)
class Architecture:
    """What an architecture is, wherever it is trained, exported or served.

    model: the network class, "module:Class", imported on use.
    backend: the serving backend it is exported for ("ctranslate2" or "torch"; the PyTorch
        backend runs every architecture, CTranslate2 only one encoder over one sequence).
    separate_context: context goes through an encoder of its own (<ctx> s_k </s> ... with
        sentence distances) instead of being concatenated before the sentence.
    target_context: it can read the previous translations as a forced decoder prefix.
    segment_shift: it can shift encoder positions by segment.
    max_k: the context size the architecture fixes (None: the training config's).
    k_probs: the K mix it trains on when the config gives none that fits `max_k`.
    card: the model card's words for it ({cd_weight} and {positions} are filled in).
    """

    name: str
    model: str
    backend: str
    card: str
    separate_context: bool = False
    target_context: bool = False
    segment_shift: bool = False
    max_k: int | None = None
    k_probs: tuple[float, ...] = ()

    def model_class(self) -> Any:
        module, name = self.model.split(":")
        return getattr(import_module(module), name)

    def build(self, config: Any) -> Any:
        """A fresh network of this architecture for a subctx.nn.config.ModelConfig."""
        return self.model_class()(config)


ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in (
    Architecture("transformer", "subctx.nn.transformer:Transformer", "ctranslate2",
                 "sentence-level Transformer (no context)", max_k=0, k_probs=(1.0,)),
    Architecture("concat", "subctx.nn.transformer:Transformer", "ctranslate2",
                 "concatenation model (Lupo et al. 2022): context sentences concatenated on "
                 "both sides, context-discounted loss (CD = {cd_weight}), {positions}",
                 target_context=True, segment_shift=True),
    Architecture("context_encoder", "subctx.nn.context_encoder:ContextEncoderTransformer",
                 "torch", "context-aware encoder (Voita et al. 2018): shared first N-1 "
                 "encoder layers, gated attention to the previous sentence; served with PyTorch",
                 separate_context=True, max_k=1, k_probs=(0.2, 0.8)),
    Architecture("capsule", "subctx.nn.capsule:CapsuleTransformer", "torch",
                 "query-guided capsule network (Yang et al. 2019) over up to 3 previous "
                 "sentences; served with PyTorch", separate_context=True),
)}


def architecture(name: str) -> Architecture:
    """The registered architecture of this name; ValueError listing the names otherwise."""
    return lookup(ARCHITECTURES, name, "architecture")
