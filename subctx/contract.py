"""What training and both serving backends share: the request and translation types, the
`Translator` interface the app drives, special token ids and the sentence length limit.

The input layouts themselves live in subctx.layout (also shared); what each architecture is
(network class, backend, how it reads context) is registered once, in subctx.nn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

# longest sentence, in SentencePiece pieces, that training keeps and serving encodes (the app
# splits long cues into sentences well before this)
MAX_SENTENCE_PIECES = 256
# requests a backend decodes together (and blocks the default schedule advances side by side):
# 64 decodes the 1,344-cue dev film in 0.86x the time of 32 on 2 CPU cores, with identical
# output; 128 is no faster (docs/decoding.md, "Speed")
BATCH_SIZE = 64



def decoding_budget(source_pieces: int) -> int:
    """Most pieces a translation of a sentence this long may get (Russian runs longer than
    English); both backends stop there."""
    return 2 * source_pieces + 10


@dataclass(frozen=True)
class Request:
    """A sentence to translate, with context sentences (oldest first) on both sides."""

    text: str
    source_context: tuple[str, ...] = ()
    target_context: tuple[str, ...] = ()
    # the start of the translation, forced (the review's variants: the model writes the rest,
    # so that verbs and adjectives agree with a flipped pronoun); backends that cannot force
    # it say so with `supports_forced_start = False`
    forced_start: str = ""
    # control tag pieces (subctx.controls: '<frm>', '<fem>'...) put before the sentence's own
    # pieces, as the model saw them in training; only for a model whose manifest lists them
    controls: tuple[str, ...] = ()


@dataclass
class Hypothesis:
    text: str
    log_prob: float  # sum over the current sentence's tokens (and </s>) of log p
    tokens: int = 1  # how many tokens that sum is over (for per-token comparisons)

    @property
    def probability(self) -> float:
        return math.exp(self.log_prob)


@dataclass
class AttentionMap:
    """Cross-attention of the generated current-sentence tokens over all encoder tokens."""

    source_tokens: list[str]
    target_tokens: list[str]
    weights: list[list[float]]  # [target token][source token]


@dataclass(frozen=True)
class Fallback:
    """Why a cue was given its translation without context instead of the one made with it."""

    reason: str
    broken: bool = True  # the context translation failed a check (not merely out of scope)

    def __str__(self) -> str:
        return self.reason


@dataclass
class Translation:
    text: str
    score: float  # CTranslate2's length-normalised log-probability of the best hypothesis
    alternatives: list[Hypothesis] = field(default_factory=list)
    attention: AttentionMap | None = None
    # models with a separate context encoder: the current sentence's tokens (as target_tokens)
    # attending over the context tokens (as source_tokens)
    context_attention: AttentionMap | None = None
    # set when the context translation was replaced by the one without context (the context
    # scope, subctx.decoding.scope, or the guard, subctx.guard)
    fallback: Fallback | None = None


class Translator(Protocol):
    """What the decoder, the evaluators and the review session need from a backend
    (subctx.backends): how much context it reads, translation and scoring."""

    max_context: int  # most previous sentences the model reads
    uses_target_context: bool  # it reads the previous translations (so they come first)
    supports_forced_start: bool  # Request.forced_start is honoured

    def translate(self, requests: Sequence[Request], beam_size: int = 4,
                  num_hypotheses: int = 1, return_attention: bool = False
                  ) -> list[Translation]: ...

    def score(self, requests: Sequence[Request], candidates: Sequence[str]
              ) -> list[Hypothesis]: ...


@dataclass(frozen=True)
class SpecialTokens:
    bos: str = "<s>"
    eos: str = "</s>"
    unk: str = "<unk>"
    pad: str = "<pad>"
    sep: str = "<sep>"
    ctx_bos: str = "<ctx>"
    bt_tag: str = "<bt>"  # starts synthetic (back-translated) sources; never at inference
    # control tags (subctx.controls): a source may start with them to ask for ты / вы and for
    # the speaker's gender; a model knows those its manifest lists in `controls`, whatever
    # pieces are named here
    informal_tag: str = "<inf>"
    formal_tag: str = "<frm>"
    masculine_tag: str = "<masc>"
    feminine_tag: str = "<fem>"


@dataclass(frozen=True)
class SpecialIds:
    """Special token ids, read from a SentencePiece model (never assumed)."""

    pad: int
    unk: int
    bos: int
    eos: int
    sep: int
    ctx_bos: int
    bt_tag: int | None  # None in tokenizers made before tagged back-translation

    @classmethod
    def of(cls, sp, tokens: SpecialTokens | None = None) -> SpecialIds:
        """Ids from a SentencePieceProcessor; a missing layout piece is an error."""
        tokens = tokens or SpecialTokens()

        def piece(name: str) -> int:
            i = sp.piece_to_id(name)
            if i == sp.unk_id() and name != tokens.unk:
                raise ValueError(f"the tokenizer has no {name} piece")
            return i

        tag = sp.piece_to_id(tokens.bt_tag)
        return cls(pad=sp.pad_id(), unk=sp.unk_id(), bos=sp.bos_id(), eos=sp.eos_id(),
                   sep=piece(tokens.sep), ctx_bos=piece(tokens.ctx_bos),
                   bt_tag=None if tag == sp.unk_id() else tag)
