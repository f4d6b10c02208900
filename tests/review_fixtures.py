"""A deterministic stand-in translator and a small film for the review tests."""

from __future__ import annotations

from collections.abc import Sequence

from subctx.contract import AttentionMap, Hypothesis, Request, Translation
from subctx.decoding import DecodeOptions
from subctx.formats.srt import parse_srt_text
from subctx.guard import GuardSettings
from subctx.review.session import ReviewSession
from subctx.units import plan_document

FILM = """1
00:00:01,000 --> 00:00:03,000
Mom, I can't find my bag.

2
00:00:03,500 --> 00:00:05,000
It was on the table.

3
00:00:05,500 --> 00:00:07,000
Can you see it?

4
00:00:30,000 --> 00:00:32,000
A new scene starts here.

5
00:00:32,500 --> 00:00:34,000
- Where is your brother?
- At school.
"""

RUSSIAN = {
    "Mom, I can't find my bag.": "Мама, я не могу найти свою сумку.",
    "It was on the table.": "Она была на столе.",
    "Can you see it?": "Ты её видишь?",
    "A new scene starts here.": "Здесь начинается новая сцена.",
    "Where is your brother?": "Где твой брат?",
    "At school.": "В школе.",
}


class FakeTranslator:
    """Looks words up; marks a translation made after an edited context; scores the
    dictionary translation best, its forced variants close behind."""

    max_context = 3
    uses_target_context = True
    supports_forced_start = False  # variants stay as the string-level flip

    def _text(self, request: Request) -> str:
        text = RUSSIAN.get(request.text, request.text.upper())
        if request.target_context and request.target_context[-1] not in RUSSIAN.values():
            text += " (после правки)"
        return text

    def translate(self, requests: Sequence[Request], beam_size: int = 4,
                  num_hypotheses: int = 1, return_attention: bool = False) -> list[Translation]:
        out = []
        for r in requests:
            text = self._text(r)
            t = Translation(text, -0.5)
            if num_hypotheses > 1:
                t.alternatives = [Hypothesis(text, -1.0), Hypothesis(text + "..", -3.0)]
            if return_attention and r.source_context:
                src = ["▁" + w for w in r.source_context[-1].split()] + ["<sep>", "▁x", "</s>"]
                row = [0.0] * len(src)
                row[min(4, len(src) - 4)] = 1.0
                t.attention = AttentionMap(src, ["▁y"], [row])
            out.append(t)
        return out

    def score(self, requests: Sequence[Request], candidates: Sequence[str]) -> list[Hypothesis]:
        out = []
        for r, c in zip(requests, candidates, strict=True):
            best = self._text(r)
            out.append(Hypothesis(c, -1.0 if c == best else -3.0 if c.endswith("..") else -1.7))
        return out


def make_session(context: int = 1, options: DecodeOptions | None = None) -> ReviewSession:
    """The film under review; by default every change context makes is kept (scope `all`,
    no guard: the fake's context mark would not pass the guard's score check)."""
    sub = parse_srt_text(FILM)
    plan = plan_document(sub)
    translator = FakeTranslator()
    texts = [translator._text(Request(u.text)) for u in plan.units]
    options = options or DecodeOptions(context=context, guard=GuardSettings(enabled=False))
    session = ReviewSession(sub, plan, translator, options, texts)
    for u in range(len(plan.units)):
        session.analyze(u)
    return session
