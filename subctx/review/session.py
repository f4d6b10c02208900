"""The state behind `subctx review`: translations, alternatives, flags, edits, undo, save.

Kept free of any UI so it can be tested directly and driven by the Textual app.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from subctx.context import build_request, document_contexts
from subctx.contract import Request, Translation, Translator
from subctx.controls import FEMININE
from subctx.decoding import DecodeOptions, translate_again
from subctx.formats import SubtitleFile
from subctx.layout import piece_words
from subctx.names import Glossary, keep_renderings
from subctx.review.choices import (
    ambiguous_words,
    choice_signature,
    forced_head,
    forced_variants,
    politeness,
    toward_speaker,
)
from subctx.textio import atomic_write_text
from subctx.units import DocumentPlan, render_cue, render_cues
from subctx.verbatim import restore_verbatim
from subctx.wrap import DEFAULT_MAX_LINES, DEFAULT_WIDTH

CLOSE_LOG_RATIO = math.log(4.0)  # flagged when the runner-up is at least 1/4 as likely


def choice_is_close(alternatives: list, ambiguous: list[tuple[int, int, str]]) -> bool:
    """A context decision that could go either way: the best alternative and the best one
    that *chose differently* (ты/вы, pronoun, gender) are within CLOSE_LOG_RATIO. Runners-up
    that differ only in wording do not count. `alternatives` are sorted best first."""
    kinds = {kind for _, _, kind in ambiguous}
    if not kinds or len(alternatives) < 2:
        return False
    top = alternatives[0]
    chosen = choice_signature(top.text, kinds)
    other = next((a for a in alternatives[1:] if choice_signature(a.text, kinds) != chosen),
                 None)
    return other is not None and top.log_prob - other.log_prob < CLOSE_LOG_RATIO


@dataclass
class Alternative:
    text: str
    log_prob: float
    origin: str  # 'n-best' or 'variant'
    share: float = 0.0  # probability among the listed alternatives


@dataclass
class UnitReview:
    alternatives: list[Alternative] = field(default_factory=list)
    ambiguous: list[tuple[int, int, str]] = field(default_factory=list)
    hint: list[tuple[str, float]] = field(default_factory=list)  # context words by attention
    flagged: bool = False


@dataclass
class Change:
    unit: int
    before: str
    after: str


@dataclass
class LogEntry:
    cue: int
    unit: int
    english: str
    before: str
    after: str
    action: str
    alternatives: list[dict]


@dataclass
class Step:
    """One undoable change: the lines it changed, and whose lines were whose before it."""

    changes: list[Change]
    yours: set[int]
    speakers: dict[int, str]
    as_written: dict[int, list[str]]


LOG_FORMAT = 2  # the review log: a JSON object (format 1 was the bare list of decisions)


@dataclass
class SavedReview:
    """What a review's last save wrote: each line's text, a person's lines, the speakers
    given, the cues kept as written (edited elsewhere, not split into turns)."""

    texts: list[str]
    yours: set[int]
    speakers: dict[int, str]
    as_written: dict[int, list[str]]

    def cue_lines(self, plan: DocumentPlan, cue: int) -> list[str]:
        """The cue's lines as that save wrote them."""
        return self.as_written.get(cue) or render_cue(plan.layouts[cue], self.texts)


def read_saved_review(log_path: Path, plan: DocumentPlan) -> SavedReview | None:
    """The saved state of a review log of this film (`saved_review`); None for an unreadable
    log."""
    try:
        return saved_review(json.loads(Path(log_path).read_text(encoding="utf-8")), plan)
    except (OSError, ValueError):
        return None


def saved_review(data: object, plan: DocumentPlan) -> SavedReview | None:
    """The saved state in a review log's parsed JSON; None for a log of format 1 (decisions
    only) or one whose English lines are not this film's."""
    try:
        if not isinstance(data, dict) or data.get("format") != LOG_FORMAT:
            return None
        lines = data["lines"]
        if [line["english"] for line in lines] != [u.text for u in plan.units]:
            return None
        return SavedReview([str(line["russian"]) for line in lines],
                           {int(u) for u in data.get("yours", [])},
                           {int(u): str(v) for u, v in data.get("speakers", {}).items()},
                           {int(c): [str(x) for x in v]
                            for c, v in data.get("as_written", {}).items()
                            if 0 <= int(c) < len(plan.layouts)})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _decisions(data: object) -> list:
    """The decisions of a review log of either format."""
    if isinstance(data, dict):
        data = data.get("decisions")
    return data if isinstance(data, list) else []


class ReviewSession:
    """One film under review: a plan, its unit translations and what the reviewer did."""

    def __init__(self, sub: SubtitleFile, plan: DocumentPlan, translator: Translator,
                 options: DecodeOptions, texts: list[str],
                 renderings: dict[str, str] | None = None, glossary: Glossary | None = None,
                 as_written: dict[int, list[str]] | None = None):
        self.sub, self.plan, self.translator, self.options = sub, plan, translator, options
        # the film's name renderings (subctx.names), kept in the lines translated again
        self.renderings, self.glossary = dict(renderings or {}), glossary or Glossary()
        k = max(0, min(options.context, translator.max_context))
        self.contexts = document_contexts(plan.units, k, options.max_gap)
        self.texts = list(texts)
        self.reviews: dict[int, UnitReview] = {}
        self.history: list[Step] = []
        self.log: list[LogEntry] = []
        self.accepted: set[int] = set()  # lines a person edited, picked or accepted
        self.kept: list[int] = []  # person's lines the last change left alone
        self.speakers: dict[int, str] = {}  # the speaker gender a person gave a line
        # cues written as they were read (edited elsewhere into lines that do not split into
        # the English cue's turns) until a person changes one of their lines here
        self.as_written: dict[int, list[str]] = dict(as_written or {})
        self.dirty = False

    def _step(self, changes: list[Change]) -> Step:
        """An undo step for `changes`, with whose lines were whose before them."""
        return Step(changes, set(self.accepted), dict(self.speakers), dict(self.as_written))

    # -- analysis ----------------------------------------------------------------------------
    def request(self, unit: int) -> Request:
        done = [Translation(t, 0.0) for t in self.texts]
        return build_request(self.plan.units, self.contexts, unit, done, self.options.controls,
                             self.options.carry)

    def analyze(self, unit: int, refresh: bool = False) -> UnitReview:
        """Alternatives (n-best + forced pronoun variants) with probabilities, and a flag."""
        if unit in self.reviews and not refresh:
            return self.reviews[unit]
        english = self.plan.units[unit].text
        review = UnitReview(ambiguous=ambiguous_words(english))
        request = self.request(unit)
        [best] = self.translator.translate([request], beam_size=max(4, self.options.beam_size),
                                           num_hypotheses=4, return_attention=True)
        candidates = [self.texts[unit]] + [a.text for a in best.alternatives]
        variants = forced_variants(english, self.texts[unit]) if review.ambiguous else []
        variants = self._decoded_variants(request, self.texts[unit], variants)
        texts = list(dict.fromkeys(candidates + variants))
        known = {a.text: a.log_prob for a in best.alternatives}  # n-best: already scored
        missing = [t for t in texts if t not in known]
        known |= {h.text: h.log_prob for h in
                  self.translator.score([request] * len(missing), missing)} if missing else {}
        origins = {t: "n-best" for t in candidates} | {v: "variant" for v in variants
                                                         if v not in candidates}
        review.alternatives = [Alternative(t, known[t], origins[t]) for t in texts]
        top = max(a.log_prob for a in review.alternatives)
        total = sum(math.exp(a.log_prob - top) for a in review.alternatives)
        for a in review.alternatives:
            a.share = math.exp(a.log_prob - top) / total
        review.alternatives.sort(key=lambda a: -a.log_prob)
        review.hint = self._hint(best, english)
        review.flagged = (unit not in self.accepted
                          and choice_is_close(review.alternatives, review.ambiguous))
        self.reviews[unit] = review
        return review

    def _decoded_variants(self, request: Request, current: str, variants: list[str]
                          ) -> list[str]:
        """Let the model write each variant after its flipped word, so that the verbs,
        adjectives and possessives agree ("Вы должен" -> "Вы должны вернуться."); the
        string-level variant stays where the backend cannot force a start."""
        if not variants or not self.translator.supports_forced_start:
            return variants
        heads = [forced_head(current, v) for v in variants]
        requests = [replace(request, forced_start=h) for h in heads]
        outputs = self.translator.translate(requests, beam_size=max(4, self.options.beam_size))
        return list(dict.fromkeys(o.text if o.text.startswith(h.strip()) and o.text else v
                                  for o, h, v in zip(outputs, heads, variants, strict=True)))

    def _hint(self, translation: Translation, english: str) -> list[tuple[str, float]]:
        """Context words the model attended to most while writing the translation."""
        att = translation.context_attention
        if att is not None:  # a context encoder: the current sentence attending to context
            context = att.source_tokens
        else:  # concatenation: the translation attending to the context part of the input
            att = translation.attention
            if att is None or "<sep>" not in att.source_tokens:
                return []
            ctx_end = len(att.source_tokens) - att.source_tokens[::-1].index("<sep>") - 1
            context = att.source_tokens[:ctx_end]
        rows = max(1, len(att.weights))
        weights: dict[str, float] = {}
        for word, idx in piece_words(context):
            mass = sum(row[i] for row in att.weights for i in idx) / rows
            weights[word] = max(weights.get(word, 0.0), mass)
        ranked = sorted(weights.items(), key=lambda kv: -kv[1])
        if translation.context_attention is None:
            # a concatenation model gives the previous line a few percent of its attention
            # in all: show each context word's share of that (if it is not just noise)
            total = sum(weights.values())
            if total < 0.005:
                return []
            return [(w, s / total) for w, s in ranked if s / total >= 0.1][:3]
        return [(w, s) for w, s in ranked if s >= 0.05][:3]

    def _reanalyze(self, units: list[int]) -> None:
        """Refresh alternatives and flags of lines whose text or context changed."""
        for unit in units:
            self.reviews.pop(unit, None)
            self.analyze(unit)

    def flagged_units(self) -> list[int]:
        return [u for u, r in sorted(self.reviews.items()) if r.flagged]

    # -- edits -------------------------------------------------------------------------------
    def dependents(self, unit: int) -> list[int]:
        """Later units whose context chain leads back to `unit`, in order."""
        # Contexts are contiguous runs ending right before their unit, so the first later unit
        # that does not reach back into the chain ends it (a pause broke the context).
        chain, reached = [], {unit}
        for later in range(unit + 1, len(self.plan.units)):
            if not reached & set(self.contexts[later]):
                break
            chain.append(later)
            reached.add(later)
        return chain

    def set_text(self, unit: int, text: str, action: str = "edit", follow: bool = True,
                 before_step: Step | None = None) -> list[Change]:
        """Change one unit; re-translate the units whose context depends on it.
        Returns the follow-up changes (the user may keep or revert them). The same text
        again changes nothing: the line is accepted as it is."""
        before = self.texts[unit]
        step = before_step or self._step([])
        review = self.reviews.get(unit)
        self.log.append(LogEntry(
            self.plan.units[unit].cue + 1, unit, self.plan.units[unit].text, before, text,
            action, [{"text": a.text, "probability": round(a.share, 4), "origin": a.origin}
                     for a in (review.alternatives if review else [])]))
        self.accepted.add(unit)
        self.kept = []
        if review:
            review.flagged = False
        if text == before:
            step.changes = [Change(unit, before, text)]
            self.history.append(step)
            self.dirty = True
            return []
        self.texts[unit] = text
        changes = [Change(unit, before, text)] + self._split_written(unit)
        follow_ups: list[Change] = []
        if follow and self.translator.uses_target_context:
            changed = {unit}
            for later in self.dependents(unit):
                if not changed & set(self.contexts[later]):
                    continue  # its context did not change
                if later in self.accepted:  # a person's line is never re-translated
                    self.kept.append(later)
                    continue
                text = self._again(later)
                if text and text != self.texts[later]:
                    follow_ups.append(Change(later, self.texts[later], text))
                    self.texts[later] = text
                    changed.add(later)
        self._reanalyze([c.unit for c in changes + follow_ups])
        step.changes = changes + follow_ups
        self.history.append(step)
        self.dirty = True
        return follow_ups

    def _split_written(self, unit: int) -> list[Change]:
        """A line of a cue kept as written is changed: the cue is rebuilt from its lines from
        now on, and its other lines that hold no text of their own (the whole cue was shown on
        its first) are translated."""
        cue = self.plan.units[unit].cue
        if self.as_written.pop(cue, None) is None:
            return []
        changes = []
        for other in self.plan.layouts[cue].units:
            if other != unit and not self.texts[other].strip():
                text = self._again(other)
                changes.append(Change(other, self.texts[other], text))
                self.texts[other] = text
        return changes

    def _tagged(self, unit: int, chosen: str) -> str | None:
        """The line translated again with the register tag of `chosen` (ты or вы), so that
        verbs and adjectives agree; None where the model has no formality tags."""
        carry = self.options.carry
        if carry is None:
            return None
        request = self.request(unit)
        return self._translated(replace(request, controls=(carry.tag(chosen),
                                                           *carry.without(request.controls))))

    def _again(self, unit: int) -> str:
        """A machine line translated again with its context as it stands now, as `subctx
        translate` would (the context scope and the guard), its names as the film's."""
        [out] = translate_again(self.plan, self.translator, self.options, self.texts, [unit])
        return self._as_film(self.plan.units[unit].text, out.text)

    def _translated(self, request: Request) -> str:
        """A line translated again, its names written as the film's (`renderings`)."""
        [out] = self.translator.translate([request], beam_size=self.options.beam_size)
        return self._as_film(request.text, out.text)

    def _as_film(self, english: str, translation: str) -> str:
        """A line translated again as the film writes it: its names as the film's
        renderings, its addresses and numbers as the English has them."""
        return restore_verbatim(english, keep_renderings(english, translation, self.renderings,
                                                         self.glossary))

    def set_speaker(self, unit: int, value: str) -> list[Change] | None:
        """The line translated again with the speaker-gender tag of `value` (MASCULINE or
        FEMININE), so that its past tense and adjectives agree (я сделала, я уверена); the
        later lines of its scene follow as after an edit. None where the model has no such
        tags."""
        genders = self.options.genders
        if genders is None:
            return None
        request = self.request(unit)
        tagged = replace(request, controls=(*genders.without(request.controls),
                                            genders.piece(value)))
        text = self._translated(tagged)
        turned = toward_speaker(text, feminine=value == FEMININE)
        if turned is not None:  # the model did not follow its tag here: its own variant with
            # the past tense turned, continued by it so that the rest agrees
            [text] = self._decoded_variants(tagged, text, [turned])
        step = self._step([])
        self.speakers[unit] = value
        return self.set_text(unit, text, f"speaker {value}", before_step=step)

    def carry_choice(self, unit: int) -> list[Change]:
        """Apply this line's ты/вы to the later lines of its scene (same conversation, so
        the same addressee) that chose the other way: each is translated again with that
        register's tag where the model knows formality tags, else becomes its model-written
        variant with the word flipped, and becomes the person's (a later change in the scene
        leaves it alone). A person's lines are kept (listed in `kept`). The caller may keep or
        revert."""
        self.kept = []
        chosen = politeness(self.texts[unit])
        if chosen is None:
            return []
        step = self._step([])
        changes: list[Change] = []
        for later in self.dependents(unit):
            kinds = {k for _, _, k in ambiguous_words(self.plan.units[later].text)}
            current = self.texts[later]
            if "ты/вы" not in kinds or politeness(current) in (None, chosen):
                continue
            if later in self.accepted:
                self.kept.append(later)
                continue
            text = self._tagged(later, chosen)
            if text is None:  # a model without formality tags: its variant with the word flipped
                flipped = [v for v in forced_variants(self.plan.units[later].text, current)
                           if politeness(v) == chosen]
                if not flipped:
                    continue
                [text] = self._decoded_variants(self.request(later), current, flipped[:1])
            if politeness(text) == chosen:
                changes.append(Change(later, current, text))
                self.texts[later] = text
        if changes:
            entry = self.plan.units[unit]
            self.log.append(LogEntry(entry.cue + 1, unit, entry.text, self.texts[unit],
                                     self.texts[unit], f"carry {chosen}", []))
            # the lines a person carried the register to are theirs now: a later change in
            # the scene must not translate them back
            self.accepted.update(c.unit for c in changes)
            self._reanalyze([c.unit for c in changes])
            step.changes = [Change(unit, self.texts[unit], self.texts[unit]), *changes]
            self.history.append(step)
            self.dirty = True
        return changes

    def revert(self, changes: list[Change]) -> None:
        """Undo some follow-up changes but keep the edit that caused them."""
        for change in changes:
            self.texts[change.unit] = change.before
        self._reanalyze([c.unit for c in changes])
        if self.history:
            last = self.history[-1]
            last.changes = [c for c in last.changes if c not in changes]
            # a line reverted is no longer the person's unless it was before the change
            self.accepted -= {c.unit for c in changes} - last.yours

    def accept(self, unit: int) -> None:
        """The line is a person's as it is (undoable)."""
        self.history.append(self._step([Change(unit, self.texts[unit], self.texts[unit])]))
        self.accepted.add(unit)
        if unit in self.reviews:
            self.reviews[unit].flagged = False
        self.log.append(LogEntry(self.plan.units[unit].cue + 1, unit,
                                 self.plan.units[unit].text, self.texts[unit],
                                 self.texts[unit], "accept", []))
        self.dirty = True

    def undo(self) -> list[Change]:
        """Take the last change back, and whose lines were whose before it."""
        if not self.history:
            return []
        step = self.history.pop()
        for change in reversed(step.changes):
            self.texts[change.unit] = change.before
        self.accepted, self.speakers = step.yours, step.speakers
        self.as_written = step.as_written
        units = [c.unit for c in step.changes]
        self._reanalyze(units)
        for unit in units:  # a line that is a person's again is not flagged
            if unit in self.accepted and unit in self.reviews:
                self.reviews[unit].flagged = False
        first = step.changes[0]
        self.log.append(LogEntry(self.plan.units[first.unit].cue + 1, first.unit,
                                 self.plan.units[first.unit].text, first.after,
                                 first.before, "undo", []))
        self.dirty = True
        return step.changes

    def resume(self, log_path: Path) -> int:
        """Take up an earlier review of this film: its decisions go on in this session's log
        and the lines a person decided stay theirs (never flagged, never translated again);
        with a log of format 1, the lines its entries name (edits, picks, accepts, undos
        replayed). Entries that do not belong to this film (another English line at that
        place) are skipped. Returns how many decisions were restored."""
        try:
            data = json.loads(Path(log_path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        saved = saved_review(data, self.plan)
        restored = 0
        for raw in _decisions(data):
            try:
                entry = LogEntry(**raw)
            except TypeError:
                continue
            if not (0 <= entry.unit < len(self.plan.units)) or \
                    self.plan.units[entry.unit].text != entry.english:
                continue
            if saved is None:  # format 1: the decisions say whose lines are whose
                if entry.action == "undo":
                    self.accepted.discard(entry.unit)
                else:
                    self.accepted.add(entry.unit)
            self.log.append(entry)
            restored += 1
        if saved is not None:
            self.accepted |= saved.yours
            self.speakers |= saved.speakers
        for unit in self.accepted:
            if unit in self.reviews:
                self.reviews[unit].flagged = False
        return restored

    # -- output ------------------------------------------------------------------------------
    def cue_lines(self, width: int = DEFAULT_WIDTH,
                  max_lines: int = DEFAULT_MAX_LINES) -> list[list[str]]:
        lines = render_cues(self.plan, self.texts, width, max_lines)
        for cue, written in self.as_written.items():
            lines[cue] = list(written)
        return lines

    def save(self, path: Path, log_path: Path | None = None) -> Path:
        """Write the subtitles atomically, and the review log as JSON beside it: the
        decisions, and what this save wrote (each line's English and Russian, a person's
        lines, the speakers given, the cues kept as written) for taking the review up again."""
        path = Path(path)
        atomic_write_text(path, self.sub.render(self.cue_lines()))
        log_path = log_path or path.with_suffix(".review.json")
        state = {"format": LOG_FORMAT,
                 "decisions": [asdict(e) for e in self.log],
                 "lines": [{"english": u.text, "russian": t}
                           for u, t in zip(self.plan.units, self.texts, strict=True)],
                 "yours": sorted(self.accepted),
                 "speakers": {str(u): v for u, v in sorted(self.speakers.items())},
                 "as_written": {str(c): v for c, v in sorted(self.as_written.items())}}
        atomic_write_text(log_path, json.dumps(state, ensure_ascii=False, indent=1) + "\n")
        self.dirty = False
        return log_path
