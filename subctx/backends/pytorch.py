"""The PyTorch backend: every architecture of subctx.nn, the multi-encoder ones (which
CTranslate2 cannot run) among them, on CPU or CUDA; also serves a CTranslate2 architecture
where ctranslate2 is not installed (a GPU machine evaluating what it trained), and a
CTranslate2 bundle itself (its model.bin read by subctx.nn.ct2_weights) where CTranslate2
cannot run it (subctx.backends.open_backend).

Optional: it needs the `train` extra (torch, safetensors). Beam search with a key/value cache;
a bundle holds `model.json` (architecture and ModelConfig) and `model-NNN.safetensors`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from subctx.backends.base import Backend, Found, Prepared, Searched, generated_score
from subctx.backends.output import collapse_loop, loops
from subctx.bundle import Bundle
from subctx.contract import BATCH_SIZE, AttentionMap, Request, SpecialIds, Translation
from subctx.errors import BundleError


class TorchBackend(Backend):
    """A bundle with backend 'torch', loaded once."""

    def __init__(self, bundle: Bundle | str, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0, batch_size: int = BATCH_SIZE):
        """`compute_type` is CTranslate2's notion: this backend computes in float32."""
        try:
            import torch

            from subctx.nn.config import ModelConfig
            from subctx.nn.weights import load_chunked
        except ImportError:
            raise BundleError("this model runs on PyTorch: install it with "
                              "pip install -e '.[train]'") from None
        super().__init__(bundle, batch_size=batch_size)
        self.torch = torch
        if threads:
            torch.set_num_threads(threads)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        try:
            if self.manifest.backend == "ctranslate2":  # its model.bin, dequantised
                self.model = self._from_model_bin()
            else:
                spec = json.loads(self.bundle.file("model.json").read_text(encoding="utf-8"))
                self.model = self.architecture.build(ModelConfig(**spec["model"]))
                self.model.load_state_dict(load_chunked(self.bundle.path, "model"))
        except (OSError, KeyError, ValueError, RuntimeError) as err:
            raise BundleError(f"{self.bundle.path}: cannot load model ({err})") from None
        self.model.to(self.device).eval()
        self.ids = SpecialIds.of(self.target_sp, self.manifest.special_tokens)

    def _from_model_bin(self):
        """The network of a CTranslate2 bundle, its weights read from model.bin."""
        from subctx.nn.ct2_weights import model_config, read_model_bin, transformer_state

        variables = read_model_bin(self.bundle.file("model.bin"))
        training = self.manifest.info.get("training", {}).get("config", {})
        cfg = model_config(variables, training)
        model = self.architecture.build(cfg)
        model.load_state_dict(transformer_state(variables, cfg))
        return model

    # -- tensors -------------------------------------------------------------------------------
    def _id_list(self, pieces: list[str]) -> list[int]:
        return [self.target_sp.piece_to_id(p) for p in pieces]

    def _pieces_of(self, ids: list[int]) -> list[str]:
        return [self.target_sp.id_to_piece(i) for i in ids]

    def _pad(self, rows: list[list[int]], value: int):
        width = max(map(len, rows))
        return self.torch.tensor([row + [value] * (width - len(row)) for row in rows],
                                 device=self.device)

    def _encode(self, batch: list[Prepared], need_weights: bool = False):
        """Encoder memory and mask of a batch; segment-shifted positions where the model was
        trained so, context apart for the multi-encoder models (at least <ctx> for them)."""
        shift = self.manifest.context.segment_shift
        src = self._pad([self._id_list(p.tokens) for p in batch], self.ids.pad)
        positions = (self._pad([[i + s * shift for i, s in enumerate(p.segments)]
                                for p in batch], 0) if shift else None)
        if not self.architecture.separate_context:
            return src, self.model.encode(src, positions)
        ctx = self._pad([self._id_list(p.context) for p in batch], self.ids.pad)
        dist = self._pad([p.distances for p in batch], 0)
        kwargs = {"need_weights": True} if need_weights else {}
        return src, self.model.encode(src, positions, ctx, dist, **kwargs)

    # -- search --------------------------------------------------------------------------------
    def _search(self, batch: list[Prepared], beam: int, num_hypotheses: int, attention: bool,
                max_batch_size: int) -> list[Found]:
        found: list[Found] = []
        for start in range(0, len(batch), max_batch_size):
            found += self._search_batch(batch[start:start + max_batch_size], beam, attention)
        return found

    def _search_batch(self, batch: list[Prepared], beam: int, attention: bool) -> list[Found]:
        length = min(self.manifest.max_positions - 1,
                     max(p.forced_length + p.budget for p in batch))
        with self.torch.no_grad():
            src, (memory, mask) = self._encode(batch)
            results = self._beam_search(memory, mask, beam, max(1, length),
                                        [self._id_list(p.prefix + p.forced) for p in batch])
        found = []
        for i, (prepared, hypotheses) in enumerate(zip(batch, results, strict=True)):
            outputs = [Searched(self._pieces_of(ids), score, ended)
                       for ids, score, ended in hypotheses]
            rows = context_rows = None
            if attention:
                rows = self._attention_rows(memory[i:i + 1], mask[i:i + 1], hypotheses[0][0])
                context_rows = self._context_attention(prepared)
            found.append(Found(outputs, rows, context_rows))
        return found

    def _beam_search(self, memory, mask, beam: int, max_len: int, forced: list[list[int]]):
        """Batched beam search with a key/value cache; per sentence [(ids, score, ended)], best
        first, scored by `generated_score`. Each sentence's `forced` tokens come first (target-side
        context, a forced start; the ids include them) and count in neither the log-probability
        nor the length, as the CTranslate2 backend ranks them."""
        torch = self.torch
        pad, eos = self.ids.pad, self.ids.eos
        penalty = self.manifest.length_penalty
        batch = memory.size(0)
        cache = self.model.start_decoding(memory.repeat_interleave(beam, 0),
                                          mask.repeat_interleave(beam, 0))
        tokens = torch.full((batch * beam, 1), self.ids.bos, dtype=torch.long,
                            device=self.device)
        scores = torch.zeros(batch, beam, device=self.device)
        scores[:, 1:] = -math.inf
        finished: list[list[tuple[list[int], float]]] = [[] for _ in range(batch)]
        done = [False] * batch
        for step in range(1, max_len + 1):
            logits = self.model.decode_step(tokens[:, -1], cache).float()
            logits[:, self.ids.unk] = -math.inf  # never '⁇' in a subtitle
            if step == 1:  # at least one token, as CTranslate2's min_decoding_length=1
                logits[:, eos] = -math.inf
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
            top_scores, top_index = top_scores.tolist(), top_index.tolist()  # one copy a step
            next_tokens, next_scores, parents = [], [], []
            for b in range(batch):
                kept = 0
                for rank, (score, index) in enumerate(zip(top_scores[b], top_index[b],
                                                          strict=True)):
                    parent, token = divmod(index, vocab)
                    row = b * beam + parent
                    if token == eos or step == max_len:
                        # as CTranslate2: only the best `beam` candidates may finish; an end
                        # further down is dropped, and the next candidates keep the beam full
                        if rank < beam and not done[b] and score > -math.inf:
                            ids = tokens[row, 1:].tolist() + ([] if token == eos else [token])
                            # </s> counts when it came (CTranslate2's lengths)
                            generated = len(ids) + (token == eos) - len(forced[b])
                            finished[b].append((ids, generated_score(score, generated,
                                                                     penalty), token == eos))
                        continue
                    if kept < beam:
                        next_tokens.append(token)
                        next_scores.append(score if not done[b] else -math.inf)
                        parents.append(row)
                        kept += 1
                while kept < beam:  # pad with dead beams
                    next_tokens.append(pad)
                    next_scores.append(-math.inf)
                    parents.append(b * beam)
                    kept += 1
                if len(finished[b]) >= beam:
                    done[b] = True
            if all(done):
                break
            parents_t = torch.tensor(parents, device=self.device)
            cache.reorder(parents_t)
            tokens = torch.cat([tokens[parents_t],
                                torch.tensor(next_tokens, device=self.device)[:, None]], dim=1)
            scores = torch.tensor(next_scores, device=self.device).view(batch, beam)
        return [sorted(f, key=lambda h: -h[1]) or [([], -math.inf, False)] for f in finished]

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, requests: Sequence[Request], top_k: int = 0, temperature: float = 1.0,
               max_batch_size: int | None = None, seed: int | None = None
               ) -> list[Translation]:
        """One translation per request drawn from the model (`top_k` > 0: from its k most
        likely tokens at each step), as sampled back-translation takes its synthetic sources
        (Edunov et al. 2018); forced tokens come first as in beam search, and a translation
        that loops is cut down. Scores are `generated_score`s of the drawn tokens."""
        if not requests:
            return []
        prepared = [self.prepare(r) for r in requests]
        generator = self.torch.Generator(device=self.device)
        if seed is not None:
            generator.manual_seed(seed)
        else:
            generator.seed()
        out: list[Translation] = []
        max_batch_size = max_batch_size or self.batch_size
        for start in range(0, len(prepared), max_batch_size):
            batch = prepared[start:start + max_batch_size]
            drawn = self._sample_batch(batch, top_k, temperature, generator)
            for p, (ids, score) in zip(batch, drawn, strict=True):
                out.append(Translation(self._detok(self._current(self._pieces_of(ids), p)),
                                       score))
        for request, translation in zip(requests, out, strict=True):
            if loops(request.text, translation.text):
                translation.text = collapse_loop(request.text, translation.text)
        return out

    def _sample_batch(self, batch: list[Prepared], top_k: int, temperature: float, generator
                      ) -> list[tuple[list[int], float]]:
        """Ancestral sampling with a key/value cache; finished sentences leave the batch.
        Per sentence (ids without </s>, forced tokens included; its score)."""
        torch = self.torch
        eos = self.ids.eos
        length = max(1, min(self.manifest.max_positions - 1,
                            max(p.forced_length + p.budget for p in batch)))
        forced = [self._id_list(p.prefix + p.forced) for p in batch]
        width = max(map(len, forced))
        forced_t = self._pad([f or [-1] for f in forced], -1) if width else None
        n = len(batch)
        with torch.no_grad():
            _, (memory, mask) = self._encode(batch)
            cache = self.model.start_decoding(memory, mask)
            rows = torch.arange(n, device=self.device)  # the sentence of each live row
            last = torch.full((n,), self.ids.bos, dtype=torch.long, device=self.device)
            out = torch.full((n, length), self.ids.pad, dtype=torch.long, device=self.device)
            logp_sum = torch.zeros(n, device=self.device)
            ended_at = torch.full((n,), length, dtype=torch.long, device=self.device)
            for step in range(length):
                logits = self.model.decode_step(last, cache).float()
                logits[:, self.ids.unk] = -math.inf  # never '⁇' in a subtitle
                if step == 0:  # at least one token, as the beam search (min_decoding_length 1)
                    logits[:, eos] = -math.inf
                logp = logits.log_softmax(-1)
                scaled = logits / temperature
                if top_k:
                    kth = scaled.topk(min(top_k, scaled.size(-1)), dim=-1).values[:, -1:]
                    scaled = scaled.masked_fill(scaled < kth, -math.inf)
                token = torch.multinomial(scaled.softmax(-1), 1, generator=generator)[:, 0]
                counted = torch.ones_like(token, dtype=torch.bool)
                if step < width:  # a forced step: the given token, not counted in the score
                    wanted = forced_t[rows, step]
                    counted = wanted < 0
                    token = torch.where(counted, token, wanted)
                picked = logp.gather(1, token[:, None])[:, 0]
                logp_sum[rows] += torch.where(counted, picked, torch.zeros_like(picked))
                out[rows, step] = token
                done = (token == eos) & counted
                ended_at[rows[done]] = step
                keep = ~done
                if step == length - 1 or not bool(keep.any()):
                    break
                if not bool(keep.all()):
                    live = keep.nonzero()[:, 0]
                    cache.reorder(live)
                    rows, token = rows[live], token[live]
                last = token
        penalty = self.manifest.length_penalty
        results = []
        for i, (ids, end, total) in enumerate(zip(out.tolist(), ended_at.tolist(),
                                                  logp_sum.tolist(), strict=True)):
            ids = ids[:end]  # without </s>, which counts in the length when it came
            generated = len(ids) + (end < length) - len(forced[i])
            results.append((ids, generated_score(total, generated, penalty)))
        return results

    # -- attention -----------------------------------------------------------------------------
    def _attention_rows(self, memory, mask, output: list[int]) -> list[list[float]] | None:
        """The last decoder layer's cross-attention, one row per output token (the row the
        decoder computed reading that token)."""
        tgt = self.torch.tensor([[self.ids.bos, *output]], device=self.device)
        with self.torch.no_grad():
            _, weights = self.model.decode(tgt, memory, mask, need_weights=True)
        return weights[0, 1:].tolist() if weights is not None else None

    def _context_attention(self, prepared: Prepared) -> AttentionMap | None:
        """The gated layer's attention from the current sentence to the context (Voita et al.
        2018); None for models without one (the capsule network routes, it does not attend)."""
        if not hasattr(self.model, "context_attention"):
            return None
        with self.torch.no_grad():
            self._encode([prepared], need_weights=True)
        weights = self.model.context_attention
        if weights is None:
            return None
        return AttentionMap(prepared.context, prepared.tokens,
                            weights[0, :len(prepared.tokens), :len(prepared.context)].tolist())

    # -- scoring -------------------------------------------------------------------------------
    def _score(self, batch: list[Prepared], targets: list[list[str]], max_batch_size: int
               ) -> list[tuple[float, int]]:
        out: list[tuple[float, int]] = []
        for start in range(0, len(batch), max_batch_size):
            out += self._score_batch(batch[start:start + max_batch_size],
                                     targets[start:start + max_batch_size])
        return out

    def _score_batch(self, batch: list[Prepared], targets: list[list[str]]
                     ) -> list[tuple[float, int]]:
        torch = self.torch
        rows = [[self.ids.bos, *self._id_list(t), self.ids.eos] for t in targets]
        tgt = self._pad(rows, self.ids.pad)
        counted = tgt[:, 1:] != self.ids.pad
        for row, prepared in enumerate(batch):
            counted[row, :len(prepared.prefix)] = False
        with torch.no_grad():
            _, (memory, mask) = self._encode(batch)
            logp = self.model.decode(tgt[:, :-1], memory, mask)[0].float().log_softmax(-1)
            picked = logp.gather(-1, tgt[:, 1:, None])[..., 0].masked_fill(~counted, 0.0)
        return [(float(value), int(n)) for value, n in
                zip(picked.sum(-1).tolist(), counted.sum(-1).tolist(), strict=True)]
