"""The translation engine: a model bundle driven through SentencePiece and CTranslate2.

It translates *requests* (a sentence plus its context on both sides) in batches, lays the input
out as the bundle's manifest says (subctx.layout), and returns text, scores and, on request,
n-best alternatives with their probabilities and cross-attention.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sentencepiece as spm

from subctx import layout
from subctx.bundle import Bundle, load_bundle
from subctx.contract import (
    MAX_SENTENCE_PIECES,
    AttentionMap,
    Hypothesis,
    Request,
    Translation,
    decoding_budget,
)
from subctx.errors import BundleError

__all__ = ["AttentionMap", "Engine", "Hypothesis", "Request", "Translation", "open_engine"]


@dataclass
class Prepared:
    """A request as model input: CTranslate2 source, plain encoder tokens, forced target
    prefix, and the decoding length the current sentence may use."""

    source: list[str]
    tokens: list[str]
    prefix: list[str]  # the target-side context
    budget: int
    forced: list[str] = field(default_factory=list)  # the forced start of the translation


def resolve_device(device: str) -> str:
    try:  # here, not above: a machine without it still serves torch bundles
        import ctranslate2
    except ImportError:
        raise BundleError("this model runs on CTranslate2: pip install ctranslate2") from None
    if device == "auto":
        return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    if device not in ("cpu", "cuda"):
        raise BundleError(f"unknown device '{device}' (use auto, cpu or cuda)")
    if device == "cuda" and ctranslate2.get_cuda_device_count() == 0:
        raise BundleError("--device cuda: no CUDA device is available")
    return device


class Engine:
    """Loads a bundle once and translates batches of requests."""

    supports_forced_start = True

    def __init__(self, bundle: Bundle | str | Path, device: str = "auto",
                 compute_type: str = "auto", threads: int = 0):
        self.bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
        manifest = self.bundle.manifest
        if manifest.backend != "ctranslate2":
            raise BundleError(f"backend '{manifest.backend}' is not supported by this engine")
        self.manifest = manifest
        self.tokens = manifest.special_tokens
        self.device = resolve_device(device)
        if compute_type == "auto":
            compute_type = "int8" if self.device == "cpu" else "int8_float16"
        threads = threads or min(8, os.cpu_count() or 1)
        try:
            self.source_sp = spm.SentencePieceProcessor(
                model_file=str(self.bundle.file(manifest.source_spm)))
            self.target_sp = spm.SentencePieceProcessor(
                model_file=str(self.bundle.file(manifest.target_spm)))
            import ctranslate2

            self.translator = ctranslate2.Translator(
                str(self.bundle.path), device=self.device, compute_type=compute_type,
                intra_threads=threads, inter_threads=1)
        except (RuntimeError, OSError, ValueError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load model ({err})") from None

    @property
    def max_context(self) -> int:
        return self.manifest.context.max_k

    @property
    def uses_target_context(self) -> bool:
        return self.manifest.context.max_k > 0 and self.manifest.context.target_side == "prefix"

    # -- input layout -------------------------------------------------------------------------
    def _pieces(self, sp: spm.SentencePieceProcessor, text: str) -> list[str]:
        return sp.encode(text, out_type=str)[:MAX_SENTENCE_PIECES]

    def _inputs(self, request: Request) -> Prepared:
        """Lay a request out as model input (see subctx.layout).

        Context is dropped, oldest first, until both sides fit the model's positions.
        """
        limit = self.manifest.max_positions
        current = self._pieces(self.source_sp, request.text)[: limit - 1]
        src_ctx = [self._pieces(self.source_sp, s) for s in request.source_context]
        tgt_ctx = [self._pieces(self.target_sp, t) for t in request.target_context]
        k = min(len(src_ctx), self.max_context)
        if self.uses_target_context:
            k = min(k, len(tgt_ctx))
        budget = self._budget(current)
        tokens, segments, prefix = layout.fit_context(
            src_ctx, tgt_ctx, current, k, self.tokens.sep, self.tokens.eos,
            self.manifest.context.segment_shift, limit, budget, self.uses_target_context)
        forced = (self._pieces(self.target_sp, request.forced_start)
                  if request.forced_start else [])
        return Prepared(layout.ct2_source(tokens, segments, self.manifest.context), tokens,
                        prefix, budget, forced)

    @staticmethod
    def _budget(current: list[str]) -> int:
        return decoding_budget(len(current))

    def _detok(self, pieces: list[str]) -> str:
        return self.target_sp.decode_pieces(pieces).strip()

    # -- public API ---------------------------------------------------------------------------
    def translate(self, requests: Sequence[Request], beam_size: int = 4, num_hypotheses: int = 1,
                  return_attention: bool = False, max_batch_size: int = 32) -> list[Translation]:
        """Translate requests (any order; each carries its own context)."""
        if not requests:
            return []
        inputs = [self._inputs(r) for r in requests]
        longest_prefix = max(len(p.prefix) + len(p.forced) for p in inputs)
        # CTranslate2 counts the forced prefix in max_decoding_length: the current sentence
        # gets its whole budget after the prefix (`_inputs` made sure both fit the positions).
        decode_len = max(1, min(self.manifest.max_positions - 1,
                                max(len(p.prefix) + len(p.forced) + p.budget for p in inputs)))
        beam = max(beam_size, num_hypotheses)
        results = self.translator.translate_batch(
            [p.source for p in inputs],
            target_prefix=([(p.prefix + p.forced) or None for p in inputs] if longest_prefix
                           else None),
            # with a forced prefix every finished hypothesis comes back, to be ranked by the
            # current sentence's own score (see _rank_after_prefix)
            beam_size=beam, num_hypotheses=beam if longest_prefix else num_hypotheses,
            return_scores=True, return_attention=return_attention,
            max_batch_size=max_batch_size, max_input_length=0,
            max_decoding_length=decode_len,
            length_penalty=self.manifest.length_penalty,
            disable_unk=True,  # never '⁇' in a subtitle (byte-fallback vocabularies need no unk)
        )
        out = []
        for request, prepared, result in zip(requests, inputs, results, strict=True):
            prefix = prepared.prefix
            hypotheses, scores = self._rank_after_prefix(
                result.hypotheses, result.scores, len(prefix) + len(prepared.forced), decode_len)
            hypotheses, scores = hypotheses[:num_hypotheses], scores[:num_hypotheses]
            currents = [layout.current_part(h, len(prefix), self.tokens.sep)
                        for h in hypotheses]
            translation = Translation(self._detok(currents[0]), scores[0])
            if num_hypotheses > 1:
                texts = list(dict.fromkeys(self._detok(c) for c in currents))
                translation.alternatives = self.score(
                    [request] * len(texts), texts, max_batch_size=max_batch_size)
            if return_attention and result.attention:
                rows = result.attention[0][len(prefix):len(prefix) + len(currents[0])]
                translation.attention = AttentionMap(prepared.tokens, currents[0],
                                                     [list(row) for row in rows])
            out.append(translation)
        return out

    def _rank_after_prefix(self, hypotheses: list[list[str]], scores: list[float],
                           forced: int, max_length: int
                           ) -> tuple[list[list[str]], list[float]]:
        """Hypotheses ranked by what was generated after the forced tokens alone.

        CTranslate2 scores a hypothesis that follows a forced prefix by the log-probability of
        the generated tokens divided by the length of the *whole* sequence (prefix included),
        so the longer the previous translation, the closer the ranking comes to a plain sum of
        log-probabilities, which favours short outputs: context translations came out shorter
        than plain ones (friends_dev: 2.3 % fewer characters), words dropped. Each score is
        turned back into the generated tokens' log-probability and normalised by their own
        length, as a translation without context is."""
        if not forced:
            return hypotheses, scores
        penalty = self.manifest.length_penalty
        ranked = []
        for tokens, score in zip(hypotheses, scores, strict=True):
            length = len(tokens) + (len(tokens) < max_length)  # </s> counts, when it came
            log_prob = score * length ** penalty
            ranked.append((log_prob / max(1, length - forced) ** penalty, tokens))
        ranked.sort(key=lambda pair: -pair[0])
        return [t for _, t in ranked], [s for s, _ in ranked]

    def score(self, requests: Sequence[Request], candidates: Sequence[str],
              max_batch_size: int = 32) -> list[Hypothesis]:
        """Log-probability of each candidate as the translation of its request's sentence,
        with the context forced as at translation time (only the current part is scored)."""
        inputs = [self._inputs(r) for r in requests]
        room = self.manifest.max_positions - 2  # <s> and </s> take positions too
        targets = [(p.prefix + self._pieces(self.target_sp, c))[:room]
                   for p, c in zip(inputs, candidates, strict=True)]
        out = []
        # score_batch's offset is per call: group requests by prefix length.
        by_offset: dict[int, list[int]] = {}
        for i, p in enumerate(inputs):
            by_offset.setdefault(len(p.prefix), []).append(i)
        scored: dict[int, tuple[float, int]] = {}
        for offset, idx in by_offset.items():
            results = self.translator.score_batch(
                [inputs[i].source for i in idx], [targets[i] for i in idx], offset=offset,
                max_batch_size=max_batch_size, max_input_length=0)
            for i, res in zip(idx, results, strict=True):
                scored[i] = float(sum(res.log_probs)), len(res.log_probs)
        for i, candidate in enumerate(candidates):
            out.append(Hypothesis(candidate, *scored[i]))
        return out


def open_engine(bundle: Bundle | str | Path, device: str = "auto", compute_type: str = "auto",
                threads: int = 0):
    """The engine a bundle's manifest asks for: CTranslate2, or PyTorch for the architectures
    CTranslate2 cannot run."""
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    if bundle.manifest.backend == "torch":
        from subctx.torch_backend import TorchEngine

        return TorchEngine(bundle, device=device, threads=threads)
    return Engine(bundle, device=device, compute_type=compute_type, threads=threads)
