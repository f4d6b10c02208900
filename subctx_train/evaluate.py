"""Evaluation of a bundle the way the app uses it.

- `translate_documents`: documents in order, context by the app's rule, previous translations
  as target prefix; BLEU and chrF (sacrebleu) against the references.
- `contrastive`: Voita et al. 2019 consistency sets; every variant is scored with its context on
  both sides, only the current sentence counting; a group is right when its true variant wins.
- `ctxpro`: Wicks & Post 2023 items translated as short documents; right when the expected
  Russian word form appears in the current sentence's translation.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import sacrebleu

from subctx.contract import Request, Translator
from subctx.decoding import DecodeOptions, translate_documents
from subctx.units import DocumentPlan, Unit
from subctx_train.data import Document, Segment

Progress = Callable[[int], None]


def plan_from_document(doc: Document) -> DocumentPlan:
    units = [Unit(s.src, s.start, s.end, i) for i, s in enumerate(doc.segments)]
    return DocumentPlan([], units, [])


@dataclass
class CorpusScore:
    name: str
    sentences: int
    bleu: float
    chrf: float
    signature_bleu: str
    signature_chrf: str
    hypotheses: list[str] = field(default_factory=list, repr=False)


def spread_documents(docs: list[Document], limit: int | None) -> list[Document]:
    """Whole documents spread evenly over `docs` until they hold at least `limit` sentences
    (all of them when `limit` is None): a smaller dev set whose context chains stay intact."""
    total = sum(len(d.segments) for d in docs)
    if not limit or limit >= total:
        return docs
    wanted = max(1, min(len(docs), math.ceil(len(docs) * limit / total)))
    while True:
        picked = [docs[i * len(docs) // wanted] for i in range(wanted)]
        if sum(len(d.segments) for d in picked) >= limit or wanted == len(docs):
            return picked
        wanted += 1


def translate_corpus(engine: Translator, docs: list[Document], options: DecodeOptions,
                     on_units: Progress | None = None) -> list[list[str]]:
    plans = [plan_from_document(d) for d in docs]
    results = translate_documents(plans, engine, options,
                                  on_units_done=(lambda d, u: on_units(len(u))) if on_units
                                  else None)
    return [r.texts() for r in results]


def bleu_chrf(name: str, docs: list[Document], outputs: list[list[str]]) -> CorpusScore:
    hyps, refs = [], []
    for doc, out in zip(docs, outputs, strict=True):
        for seg, hyp in zip(doc.segments, out, strict=True):
            if seg.tgt is not None:
                hyps.append(hyp)
                refs.append(seg.tgt)
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    b = bleu.corpus_score(hyps, [refs])
    c = chrf.corpus_score(hyps, [refs])
    return CorpusScore(name, len(hyps), round(b.score, 2), round(c.score, 2),
                       str(bleu.get_signature()), str(chrf.get_signature()), hyps)


class RandomContext:
    """The control of Voita et al. 2018: the same model fed a *random* context sentence (on
    both sides: a random pair from `pool`) should fall back to sentence-level quality."""

    def __init__(self, engine, pool: list[tuple[str, str]], seed: int = 0):
        import random

        self.engine, self.pool, self.rng = engine, pool, random.Random(seed)
        self.max_context = engine.max_context
        self.uses_target_context = engine.uses_target_context
        self.supports_forced_start = engine.supports_forced_start
        self.manifest = engine.manifest

    def _swap(self, request: Request) -> Request:
        n = len(request.source_context)
        pairs = [self.rng.choice(self.pool) for _ in range(n)]
        return replace(request, source_context=tuple(s for s, _ in pairs),
                       target_context=tuple(t for _, t in pairs))

    def translate(self, requests, **kwargs):
        return self.engine.translate([self._swap(r) for r in requests], **kwargs)

    def score(self, requests, candidates, **kwargs):
        # one random context per group: requests of a group share the same source context
        swapped, memo = [], {}
        for r in requests:
            key = (r.text, r.source_context)
            if key not in memo:
                memo[key] = self._swap(r)
            fake = memo[key]
            n = len(r.target_context)
            swapped.append(replace(r, source_context=fake.source_context,
                                   target_context=fake.target_context[:n]))
        return self.engine.score(swapped, candidates, **kwargs)


# -- Voita et al. 2019 contrastive sets ------------------------------------------------------
_DETOK_RULES = [
    (re.compile(r" ([.,!?:;%)\]}…»])"), r"\1"),
    (re.compile(r"([(\[{«]) "), r"\1"),
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m|'t)\b", re.IGNORECASE), r"\1"),
    (re.compile(r"(\w) ' (\w)"), r"\1'\2"),
    (re.compile(r" \.\.\. ?"), "... "),
    (re.compile(r"\s{2,}"), " "),
]


def detokenize(text: str) -> str:
    """Undo Moses-style tokenisation well enough for scoring (the .src/.dst release files)."""
    for pattern, replacement in _DETOK_RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


@dataclass
class ContrastiveGroup:
    sources: list[str]  # context sentences then the current one
    variants: list[list[str]]  # each: context translations then the current translation
    true_index: int
    ctx_dist: int | None


def read_voita(root: Path, name: str) -> list[ContrastiveGroup]:
    """Read NAME from a Voita release folder (consistency_testsets/NAME.json + scoring_data)."""
    base = Path(root)
    if (base / "consistency_testsets").is_dir():
        base = base / "consistency_testsets"
    if not (base / f"{name}.json").exists():
        raise FileNotFoundError(f"{root}: no {name}.json here or in consistency_testsets/ "
                                "(give the Voita et al. release folder)")
    groups_json = json.loads((base / f"{name}.json").read_text(encoding="utf-8"))
    scoring = base / "scoring_data"
    if (scoring / f"{name}.tsv").exists():
        rows = [line.rstrip("\n").split("\t") for line in
                (scoring / f"{name}.tsv").read_text(encoding="utf-8").splitlines()]
        pairs = [(src, dst) for src, dst in rows]
        split = "<eos>"
        clean = str.strip
    else:
        srcs = (scoring / f"{name}.src").read_text(encoding="utf-8").splitlines()
        dsts = (scoring / f"{name}.dst").read_text(encoding="utf-8").splitlines()
        pairs = list(zip(srcs, dsts, strict=True))
        split = "_eos"
        clean = detokenize
    groups, row = [], 0
    for item in groups_json:
        n = len(item["dst"])
        rows_here = pairs[row:row + n]
        row += n
        sources = [clean(s) for s in rows_here[0][0].split(split)]
        variants = [[clean(t) for t in dst.split(split)] for _, dst in rows_here]
        groups.append(ContrastiveGroup(sources, variants, int(item["true_ind"]),
                                       item.get("ctx_dist")))
    if row != len(pairs):
        raise ValueError(f"{name}: {len(pairs)} scoring rows but the groups use {row}")
    return groups


def contrastive_accuracy(engine: Translator, groups: list[ContrastiveGroup], context: int,
                         on_groups: Progress | None = None) -> dict:
    """Accuracy overall and by ctx_dist; `context` = how many context sentences to give.
    The 'all' row also says how well the review's flags would triage these items: a group is
    flagged when its best and second-best variants (which differ exactly in the context
    choice) are within the review's closeness threshold; precision = flagged groups the model
    gets wrong / flagged, recall = wrong groups that are flagged."""
    from subctx.review.session import CLOSE_LOG_RATIO

    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    flags = {"flagged": 0, "flagged_wrong": 0, "wrong": 0}
    for start in range(0, len(groups), 32):
        chunk = groups[start:start + 32]
        requests, candidates = [], []
        for g in chunk:
            ctx_src = tuple(g.sources[:-1][-context:]) if context else ()
            for variant in g.variants:
                ctx_tgt = tuple(variant[:-1][-context:]) if context else ()
                requests.append(Request(g.sources[-1], ctx_src, ctx_tgt))
                candidates.append(variant[-1])
        scores = [h.log_prob for h in engine.score(requests, candidates)]
        offset = 0
        for g in chunk:
            mine = scores[offset:offset + len(g.variants)]
            offset += len(g.variants)
            best = max(range(len(mine)), key=lambda i: mine[i])
            ok = int(best == g.true_index and mine.count(mine[best]) == 1)
            ranked = sorted(mine, reverse=True)
            flagged = len(ranked) > 1 and ranked[0] - ranked[1] < CLOSE_LOG_RATIO
            flags["flagged"] += flagged
            flags["wrong"] += not ok
            flags["flagged_wrong"] += flagged and not ok
            for key in ("all", f"ctx_dist={g.ctx_dist}"):
                right[key][0] += ok
                right[key][1] += 1
        if on_groups:
            on_groups(len(chunk))
    out = {key: {"accuracy": round(r / n, 4), "groups": n} for key, (r, n) in
           sorted(right.items())}
    if "all" in out:
        out["all"] |= {
            "flag_rate": round(flags["flagged"] / out["all"]["groups"], 4),
            "flag_precision": round(flags["flagged_wrong"] / max(1, flags["flagged"]), 4),
            "flag_recall": round(flags["flagged_wrong"] / max(1, flags["wrong"]), 4)}
    return out


# -- ctxpro ----------------------------------------------------------------------------------
@dataclass
class CtxproItem:
    rule: str
    expected: str
    sentences: list[str]  # context sentences then the current one


def read_ctxpro(root: Path, limit: int | None = None) -> dict[str, list[CtxproItem]]:
    """evalsets/NAME.json + inputs/NAME (English context joined by <eos>), per evalset name."""
    root = Path(root)
    out: dict[str, list[CtxproItem]] = {}
    for evalset in sorted((root / "evalsets").glob("*.json")):
        name = evalset.stem
        items = json.loads(evalset.read_text(encoding="utf-8"))
        inputs = (root / "inputs" / name).read_text(encoding="utf-8").splitlines()
        if len(inputs) != len(items):
            raise ValueError(f"{name}: {len(items)} items but {len(inputs)} input lines")
        chosen = list(zip(items, inputs, strict=True))
        if limit:
            step = max(1, len(chosen) // limit)
            chosen = chosen[::step][:limit]
        out[name.split(".")[0]] = [
            CtxproItem(item["rule"], item["expected"],
                       [s.strip() for s in line.split("<eos>") if s.strip()])
            for item, line in chosen]
    return out


def contains_form(translation: str, expected: str) -> bool:
    words = re.findall(r"\w+", translation.lower())
    return expected.lower() in words


def ctxpro_accuracy(engine: Translator, items: list[CtxproItem], options: DecodeOptions,
                    on_items: Progress | None = None, whole: bool = False) -> dict:
    """Each item becomes a document of its last K+1 sentences (`whole`: all its sentences, as
    the app translates a whole scene), translated in order."""
    k = max(0, min(options.context, engine.max_context))
    docs = [Document(f"ctxpro/{i}", [Segment(s, None) for s in
                                     (item.sentences if whole else item.sentences[-(k + 1):])])
            for i, item in enumerate(items)]
    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for start in range(0, len(docs), 64):
        outputs = translate_corpus(engine, docs[start:start + 64], options)
        for item, out in zip(items[start:start + 64], outputs, strict=True):
            ok = int(contains_form(out[-1], item.expected))
            for key in ("all", item.rule):
                right[key][0] += ok
                right[key][1] += 1
        if on_items:
            on_items(len(outputs))
    return {key: {"accuracy": round(r / n, 4), "items": n} for key, (r, n) in
            sorted(right.items())}
