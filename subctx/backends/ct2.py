"""The CTranslate2 backend: the Transformer and concatenation models, int8 on CPU by default.

Encoder-side segment-shifted positions travel as a second source stream of position tokens
(subctx.layout.ct2_source); the target-side context is CTranslate2's forced target prefix.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from subctx import layout
from subctx.backends.base import Backend, Found, Prepared, Searched, generated_score
from subctx.backends.output import collapse_loop, loops
from subctx.bundle import Bundle
from subctx.contract import BATCH_SIZE, Request, Translation
from subctx.errors import BundleError


class CTranslate2Missing(BundleError):
    """ctranslate2 is not installed (PyTorch may serve the bundle instead)."""


def _ctranslate2():
    try:  # here, not at the top: a machine without it still serves torch bundles
        import ctranslate2
    except ImportError:
        raise CTranslate2Missing("this model runs on CTranslate2: pip install ctranslate2"
                                 ) from None
    return ctranslate2


def resolve_device(device: str) -> str:
    """'auto' -> 'cuda' where CTranslate2 sees a GPU, else 'cpu'; a missing GPU is an error."""
    ctranslate2 = _ctranslate2()
    if device == "auto":
        return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
    if device not in ("cpu", "cuda"):
        raise BundleError(f"unknown device '{device}' (use auto, cpu or cuda)")
    if device == "cuda" and ctranslate2.get_cuda_device_count() == 0:
        raise BundleError("--device cuda: no CUDA device is available")
    return device


DRAW_SEED = 1  # what `sample` draws from: CTranslate2 seeds its threads as a model loads


class CTranslate2Backend(Backend):
    """A bundle with backend 'ctranslate2', loaded once."""

    def __init__(self, bundle: Bundle | str, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0, batch_size: int = BATCH_SIZE):
        super().__init__(bundle, batch_size=batch_size)
        if self.manifest.backend != "ctranslate2":
            raise BundleError(f"backend '{self.manifest.backend}' is not a CTranslate2 model")
        self.device = resolve_device(device)
        if compute_type == "auto":
            compute_type = "int8" if self.device == "cpu" else "int8_float16"
        try:
            _ctranslate2().set_random_seed(DRAW_SEED)  # the worker threads' generators
            self.translator = _ctranslate2().Translator(
                str(self.bundle.path), device=self.device, compute_type=compute_type,
                intra_threads=threads or min(8, os.cpu_count() or 1), inter_threads=1)
        except (RuntimeError, OSError, ValueError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load model ({err})") from None

    def _source(self, prepared: Prepared) -> list[str]:
        return layout.ct2_source(prepared.tokens, prepared.segments,
                                 self.manifest.context.segment_shift)

    def _inputs(self, batch: list[Prepared]) -> dict:
        """translate_batch's inputs for prepared requests, whatever the search: sources,
        forced target tokens (None where no request has any) and max_decoding_length, which
        counts the forced tokens in CTranslate2: the current sentence gets its whole budget
        after them (`prepare` made sure both fit the positions)."""
        forced = max(p.forced_length for p in batch)
        return {"source": [self._source(p) for p in batch],
                "target_prefix": [(p.prefix + p.forced) or None for p in batch]
                if forced else None,
                "max_decoding_length": max(1, min(self.manifest.max_positions - 1,
                                                  max(p.forced_length + p.budget
                                                      for p in batch))),
                "max_input_length": 0,
                "disable_unk": True}  # never '⁇' in a subtitle (byte fallback needs no unk)

    def _search(self, batch: list[Prepared], beam: int, num_hypotheses: int, attention: bool,
                max_batch_size: int) -> list[Found]:
        inputs = self._inputs(batch)
        forced, length = inputs["target_prefix"] is not None, inputs["max_decoding_length"]
        results = self.translator.translate_batch(
            **inputs,
            # after forced tokens, every finished hypothesis comes back, to be ranked by what
            # was generated (see _ranked)
            beam_size=beam, num_hypotheses=beam if forced else num_hypotheses,
            return_scores=True, return_attention=attention, max_batch_size=max_batch_size,
            length_penalty=self.manifest.length_penalty)
        found = []
        for prepared, result in zip(batch, results, strict=True):
            ranked = self._ranked(result, prepared.forced_length, length)
            # an output as long as the limit was cut there (a loop), not ended with </s>
            hypotheses = [Searched(result.hypotheses[i], score,
                                   len(result.hypotheses[i]) < length) for i, score in ranked]
            best_attention = result.attention[ranked[0][0]] if result.attention else None
            found.append(Found(hypotheses, best_attention))
        return found

    def sample(self, requests: Sequence[Request], top_k: int = 0, temperature: float = 1.0,
               max_batch_size: int | None = None, seed: int | None = None
               ) -> list[Translation]:
        """One translation per request drawn from the model (`top_k` > 0: from its k most
        likely tokens at each step; 0: the whole distribution), as the PyTorch backend's
        `sample` draws them for sampled back-translation (Edunov et al. 2018); forced tokens
        come first, a translation that loops is cut down. `seed` cannot steer a call here:
        CTranslate2 seeds each worker thread's generator once, as the model loads (from
        DRAW_SEED), so a process that makes the same calls draws the same, and a resumed
        run draws anew."""
        if not requests:
            return []
        prepared = [self.prepare(r) for r in requests]
        results = self.translator.translate_batch(
            **self._inputs(prepared), beam_size=1, sampling_topk=top_k,
            sampling_temperature=temperature, return_scores=True,
            max_batch_size=max_batch_size or self.batch_size)
        out = []
        for request, p, result in zip(requests, prepared, results, strict=True):
            text = self._detok(self._current(result.hypotheses[0], p))
            if loops(request.text, text):
                text = collapse_loop(request.text, text)
            out.append(Translation(text, result.scores[0]))
        return out

    def _ranked(self, result, forced: int, max_length: int) -> list[tuple[int, float]]:
        """(hypothesis index, score), best first, ranked by what was generated after the forced
        tokens alone.

        CTranslate2 scores a hypothesis that follows a forced prefix by the log-probability of
        the generated tokens divided by the length of the *whole* sequence (prefix included),
        so the longer the previous translation, the closer the ranking comes to a plain sum of
        log-probabilities, which favours short outputs: context translations came out shorter
        than plain ones (friends_dev: 2.3 % fewer characters), words dropped. Each score is
        turned back into the generated tokens' log-probability and normalised by their own
        length, as a translation without context is."""
        if not forced:
            return list(enumerate(result.scores))
        penalty = self.manifest.length_penalty
        ranked = []
        for i, (tokens, score) in enumerate(zip(result.hypotheses, result.scores, strict=True)):
            length = len(tokens) + (len(tokens) < max_length)  # </s> counts, when it came
            ranked.append((i, generated_score(score * length ** penalty, length - forced,
                                              penalty)))
        return sorted(ranked, key=lambda pair: -pair[1])

    def _score(self, batch: list[Prepared], targets: list[list[str]], max_batch_size: int
               ) -> list[tuple[float, int]]:
        """One call for the whole batch: score_batch's `offset` is one number per call, so
        every token is scored and each target's prefix is left out of its sum here (grouping
        the requests by prefix length made calls of a few targets each)."""
        results = self.translator.score_batch(
            [self._source(p) for p in batch], targets, max_batch_size=max_batch_size,
            max_input_length=0)
        out = []
        for prepared, result in zip(batch, results, strict=True):
            generated = result.log_probs[len(prepared.prefix):]
            out.append((float(sum(generated)), len(generated)))
        return out
