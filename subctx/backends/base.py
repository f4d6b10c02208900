"""What every serving backend does the same way: read the bundle, lay a request out as the
model's input (subctx.layout), turn beam-search hypotheses into translations (the current
sentence after the forced prefix, n-best alternatives with their log-probabilities, output
cleaned and never a loop), and score candidate translations. A backend adds only its search
and its scorer.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import sentencepiece as spm

from subctx import layout
from subctx.backends.output import clean, collapse_loop, loops
from subctx.bundle import Bundle, load_bundle
from subctx.contract import (
    BATCH_SIZE,
    MAX_SENTENCE_PIECES,
    AttentionMap,
    Hypothesis,
    Request,
    Translation,
    decoding_budget,
)
from subctx.errors import BundleError
from subctx.nn import architecture


@dataclass
class Prepared:
    """A request as model input, in SentencePiece pieces."""

    tokens: list[str]  # the encoder's: context <sep> ... current </s> (or current </s>)
    segments: list[int]  # each encoder token's segment (0 = the oldest context sentence)
    prefix: list[str]  # target-side context, forced before the translation
    budget: int  # most pieces the current sentence may get
    forced: list[str] = field(default_factory=list)  # the forced start of the translation
    context: list[str] = field(default_factory=list)  # separate-context models: <ctx> s </s> …
    distances: list[int] = field(default_factory=list)  # and each context token's distance

    @property
    def forced_length(self) -> int:
        """Tokens the decoder is given before it generates: the prefix and the forced start."""
        return len(self.prefix) + len(self.forced)


class Searched(NamedTuple):
    """One output of a search: its tokens (forced ones included, </s> not), its rank
    (`generated_score`) and whether it ended with </s> (else it ran to the length limit)."""

    tokens: list[str]
    score: float
    ended: bool = True


@dataclass
class Found:
    """What a search found for one request: its outputs, best first, and the best one's
    cross-attention rows over the encoder tokens (one row per output token) where asked and
    available."""

    hypotheses: list[Searched]
    attention: list[list[float]] | None = None
    context_attention: AttentionMap | None = None


def generated_score(log_prob: float, generated: int, length_penalty: float) -> float:
    """A hypothesis's rank: the log-probability of what was generated after the forced tokens,
    normalised by its own length (the same for a translation with and without a prefix)."""
    return log_prob / max(1, generated) ** length_penalty


class Backend(ABC):
    """A model bundle loaded for translation; subclasses search and score."""

    supports_forced_start = True  # Request.forced_start is honoured
    served_instead: str | None = None  # why another backend than the bundle's serves it

    def __init__(self, bundle: Bundle | str, device: str = "auto", threads: int = 0,
                 batch_size: int = BATCH_SIZE):
        self.batch_size = batch_size  # requests searched or scored together, unless a call says
        self.bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
        self.manifest = self.bundle.manifest
        self.architecture = architecture(self.manifest.architecture)
        self.tokens = self.manifest.special_tokens
        try:
            self.source_sp = spm.SentencePieceProcessor(
                model_file=str(self.bundle.file(self.manifest.source_spm)))
            self.target_sp = spm.SentencePieceProcessor(
                model_file=str(self.bundle.file(self.manifest.target_spm)))
        except (RuntimeError, OSError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load the tokenizer ({err})") from None

    # -- what callers ask ------------------------------------------------------------------------
    @property
    def max_context(self) -> int:
        return self.manifest.context.max_k

    @property
    def uses_target_context(self) -> bool:
        """Whether the previous translations are read (as a forced decoder prefix or in the
        encoder): then each cue's translation waits for its context's."""
        ctx = self.manifest.context
        return self.architecture.target_context and ctx.max_k > 0 and ctx.side.reads

    @property
    def _target_side(self) -> layout.TargetSide:
        """Where this model's input puts the previous translations ('none' where it reads
        none)."""
        return (self.manifest.context.side if self.uses_target_context
                else layout.TARGET_SIDES["none"])

    # -- input ---------------------------------------------------------------------------------
    def budget(self, pieces: int) -> int:
        """Most pieces the translation of a sentence of `pieces` pieces may get."""
        return decoding_budget(pieces)

    @staticmethod
    def _pieces(sp: spm.SentencePieceProcessor, text: str) -> list[str]:
        return sp.encode(text, out_type=str)[:MAX_SENTENCE_PIECES]

    def prepare(self, request: Request) -> Prepared:
        """Lay a request out as the architecture reads it (subctx.layout). Concatenated context
        is dropped, oldest first, until both sides fit the model's positions."""
        limit = self.manifest.max_positions
        sentence = self._pieces(self.source_sp, request.text)
        current = [*request.controls, *sentence][: limit - 1]
        forced = (self._pieces(self.target_sp, request.forced_start)
                  if request.forced_start else [])
        budget = self.budget(len(sentence))
        k = min(len(request.source_context), self.max_context)
        if self.architecture.separate_context:
            sentences = [self._pieces(self.source_sp, s) for s in
                         request.source_context[len(request.source_context) - k:]]
            context, distances = layout.separate_context(sentences, self.tokens.ctx_bos,
                                                         self.tokens.eos)
            return Prepared([*current, self.tokens.eos], [0] * (len(current) + 1), [], budget,
                            forced, context, distances)
        src_ctx = [self._pieces(self.source_sp, s) for s in request.source_context]
        tgt_ctx = [self._pieces(self.target_sp, t) for t in request.target_context]
        if self.uses_target_context:
            k = min(k, len(tgt_ctx))
        tokens, segments, prefix = layout.fit_context(
            src_ctx, tgt_ctx, current, k, self.tokens.sep, self.tokens.eos,
            self.manifest.context.segment_shift, limit, budget, self._target_side)
        return Prepared(tokens, segments, prefix, budget, forced)

    def _detok(self, pieces: list[str]) -> str:
        return clean(self.target_sp.decode_pieces(pieces).strip())

    # -- translating ---------------------------------------------------------------------------
    def translate(self, requests: Sequence[Request], beam_size: int = 4, num_hypotheses: int = 1,
                  return_attention: bool = False, max_batch_size: int | None = None
                  ) -> list[Translation]:
        """Translate requests (any order; each carries its own context). With
        `num_hypotheses` > 1 each translation lists the n-best with their log-probabilities
        (`_nbest`: the search's, else scored with its request)."""
        if not requests:
            return []
        prepared = [self.prepare(r) for r in requests]
        beam = max(beam_size, num_hypotheses)
        max_batch_size = max_batch_size or self.batch_size
        found = self._search(prepared, beam, num_hypotheses, return_attention, max_batch_size)
        out = [self._translation(p, f) for p, f in zip(prepared, found, strict=True)]
        # the n-best only where asked for: a plain call keeps the best alone
        nbest = ([self._nbest(p, f) for p, f in zip(prepared, found, strict=True)]
                 if num_hypotheses > 1 else None)
        looping = [i for i, t in enumerate(out) if loops(requests[i].text, t.text)]
        if looping:  # once more with every hypothesis of the beam, to find one that does not
            again = self._search([prepared[i] for i in looping], beam, beam, False,
                                 max_batch_size)
            for i, f in zip(looping, again, strict=True):
                texts = self._without_loop(requests[i], prepared[i], f, out[i])
                if nbest is not None:
                    nbest[i] = [(text, None) for text in texts]
        if nbest is not None:
            self._alternatives(requests, out, [n[:num_hypotheses] for n in nbest],
                               max_batch_size)
        return out

    def _current(self, output: list[str], prepared: Prepared) -> list[str]:
        return layout.current_part(output, len(prepared.prefix), self.tokens.sep)

    def _nbest(self, prepared: Prepared, found: Found) -> list[tuple[str, Hypothesis | None]]:
        """The hypotheses' translations, best first, each once, with the log-probability the
        search gave it where that is what `score` would give (None where it is not: a forced
        start, which `score` counts; an output cut at the length limit, which lacks </s>; a
        <sep> among the generated tokens, whose current part is shorter than what was
        generated)."""
        out: dict[str, Hypothesis | None] = {}
        penalty = self.manifest.length_penalty
        for h in found.hypotheses:
            current = self._current(h.tokens, prepared)
            text = self._detok(current)
            if text in out:
                continue
            generated = len(current) + 1  # and </s>
            exact = (not prepared.forced and h.ended and math.isfinite(h.score)
                     and len(prepared.prefix) + len(current) == len(h.tokens))
            out[text] = (Hypothesis(text, h.score * generated ** penalty, generated)
                         if exact else None)
        return list(out.items())

    def _translation(self, prepared: Prepared, found: Found) -> Translation:
        best = found.hypotheses[0]
        current = self._current(best.tokens, prepared)
        translation = Translation(self._detok(current), best.score)
        if found.attention:
            rows = found.attention[len(prepared.prefix):len(prepared.prefix) + len(current)]
            translation.attention = AttentionMap(prepared.tokens, current,
                                                 [list(row) for row in rows])
        translation.context_attention = found.context_attention
        return translation

    def _alternatives(self, requests: Sequence[Request], out: list[Translation],
                      nbest: list[list[tuple[str, Hypothesis | None]]], max_batch_size: int
                      ) -> None:
        """Each translation's alternatives: its n-best with the search's log-probabilities,
        those the search could not give scored with the request (one scoring call)."""
        missing = [(i, j) for i, hyps in enumerate(nbest) for j, (_, h) in enumerate(hyps)
                   if h is None]
        scored = self.score([requests[i] for i, _ in missing],
                            [nbest[i][j][0] for i, j in missing], max_batch_size=max_batch_size)
        filled = dict(zip(missing, scored, strict=True))
        for i, translation in enumerate(out):
            translation.alternatives = [h if h is not None else filled[(i, j)]
                                        for j, (_, h) in enumerate(nbest[i])]

    def _without_loop(self, request: Request, prepared: Prepared, found: Found,
                      translation: Translation) -> list[str]:
        """Make `translation` the best hypothesis that does not loop (with its score), else
        the best with its loop cut down; returns the n-best without loops, the chosen first."""
        hypotheses = [(self._detok(self._current(h.tokens, prepared)), h.score)
                      for h in found.hypotheses]
        fine = [(t, score) for t, score in hypotheses if t and not loops(request.text, t)]
        if fine:
            translation.text, translation.score = fine[0]
        else:
            translation.text = collapse_loop(request.text, translation.text)
        return list(dict.fromkeys([translation.text, *(t for t, _ in fine)]))

    def score(self, requests: Sequence[Request], candidates: Sequence[str],
              max_batch_size: int | None = None) -> list[Hypothesis]:
        """Log-probability of each candidate as the translation of its request's sentence,
        with the context forced as at translation time (only the current part is scored)."""
        prepared = [self.prepare(r) for r in requests]
        room = self.manifest.max_positions - 2  # <s> and </s> take positions too
        targets = [(p.prefix + self._pieces(self.target_sp, c))[:room]
                   for p, c in zip(prepared, candidates, strict=True)]
        scored = self._score(prepared, targets, max_batch_size or self.batch_size)
        return [Hypothesis(c, log_prob, tokens)
                for c, (log_prob, tokens) in zip(candidates, scored, strict=True)]

    # -- what a backend adds -------------------------------------------------------------------
    @abstractmethod
    def _search(self, batch: list[Prepared], beam: int, num_hypotheses: int, attention: bool,
                max_batch_size: int) -> list[Found]:
        """Beam search: for each input at least its best hypothesis (`num_hypotheses` where more
        are asked), ranked by `generated_score`; forced tokens start every output."""

    @abstractmethod
    def _score(self, batch: list[Prepared], targets: list[list[str]], max_batch_size: int
               ) -> list[tuple[float, int]]:
        """Each target's log-probability after its prefix (its prefix forced, not counted) and
        </s>, and how many tokens that sums over."""
