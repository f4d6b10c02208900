"""How much English alone tells of ты and вы: a linear model that reads a line and the lines
before it and says how likely its Russian says вы (`subctx-train register-cues`).

A question about `--formality auto`: the scene's English often shows the register ("sir",
"Your Honour", "you two", "dude"), so a model of those cues might choose the tag where the
scene's translations have not set one. Fitted on the training documents and measured on dev,
it answers no (docs/decoding.md "What English alone says of ты/вы"): its вы are right 87 % of
the time on ctxpro, but on lines the model already translates with вы.

Every segment whose Russian says ты or вы (subctx.lexicon.register, plural вы included: it is
the word the translation needs) is an example: its English, the English of the lines before it
along the context rule (walking back up to `reach` lines, as RegisterCarry does), and the
register of the nearest of those lines' Russian that shows one. Features (`features`): the
line's words and word pairs, a title before a name, the earlier lines' words, the carried
register. A logistic regression fitted with AdamW; features seen fewer than `min_count` times
are left out, and so are weights that round to nothing.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from subctx import lexicon
from subctx.context import DEFAULT_MAX_GAP, document_contexts
from subctx_train.data import Document
from subctx_train.evaluate import CtxproItem

BIAS = "<bias>"
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[?!]")
_TITLE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Sir|Madam|Ma'am|Lord|Lady|Captain|Doctor|"
                    r"Professor|Officer|Detective|General|Colonel|Sergeant|Agent)\b\.?")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def features(current: str, previous: Sequence[str] = (), carried: str | None = None
             ) -> list[str]:
    """The features of a line: its words (w:) and word pairs (b:), a title before a name (t:),
    the words of the previous lines, nearest first, that the line lacks (p:), and the register
    of the previous translation (carry:ты / carry:вы / carry:-)."""
    words = _tokens(current)
    feats = [f"w:{w}" for w in dict.fromkeys(words)]
    padded = ["<s>", *words, "</s>"]
    feats += [f"b:{a}_{b}" for a, b in dict.fromkeys(zip(padded, padded[1:], strict=False))]
    feats += [f"t:{m.group(0).rstrip('.').lower()}" for m in _TITLE.finditer(current)]
    seen = set(words)
    for line in previous:
        for w in dict.fromkeys(_tokens(line)):
            if w not in seen:
                seen.add(w)
                feats.append(f"p:{w}")
    feats.append(f"carry:{carried or '-'}")
    return feats


@dataclass(frozen=True)
class RegisterCues:
    """A fitted model: a weight per feature (unknown features weigh nothing) and a bias."""

    weights: dict[str, float]

    def logit(self, feats: Iterable[str]) -> float:
        """Log-odds of вы against ты."""
        w = self.weights
        return w.get(BIAS, 0.0) + sum(w.get(f, 0.0) for f in feats)

    def write(self, path: str | Path) -> None:
        """The weights as 'feature<TAB>weight' lines, heaviest first (to read the cues)."""
        rows = sorted(self.weights.items(), key=lambda kv: -abs(kv[1]))
        Path(path).write_text("".join(f"{f}\t{w:.4f}\n" for f, w in rows), encoding="utf-8")


@dataclass(frozen=True)
class Example:
    features: list[str]
    formal: bool


def examples(docs: Iterable[Document], reach: int = 8, max_gap: float | None = DEFAULT_MAX_GAP,
             carry_dropout: float = 0.0, seed: int = 0) -> Iterator[Example]:
    """The examples of some documents (`carry_dropout`: the share whose carried register is
    hidden, as at the start of a scene or after a line the model left without one)."""
    rng = random.Random(seed)
    for doc in docs:
        segments = doc.segments
        registers = [lexicon.register(s.tgt) if s.tgt else None for s in segments]
        chains = document_contexts(segments, reach, max_gap if doc.timed else None)
        for i, seg in enumerate(segments):
            if registers[i] is None:
                continue
            previous = [segments[j].src for j in reversed(chains[i])]
            carried = next((registers[j] for j in reversed(chains[i]) if registers[j]), None)
            if carry_dropout and rng.random() < carry_dropout:
                carried = None
            yield Example(features(seg.src, previous, carried), registers[i] == lexicon.FORMAL)


def fit(train: list[Example], min_count: int = 50, epochs: int = 2, batch: int = 512,
        lr: float = 0.01, weight_decay: float = 1e-4, seed: int = 0,
        on_epoch: Callable[[int, float], None] | None = None) -> RegisterCues:
    """A logistic regression over the examples' features."""
    counts = Counter(f for ex in train for f in ex.features)
    vocab = {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= min_count))}
    ids = [[vocab[f] for f in ex.features if f in vocab] for ex in train]
    labels = torch.tensor([float(ex.formal) for ex in train])
    torch.manual_seed(seed)
    table = torch.nn.EmbeddingBag(len(vocab) + 1, 1, mode="sum", padding_idx=len(vocab))
    torch.nn.init.zeros_(table.weight)
    bias = torch.nn.Parameter(torch.logit(labels.mean().clamp(1e-3, 1 - 1e-3)).reshape(1))
    optimiser = torch.optim.AdamW([table.weight, bias], lr=lr, weight_decay=weight_decay)
    order = list(range(len(train)))
    rng = random.Random(seed)
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), batch):
            chosen = order[start:start + batch]
            flat = [i for n in chosen for i in ids[n]]
            offsets = torch.tensor([0, *[len(ids[n]) for n in chosen][:-1]]).cumsum(0)
            z = table(torch.tensor(flat, dtype=torch.long), offsets).squeeze(1) + bias
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z, labels[chosen])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(chosen)
        if on_epoch:
            on_epoch(epoch + 1, total / len(order))
    weights = table.weight.detach().squeeze(1).tolist()
    kept = {f: round(weights[i], 4) for f, i in vocab.items() if abs(weights[i]) >= 5e-4}
    return RegisterCues({BIAS: round(bias.item(), 4), **kept})


def accuracy(cues: RegisterCues, held: list[Example]) -> float:
    """Share of examples whose register the cues say (probability over or under 0.5)."""
    right = sum((cues.logit(ex.features) > 0) == ex.formal for ex in held)
    return right / max(1, len(held))


def report_row(name: str, cues: RegisterCues, held: list[Example], margin: float) -> dict:
    """Accuracy on some examples, the share the cues are sure of (confidence over `margin`)
    and how often those are right, per register said."""
    row: dict = {"examples": name, "n": len(held),
                 "вы share": round(sum(ex.formal for ex in held) / max(1, len(held)), 3),
                 "accuracy": round(accuracy(cues, held), 3)}
    limit = math.log((0.5 + margin) / (0.5 - margin))
    logits = [(cues.logit(ex.features), ex.formal) for ex in held]
    decided = [(z > 0, formal) for z, formal in logits if abs(z) > limit]
    row["sure"] = round(len(decided) / max(1, len(held)), 3)
    for said, label in ((True, "вы said: right"), (False, "ты said: right")):
        chosen = [formal == said for s, formal in decided if s == said]
        row[label] = f"{sum(chosen) / max(1, len(chosen)):.3f} of {len(chosen)}"
    return row


def ctxpro_examples(items: Iterable[CtxproItem]) -> list[Example]:
    """ctxpro formality items as examples: the English scene, no translation to carry, the
    expected form's register."""
    return [Example(features(item.sentences[-1], item.sentences[-2::-1]),
                    lexicon.register(item.expected) == lexicon.FORMAL) for item in items]


def headroom(cues: RegisterCues, items: Sequence[CtxproItem], translations: Sequence[str],
             probabilities: Sequence[float] = (0.5, 0.62, 0.73, 0.82, 0.88)) -> list[dict]:
    """What asking for вы where the cues are sure could change, against a model's own
    translations of the items' sentences: per confidence, the lines asked, those whose
    translation lacks the вы the reference has (a tag could mend them) and those whose ты it
    has right (a tag would break them)."""
    rows = []
    scored = [(cues.logit(ex.features), ex.formal, lexicon.register(t) == lexicon.FORMAL)
              for ex, t in zip(ctxpro_examples(items), translations, strict=True)]
    for p in probabilities:
        limit = math.log(p / (1 - p))
        asked = [(formal, said) for z, formal, said in scored if z > limit]
        rows.append({"вы asked where p >": p, "lines": len(asked),
                     "could mend": sum(formal and not said for formal, said in asked),
                     "would break": sum(not formal and not said for formal, said in asked),
                     "already вы": sum(said for _, said in asked)})
    return rows
