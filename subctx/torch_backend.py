"""Serving models with PyTorch: the multi-encoder architectures, which CTranslate2 cannot run,
and any other where ctranslate2 is not installed (a GPU machine evaluating what it trained).

Optional: it needs the `train` extra (torch, safetensors) for the networks of subctx.nn. Same
interface as subctx.engine.Engine: translate (beam search, n-best, attention) and score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import sentencepiece as spm

from subctx.bundle import Bundle, load_bundle
from subctx.contract import (
    MAX_SENTENCE_PIECES,
    AttentionMap,
    Hypothesis,
    Request,
    SpecialIds,
    Translation,
    decoding_budget,
)
from subctx.errors import BundleError
from subctx.layout import current_part, fit_context, separate_context, shifted_positions
from subctx.nn import architecture


@dataclass
class _Input:
    """One request laid out for the model."""

    src: list[int]  # encoder ids (context <sep> ... current </s> for concatenation models)
    positions: list[int] | None  # segment-shifted encoder positions, None for plain ones
    ctx: list[int]  # multi-encoder models' separate context (<ctx> ... </s>)
    dist: list[int]  # and each of its tokens' sentence distance
    prefix: list[int]  # target-side context forced before the current sentence
    forced: list[int]  # the forced start of the current sentence (Request.forced_start)
    budget: int  # most pieces for the current sentence


class TorchEngine:
    """Beam search over a PyTorch model from a bundle with backend 'torch'."""

    def __init__(self, bundle: Bundle | str, device: str = "auto", threads: int = 0):
        try:
            import torch

            from subctx.nn.config import ModelConfig
            from subctx.nn.weights import load_chunked
        except ImportError:
            raise BundleError("this model runs on PyTorch: install it with "
                              "pip install -e '.[train]'") from None
        self.torch = torch
        self.bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
        self.manifest = self.bundle.manifest
        if threads:
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        try:
            spec = json.loads(self.bundle.file("model.json").read_text(encoding="utf-8"))
            self.model = architecture(spec["architecture"]).build(ModelConfig(**spec["model"]))
            self.model.load_state_dict(load_chunked(self.bundle.path, "model"))
        except (OSError, KeyError, ValueError, RuntimeError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load model ({err})") from None
        self.model.to(self.device).eval()
        self.sp = spm.SentencePieceProcessor(
            model_file=str(self.bundle.file(self.manifest.source_spm)))
        ids = SpecialIds.of(self.sp, self.manifest.special_tokens)
        self.ctx_bos, self.bos, self.eos, self.pad, self.unk, self.sep = (
            ids.ctx_bos, ids.bos, ids.eos, ids.pad, ids.unk, ids.sep)

    @property
    def max_context(self) -> int:
        return self.manifest.context.max_k

    @property
    def target_sp(self) -> spm.SentencePieceProcessor:
        return self.sp  # one joint vocabulary, as subctx.engine.Engine.target_sp

    @property
    def uses_target_context(self) -> bool:
        """Concatenation models read the previous translations as a forced decoder prefix;
        the multi-encoder models read source-side context only."""
        ctx = self.manifest.context
        return (self.manifest.architecture == "concat" and ctx.max_k > 0
                and ctx.target_side == "prefix")

    supports_forced_start = True

    # -- input --------------------------------------------------------------------------------
    def _pieces(self, text: str) -> list[int]:
        return self.sp.encode(text)[:MAX_SENTENCE_PIECES]

    def _prepare(self, request: Request) -> _Input:
        """Lay a request out as model input (subctx.layout), as subctx.engine.Engine does:
        concatenation models drop context, oldest first, until both sides fit the positions."""
        limit = self.manifest.max_positions
        current = self._pieces(request.text)[: limit - 1]
        forced = self._pieces(request.forced_start) if request.forced_start else []
        budget = decoding_budget(len(current))
        k = min(len(request.source_context), self.max_context)
        if self.manifest.architecture != "concat":
            context = [self._pieces(s) for s in
                       request.source_context[len(request.source_context) - k:]]
            ctx, dist = separate_context(context, self.ctx_bos, self.eos)
            return _Input([*current, self.eos], None, ctx, dist, [], forced, budget)
        src_ctx = [self._pieces(s) for s in request.source_context]
        tgt_ctx = [self._pieces(t) for t in request.target_context]
        if self.uses_target_context:
            k = min(k, len(tgt_ctx))
        shift = self.manifest.context.segment_shift
        tokens, segments, prefix = fit_context(src_ctx, tgt_ctx, current, k, self.sep,
                                               self.eos, shift, limit, budget,
                                               self.uses_target_context)
        positions = shifted_positions(segments, shift) if shift else None
        return _Input(tokens, positions, [self.ctx_bos], [0], prefix, forced, budget)

    def _tensors(self, inputs: Sequence[_Input]):
        torch = self.torch

        def pad(rows: list[list[int]], value: int):
            width = max(map(len, rows))
            return torch.tensor([row + [value] * (width - len(row)) for row in rows],
                                device=self.device)

        positions = (pad([i.positions for i in inputs], 0)
                     if any(i.positions is not None for i in inputs) else None)
        return (pad([i.src for i in inputs], self.pad), positions,
                pad([i.ctx for i in inputs], self.pad), pad([i.dist for i in inputs], 0))

    def _encode(self, src, positions, ctx, dist):
        """Sentence-level and concatenation models read one sequence (positions shifted per
        segment where the model was trained so); multi-encoder ones the context apart."""
        if self.manifest.architecture in ("transformer", "concat"):
            return self.model.encode(src, positions)
        return self.model.encode(src, None, ctx, dist)

    # -- decoding -----------------------------------------------------------------------------
    def translate(self, requests: Sequence[Request], beam_size: int = 4,
                  num_hypotheses: int = 1, return_attention: bool = False,
                  max_batch_size: int = 32) -> list[Translation]:
        out: list[Translation] = []
        for start in range(0, len(requests), max_batch_size):
            out += self._translate(requests[start:start + max_batch_size], beam_size,
                                   num_hypotheses, return_attention)
        return out

    def _translate(self, requests, beam_size, num_hypotheses, return_attention):
        torch = self.torch
        beam = max(beam_size, num_hypotheses)
        inputs = [self._prepare(r) for r in requests]
        src, positions, ctx, dist = self._tensors(inputs)
        max_len = min(self.manifest.max_positions - 1,
                      max(len(i.prefix) + len(i.forced) + i.budget for i in inputs))
        with torch.no_grad():
            memory, mask = self._encode(src, positions, ctx, dist)
            results = self._beam_search(memory, mask, beam, max(1, max_len),
                                        [i.prefix + i.forced for i in inputs],
                                        self.manifest.length_penalty)
        out = []
        for i, (hyps, prepared) in enumerate(zip(results, inputs, strict=True)):
            currents = [current_part(ids, len(prepared.prefix), self.sep) for ids, _ in hyps]
            t = Translation(self.sp.decode(currents[0]), hyps[0][1])
            if num_hypotheses > 1:
                texts = list(dict.fromkeys(self.sp.decode(c) for c in
                                           currents[:num_hypotheses]))
                t.alternatives = self.score([requests[i]] * len(texts), texts)
            if return_attention:
                t.attention = self._attention(memory[i:i + 1], mask[i:i + 1], prepared,
                                              currents[0])
                t.context_attention = self._context_attention(src[i:i + 1], ctx[i:i + 1],
                                                              dist[i:i + 1])
            out.append(t)
        return out

    def _beam_search(self, memory, mask, beam: int, max_len: int, forced: list[list[int]],
                     length_penalty: float = 1.0):
        """Batched beam search with a key/value cache; per sentence [(ids, score)], best first,
        score = log-probability / length^length_penalty of what was generated. Each sentence's
        `forced` tokens come first (target-side context, a forced start; the ids include
        them) and count in neither the log-probability nor the length, as the CTranslate2
        engine ranks them (subctx.engine.Engine._rank_after_prefix)."""
        torch = self.torch
        batch = memory.size(0)
        cache = self.model.start_decoding(memory.repeat_interleave(beam, 0),
                                          mask.repeat_interleave(beam, 0))
        tokens = torch.full((batch * beam, 1), self.bos, dtype=torch.long, device=self.device)
        scores = torch.zeros(batch, beam, device=self.device)
        scores[:, 1:] = -math.inf
        finished: list[list[tuple[list[int], float]]] = [[] for _ in range(batch)]
        done = [False] * batch
        for step in range(1, max_len + 1):
            logits = self.model.decode_step(tokens[:, -1], cache).float()
            logits[:, self.unk] = -math.inf  # never '⁇' in a subtitle
            logp = logits.log_softmax(-1)
            vocab = logp.size(-1)
            rows = [b * beam + j for b in range(batch) if step <= len(forced[b])
                    for j in range(beam)]
            if rows:  # a forced step: only the given token may follow
                rows_t = torch.tensor(rows, device=self.device)
                wanted = torch.tensor([forced[r // beam][step - 1] for r in rows],
                                      device=self.device)
                logp[rows_t] = -math.inf
                logp[rows_t, wanted] = 0.0
            total = (scores.view(-1, 1) + logp).view(batch, beam * vocab)
            top_scores, top_index = total.topk(2 * beam, dim=-1)
            next_tokens, next_scores, parents = [], [], []
            for b in range(batch):
                kept = 0
                for score, index in zip(top_scores[b].tolist(), top_index[b].tolist(),
                                        strict=True):
                    parent, token = divmod(index, vocab)
                    row = b * beam + parent
                    if token == self.eos or step == max_len:
                        if not done[b] and score > -math.inf:
                            ids = tokens[row, 1:].tolist() + ([] if token == self.eos
                                                              else [token])
                            # </s> counts when it came (CTranslate2's lengths)
                            generated = len(ids) + (token == self.eos) - len(forced[b])
                            finished[b].append((ids, score / max(1, generated)
                                                ** length_penalty))
                        continue
                    if kept < beam:
                        next_tokens.append(token)
                        next_scores.append(score if not done[b] else -math.inf)
                        parents.append(row)
                        kept += 1
                while kept < beam:  # pad with dead beams
                    next_tokens.append(self.pad)
                    next_scores.append(-math.inf)
                    parents.append(b * beam)
                    kept += 1
                if len(finished[b]) >= beam:
                    done[b] = True
            if all(done):
                break
            parents_t = torch.tensor(parents, device=self.device)
            cache.reorder(parents_t)
            tokens = torch.cat([tokens[parents_t], torch.tensor(next_tokens, device=self.device)
                                [:, None]], dim=1)
            scores = torch.tensor(next_scores, device=self.device).view(batch, beam)
        return [sorted(f, key=lambda h: -h[1]) or [([], -math.inf)] for f in finished]

    def _attention(self, memory, mask, prepared: _Input, out_ids: list[int]) -> AttentionMap:
        torch = self.torch
        prefix = prepared.prefix
        tgt = torch.tensor([[self.bos, *prefix, *out_ids]], device=self.device)
        with torch.no_grad():
            _, weights = self.model.decode(tgt, memory, mask, need_weights=True)
        first = len(prefix) + 1
        rows = weights[0, first:first + len(out_ids)].tolist() if weights is not None else []
        return AttentionMap([self.sp.id_to_piece(i) for i in prepared.src],
                            [self.sp.id_to_piece(i) for i in out_ids], rows)

    def _context_attention(self, src, ctx, dist) -> AttentionMap | None:
        """The gated layer's attention from the current sentence to the context (Voita et al.
        2018); None for models without one (the capsule network routes, it does not attend)."""
        if not hasattr(self.model, "context_attention"):
            return None
        with self.torch.no_grad():
            self.model.encode(src, None, ctx, dist, need_weights=True)
        weights = self.model.context_attention
        if weights is None:
            return None
        src_len, ctx_len = int((src != self.pad).sum()), int((ctx != self.pad).sum())
        return AttentionMap([self.sp.id_to_piece(i) for i in ctx[0, :ctx_len].tolist()],
                            [self.sp.id_to_piece(i) for i in src[0, :src_len].tolist()],
                            weights[0, :src_len, :ctx_len].tolist())

    def score(self, requests: Sequence[Request], candidates: Sequence[str],
              max_batch_size: int = 32) -> list[Hypothesis]:
        """Log-probability of each candidate as its request's translation; target-side context
        is forced as at translation time and only the current part is counted."""
        torch = self.torch
        out: list[Hypothesis] = []
        room = self.manifest.max_positions - 2  # <s> and </s> take positions too
        for start in range(0, len(requests), max_batch_size):
            inputs = [self._prepare(r) for r in requests[start:start + max_batch_size]]
            cands = candidates[start:start + max_batch_size]
            src, positions, ctx, dist = self._tensors(inputs)
            targets = [[self.bos, *(i.prefix + self.sp.encode(c))[:room], self.eos]
                       for i, c in zip(inputs, cands, strict=True)]
            width = max(map(len, targets))
            tgt = torch.tensor([t + [self.pad] * (width - len(t)) for t in targets],
                               device=self.device)
            counted = tgt[:, 1:] != self.pad
            for row, prepared in enumerate(inputs):
                counted[row, :len(prepared.prefix)] = False
            with torch.no_grad():
                memory, mask = self._encode(src, positions, ctx, dist)
                logp = self.model.decode(tgt[:, :-1], memory, mask)[0].float().log_softmax(-1)
                picked = logp.gather(-1, tgt[:, 1:, None])[..., 0].masked_fill(~counted, 0.0)
            for c, value, n in zip(cands, picked.sum(-1).tolist(), counted.sum(-1).tolist(),
                                   strict=True):
                out.append(Hypothesis(c, float(value), int(n)))
        return out
