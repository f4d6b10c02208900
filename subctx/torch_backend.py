"""Serving models that CTranslate2 cannot run (the multi-encoder architectures) with PyTorch.

Optional: it needs the `train` extra (torch) and imports the model code from `training`, the
one exception DESIGN.md allows. Same interface as subctx.engine.Engine: translate (beam
search, n-best, attention) and score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

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
from subctx.layout import separate_context


class TorchEngine:
    """Beam search over a PyTorch model from a bundle with backend 'torch'."""

    def __init__(self, bundle: Bundle | str, device: str = "auto", threads: int = 0):
        try:
            import torch

            from training.checkpoint import load_chunked
            from training.context_models import model_class
            from training.model import ModelConfig
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
            self.model = model_class(spec["architecture"])(ModelConfig(**spec["model"]))
            self.model.load_state_dict(load_chunked(self.bundle.path, "model"))
        except (OSError, KeyError, ValueError, RuntimeError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load model ({err})") from None
        self.model.to(self.device).eval()
        self.sp = spm.SentencePieceProcessor(
            model_file=str(self.bundle.file(self.manifest.source_spm)))
        ids = SpecialIds.of(self.sp, self.manifest.special_tokens)
        self.ctx_bos, self.bos, self.eos, self.pad, self.unk = (
            ids.ctx_bos, ids.bos, ids.eos, ids.pad, ids.unk)

    @property
    def max_context(self) -> int:
        return self.manifest.context.max_k

    @property
    def target_sp(self) -> spm.SentencePieceProcessor:
        return self.sp  # one joint vocabulary, as subctx.engine.Engine.target_sp

    uses_target_context = False  # these models read source-side context only
    supports_forced_start = False  # its beam search forces no prefix

    # -- input --------------------------------------------------------------------------------
    def _tensors(self, requests: Sequence[Request]):
        torch = self.torch
        srcs, ctxs, dists = [], [], []
        for r in requests:
            srcs.append(self.sp.encode(r.text)[:MAX_SENTENCE_PIECES] + [self.eos])
            k = min(len(r.source_context), self.max_context)
            context = [self.sp.encode(s)[:MAX_SENTENCE_PIECES]
                       for s in r.source_context[len(r.source_context) - k:]]
            ctx, dist = separate_context(context, self.ctx_bos, self.eos)
            ctxs.append(ctx)
            dists.append(dist)

        def pad(rows: list[list[int]]):
            width = max(map(len, rows))
            return torch.tensor([row + [self.pad] * (width - len(row)) for row in rows],
                                device=self.device)

        return pad(srcs), pad(ctxs), pad(dists), srcs

    def _encode(self, src, ctx, dist):
        """Multi-encoder models read the separate context; a sentence-level one does not."""
        if self.manifest.architecture == "transformer":
            return self.model.encode(src)
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
        src, ctx, dist, src_ids = self._tensors(requests)
        with torch.no_grad():
            memory, mask = self._encode(src, ctx, dist)
            results = self._beam_search(memory, mask, beam, max(len(s) for s in src_ids),
                                        self.manifest.length_penalty)
        out = []
        for i, hyps in enumerate(results):
            best_ids, best_score = hyps[0]
            t = Translation(self.sp.decode(best_ids), best_score)
            if num_hypotheses > 1:
                texts = list(dict.fromkeys(self.sp.decode(ids) for ids, _ in
                                           hyps[:num_hypotheses]))
                t.alternatives = self.score([requests[i]] * len(texts), texts)
            if return_attention:
                t.attention = self._attention(memory[i:i + 1], mask[i:i + 1], src_ids[i],
                                              best_ids)
                t.context_attention = self._context_attention(src[i:i + 1], ctx[i:i + 1],
                                                              dist[i:i + 1])
            out.append(t)
        return out

    def _beam_search(self, memory, mask, beam: int, longest: int, length_penalty: float = 1.0):
        """Batched beam search with a key/value cache; per sentence [(ids, score)], best first,
        score = log-probability / length^length_penalty."""
        torch = self.torch
        batch = memory.size(0)
        max_len = decoding_budget(longest - 1)  # `longest` counts </s>; as CTranslate2
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
                            finished[b].append((ids, score / (len(ids) + 1) ** length_penalty))
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

    def _attention(self, memory, mask, src_ids: list[int], out_ids: list[int]) -> AttentionMap:
        torch = self.torch
        tgt = torch.tensor([[self.bos, *out_ids]], device=self.device)
        with torch.no_grad():
            _, weights = self.model.decode(tgt, memory, mask, need_weights=True)
        rows = weights[0, 1:len(out_ids) + 1].tolist() if weights is not None else []
        return AttentionMap([self.sp.id_to_piece(i) for i in src_ids],
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
        torch = self.torch
        out: list[Hypothesis] = []
        for start in range(0, len(requests), max_batch_size):
            reqs = requests[start:start + max_batch_size]
            cands = candidates[start:start + max_batch_size]
            src, ctx, dist, _ = self._tensors(reqs)
            targets = [[self.bos, *self.sp.encode(c), self.eos] for c in cands]
            width = max(map(len, targets))
            tgt = torch.tensor([t + [self.pad] * (width - len(t)) for t in targets],
                               device=self.device)
            with torch.no_grad():
                memory, mask = self._encode(src, ctx, dist)
                logp = self.model.decode(tgt[:, :-1], memory, mask)[0].float().log_softmax(-1)
                picked = logp.gather(-1, tgt[:, 1:, None])[..., 0]
                picked = picked.masked_fill(tgt[:, 1:] == self.pad, 0.0)
            counts = (tgt[:, 1:] != self.pad).sum(-1).tolist()
            for c, value, n in zip(cands, picked.sum(-1).tolist(), counts, strict=True):
                out.append(Hypothesis(c, float(value), int(n)))
        return out
