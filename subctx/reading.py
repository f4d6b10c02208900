"""Reading speed: a cue over `--max-cps` or `--max-lines` gets a shorter translation that the
model finds about as likely.

Once a document is translated (every unit final), its cues are checked as the summary checks
them (subctx.wrap.readability). The units of the cues over a limit, and only those, are decoded
again with the request the decoder used (the same English, the same context translations),
asking for the `hypotheses` best. A hypothesis is a candidate for a unit when it is shorter
than the unit's translation, its log-probability per token is at most `margin` below the
translation's (both scored with that request), it changes no gender or pronoun, shows no
speaker's gender the translation does not and brings in no ты or вы the translation has none
of (`keeps_choices`: later lines read the translation as it was decoded and may have followed
those choices) and it does not loop. Of the combinations
of candidates for a cue's units, the cue gets the likeliest that brings it within both limits;
a cue that none brings within them keeps its translation and stays in the summary (`partial`
gives it the shortest combination instead: measured, that costs chrF and brings no more cues
within the limits). A cue that would have to lose more than `max_cut` of its characters is not
decoded again, nor one over `max_lines` only because it has more turns than lines.

Later units keep the context they were translated with: the fit runs after the whole document
is final and decodes nothing after it again. docs/decoding.md ("Reading speed") has the
measurements behind the margin and the default.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from subctx import agreement, lexicon
from subctx.backends.output import loops
from subctx.context import build_request
from subctx.contract import Hypothesis, Request, Translation, Translator
from subctx.controls import for_line
from subctx.decoding import DecodeOptions, DocumentResult
from subctx.units import render_cue
from subctx.wrap import Layout, readability, visible_chars

MAX_COMBINATIONS = 512  # candidate combinations tried for one cue (a cue has few units)

Timing = tuple[float | None, float | None]


@dataclass(frozen=True)
class ReadingFit:
    """Whether and how cues over the limits get shorter translations."""

    enabled: bool = True
    margin: float = 0.5  # nats a shorter translation may score below the decoder's, per token
    hypotheses: int = 16  # the n best asked for each unit of a cue over a limit
    per_token: bool = True  # the margin is on log-probability per token (else on the total)
    partial: bool = False  # a cue no candidate brings within the limits gets the shortest
    max_cut: float = 0.4  # a cue that must lose more of its characters is not decoded again


DEFAULT_FIT, NO_FIT = ReadingFit(), ReadingFit(enabled=False)


@dataclass
class FitReport:
    """What the fit did to one document."""

    over: list[int] = field(default_factory=list)  # cue indices over a limit before the fit
    shortened: list[int] = field(default_factory=list)  # cues given shorter translations
    units: int = 0  # units decoded again
    seconds: float = 0.0  # spent decoding and choosing


def decoder_request(result: DocumentResult, unit: int, options: DecodeOptions) -> Request:
    """The request a unit's translation came from, as far as the result tells: with its context
    translations (as decoded: the document is final) unless it has no context, the scope needs
    none for its English, or it fell back to its translation without context."""
    text = result.plan.units[unit].text
    if (not result.contexts[unit] or result.translations[unit].fallback is not None
            or not options.scope.needs_context(text)):
        return Request(text, controls=for_line(options.controls, text))
    return build_request(result.plan.units, result.contexts, unit, result.translations,
                         options.controls, options.carry)


def decode_again(result: DocumentResult, units: Sequence[int], translator: Translator,
                 options: DecodeOptions, hypotheses: int
                 ) -> tuple[list[Request], list[Translation]]:
    """Units of a final document decoded again with the requests their translations came from
    (`decoder_request`), asking for the `hypotheses` best (at least 2); the requests too."""
    requests = [decoder_request(result, u, options) for u in units]
    n = max(2, hypotheses)
    return requests, translator.translate(requests, beam_size=max(options.beam_size, n),
                                          num_hypotheses=n)


def _per_token(hypothesis: Hypothesis) -> float:
    return hypothesis.log_prob / max(1, hypothesis.tokens)


def _total(hypothesis: Hypothesis) -> float:
    return hypothesis.log_prob


def _length(text: str) -> int:
    return len(" ".join(text.split()))


def keeps_choices(translation: str, shorter: str) -> bool:
    """Whether a shorter translation keeps the choices later lines may have followed: no other
    gender or pronoun (subctx.agreement.changes: one stem's two forms), no speaker's gender the
    translation does not show (subctx.lexicon.speaker_genders: «Я приготовила ужин» -> «Я
    ужинал» is another verb in the other gender), and no form of address of a register the
    translation has none of (it may say less: «Ты знаешь, он ушёл» -> «Он ушёл»)."""
    kinds = agreement.changes(translation, shorter)
    if kinds - {agreement.FORMALITY}:
        return False
    if not lexicon.speaker_genders(shorter) <= lexicon.speaker_genders(translation):
        return False
    had, has = lexicon.address(translation), lexicon.address(shorter)
    return not any(new and not old for old, new in zip(had, has, strict=True))


def candidates(source: str, current: Hypothesis, alternatives: Sequence[Hypothesis],
               margin: float, per_token: bool = True) -> list[tuple[str, float]]:
    """The unit's translation (cost 0) and every alternative that may replace it, with its cost:
    how far below the translation it scores, in log-probability per token or in all (negative
    when the model likes it better). Shortest first."""
    score = _per_token if per_token else _total
    best = score(current)
    out = [(current.text, 0.0)]
    seen = {current.text}
    for alt in alternatives:
        text = alt.text.strip()
        cost = best - score(alt)
        if (not text or text in seen or _length(text) >= _length(current.text)
                or cost > margin or not keeps_choices(current.text, text)
                or loops(source, text)):
            continue
        seen.add(text)
        out.append((text, cost))
    return sorted(out, key=lambda pair: (_length(pair[0]), pair[1]))


def _over(timing: Timing, lines: list[str], layout: Layout) -> bool:
    return bool(readability([timing], [lines], layout.max_lines, layout.max_cps).over)


def _choose(result: DocumentResult, cue: int, timing: Timing, texts: list[str],
            options: dict[int, list[tuple[str, float]]], layout: Layout, partial: bool
            ) -> dict[int, str]:
    """The cue's units' translations: the likeliest combination of candidates that brings the
    cue within the limits; else the shortest where `partial`, else none."""
    units = [u for u in result.plan.layouts[cue].units if len(options.get(u, ())) > 1]
    lists = [options[u] for u in units]
    if math.prod(map(len, lists)) > MAX_COMBINATIONS:  # many units: each as it is or shortest
        lists = [[x[0], x[-1]] for x in lists]  # (the translation is the longest candidate)
    best: tuple[tuple[float, ...], dict[int, str]] | None = None
    for combination in itertools.islice(itertools.product(*lists), MAX_COMBINATIONS):
        trial = list(texts)
        for u, (text, _) in zip(units, combination, strict=True):
            trial[u] = text
        lines = render_cue(result.plan.layouts[cue], trial, layout.width, layout.max_lines)
        cost = sum(c for _, c in combination)
        chars = sum(_length(line) for line in lines)
        key = (0.0, cost, chars) if not _over(timing, lines, layout) else (1.0, chars, cost)
        if best is None or key < best[0]:
            best = key, {u: text for u, (text, _) in zip(units, combination, strict=True)}
    if best is None or (best[0][0] and not partial):
        return {}
    return best[1]


def fit_reading_speed(result: DocumentResult, timings: Sequence[Timing], translator: Translator,
                      options: DecodeOptions, layout: Layout, fit: ReadingFit = DEFAULT_FIT
                      ) -> FitReport:
    """Give the cues of a translated document that are over a limit shorter translations (the
    module's docstring says which); `result.translations` is changed in place. `timings`: each
    cue's (start, end)."""
    started = time.perf_counter()
    texts = result.texts()
    lines = [render_cue(cue, texts, layout.width, layout.max_lines)
             for cue in result.plan.layouts]
    report = FitReport(readability(list(timings), lines, layout.max_lines, layout.max_cps).over)
    if not fit.enabled or not report.over:
        return report
    units = [u for c in report.over
             if _worth_decoding(result, c, timings[c], texts, layout, fit.max_cut)
             for u in result.plan.layouts[c].units]
    units = list(dict.fromkeys(units))
    if not units:
        return report
    requests, decoded = decode_again(result, units, translator, options, fit.hypotheses)
    current = _current_scores(translator, units, requests, texts, decoded)
    choices = {u: candidates(result.plan.units[u].text, current[u], out.alternatives,
                             fit.margin, fit.per_token)
               for u, out in zip(units, decoded, strict=True)}
    report.units = len(units)
    for c in report.over:
        chosen = _choose(result, c, timings[c], texts, choices, layout, fit.partial)
        changed = {u: text for u, text in chosen.items() if text != texts[u]}
        for u, text in changed.items():
            old = result.translations[u]
            result.translations[u] = Translation(text, old.score, old.alternatives,
                                                 fallback=old.fallback)
        if changed:
            report.shortened.append(c)
    report.seconds = time.perf_counter() - started
    return report


def _worth_decoding(result: DocumentResult, cue: int, timing: Timing, texts: list[str],
                    layout: Layout, max_cut: float) -> bool:
    """Whether a shorter translation could bring the cue within the limits: not when only its
    lines are over and it has more turns (or sung lines) than `max_lines`, nor when it would
    have to lose more than `max_cut` of its characters."""
    cue_layout = result.plan.layouts[cue]
    if not cue_layout.units:
        return False
    lines = render_cue(cue_layout, texts, layout.width, layout.max_lines)
    chars = max(1, visible_chars(lines))
    checks = readability([timing], [lines], layout.max_lines, layout.max_cps)
    keep = 1.0  # the share of its characters the cue may keep
    if checks.too_fast:
        start, end = timing
        keep = layout.max_cps * (end - start) / chars  # type: ignore[operator]
    if checks.over_lines:
        shortest = list(texts)
        for u in cue_layout.units:
            shortest[u] = "…"
        if len(render_cue(cue_layout, shortest, layout.width, layout.max_lines)) \
                > layout.max_lines:
            return bool(checks.too_fast) and keep >= 1 - max_cut
        keep = min(keep, layout.max_lines * layout.width / chars)
    return keep >= 1 - max_cut


def _current_scores(translator: Translator, units: list[int], requests: list[Request],
                    texts: list[str], decoded: list[Translation]) -> dict[int, Hypothesis]:
    """Each unit's translation scored with its request: from the n-best where it is there,
    else scored (the n-best's wider beam may not find the decoder's translation)."""
    found: dict[int, Hypothesis] = {}
    missing: list[int] = []
    for i, (u, out) in enumerate(zip(units, decoded, strict=True)):
        hit = next((h for h in out.alternatives if h.text == texts[u]), None)
        if hit is not None:
            found[u] = hit
        else:
            missing.append(i)
    if missing:
        scored = translator.score([requests[i] for i in missing],
                                  [texts[units[i]] for i in missing])
        found.update({units[i]: h for i, h in zip(missing, scored, strict=True)})
    return found
