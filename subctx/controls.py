"""Control tags: what a translator can tell the model that English leaves open.

Two kinds, each with two values:

- FORMALITY: INFORMAL (ты) or FORMAL (вы, said to one person);
- SPEAKER_GENDER: MASCULINE or FEMININE (я сделал / я сделала, я уверен / уверена).

A model trained with control tags (subctx-train's `control_share`, labels from
subctx_train.labels) saw, for a share of its examples, the current sentence's source start with
the pieces of its Russian's labels: <inf> / <frm>, then <masc> / <fem> (SpecialTokens names
them), right before the sentence's own pieces; the rest of its examples carry none, so it also
translates without them. Its bundle lists the kinds it knows in `Manifest.controls`; the pieces
of a kind it does not list mean nothing to it.

`control_pieces` turns what a user asks (--formality, --speaker-gender: 'auto' asks nothing)
into the pieces to put before the current sentence, in the order training put them, or says in
one line why this model cannot take them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from subctx import lexicon
from subctx.contract import SpecialTokens, Translation
from subctx.errors import BundleError

if TYPE_CHECKING:  # the manifest only names what a bundle knows (no import of the bundle)
    from subctx.bundle import Manifest

FORMALITY, SPEAKER_GENDER = "formality", "speaker_gender"
INFORMAL, FORMAL, MASCULINE, FEMININE = "informal", "formal", "masculine", "feminine"
AUTO = "auto"  # ask nothing: the model decides, from the sentence and its context

CONTROLS: dict[str, tuple[str, ...]] = {FORMALITY: (INFORMAL, FORMAL),
                                        SPEAKER_GENDER: (MASCULINE, FEMININE)}
"""Each kind's values, kinds in the order their pieces come (formality first)."""

OPTIONS = {FORMALITY: "--formality", SPEAKER_GENDER: "--speaker-gender"}
"""The app's option for each kind."""

_WORDS = {FORMALITY: "formality", SPEAKER_GENDER: "speaker-gender"}


def choices(kind: str) -> tuple[str, ...]:
    """What the option of a kind accepts: auto, then the kind's values."""
    return (AUTO, *CONTROLS[kind])


def tag_piece(value: str, tokens: SpecialTokens | None = None) -> str:
    """The piece of a value (INFORMAL -> '<inf>')."""
    tokens = tokens or SpecialTokens()
    return {INFORMAL: tokens.informal_tag, FORMAL: tokens.formal_tag,
            MASCULINE: tokens.masculine_tag, FEMININE: tokens.feminine_tag}[value]


def kind_of(value: str) -> str:
    """The kind a value belongs to (FEMININE -> SPEAKER_GENDER)."""
    return next(kind for kind, values in CONTROLS.items() if value in values)


# -- where a line can show a kind ----------------------------------------------------------------
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|ya|y'all|sorry)\b",
                            re.IGNORECASE)  # (I'm) sorry: Извини / Извините
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:I|I'm|I've|I'd|I'll|me|myself)(?![\w'])")
# words an order, an apology or a suggestion opens with: Russian says them to ты or to вы
# (Sit down. -> Сядь / Сядьте; Sorry. -> Извини / Извините; Let's go. -> Давай / Давайте)
_ADDRESS_OPENERS = (
    "ask|be|believe|bring|buy|call|calm|catch|check|close|come|cut|dance|do|don't|drink|drop|"
    "eat|enjoy|excuse|find|follow|forget|forgive|freeze|get|give|go|grab|guess|hand|hang|have|"
    "help|hide|hit|hold|hurry|imagine|invite|keep|kill|kiss|knock|leave|let|let's|listen|look|"
    "make|marry|meet|move|open|pay|pick|play|please|promise|put|quit|read|relax|remember|run|"
    "say|see|send|show|shut|sign|sit|sleep|smile|sorry|speak|stand|stay|stop|take|talk|tell|"
    "think|throw|trust|try|turn|use|wait|wake|watch|write")
_INTERJECTIONS = "oh|okay|ok|well|now|so|and|but|hey|just|no|yes|yeah|come on|please|all right"
_ADDRESS = re.compile(
    rf"(?:^|[.!?…;:]\s*|(?:^|\s)-\s*)(?:(?:{_INTERJECTIONS})\b[,!.]?\s*)*"
    rf"(?:[A-Z][a-z]+,\s*)?(?:{_ADDRESS_OPENERS})\b", re.IGNORECASE)


def can_show(kind: str, english: str) -> bool:
    """Whether the Russian of an English line can show a kind, so that its tag applies: ты/вы
    where the line says 'you' or opens a clause with an order, an apology or a suggestion; the
    speaker's gender where it says 'I' or 'me'. A tag on a line that shows neither is what
    training never did (tags went only with targets that show them): it only moves the wording."""
    if kind == FORMALITY:
        return bool(_SECOND_PERSON.search(english) or _ADDRESS.search(english))
    return bool(_FIRST_PERSON.search(english))


_PIECE_KINDS = {tag_piece(v): kind for kind, values in CONTROLS.items() for v in values}


def for_line(controls: Iterable[str], english: str) -> tuple[str, ...]:
    """The control pieces that apply to one English line (`can_show`); a piece of no known
    kind always does."""
    return tuple(p for p in controls
                 if p not in _PIECE_KINDS or can_show(_PIECE_KINDS[p], english))


def known_controls(has_piece: Callable[[str], bool], tokens: SpecialTokens | None = None
                   ) -> list[str]:
    """The kinds whose every piece a tokenizer has (`has_piece(piece)`), in CONTROLS order: a
    tokenizer made before control tags has none."""
    return [kind for kind, values in CONTROLS.items()
            if all(has_piece(tag_piece(v, tokens)) for v in values)]


def tags(values: Iterable[str], tokens: SpecialTokens | None = None) -> list[str]:
    """The pieces of some values (at most one per kind), in CONTROLS order."""
    chosen = {kind_of(v): v for v in values}
    return [tag_piece(chosen[kind], tokens) for kind in CONTROLS if kind in chosen]


def control_pieces(manifest: Manifest, formality: str = AUTO, speaker_gender: str = AUTO
                   ) -> tuple[str, ...]:
    """The tag pieces to put before the current sentence's source for what is asked ('auto':
    nothing); BundleError in one line where the model was not trained with that kind of tag,
    ValueError for a value no option accepts."""
    asked = {FORMALITY: formality, SPEAKER_GENDER: speaker_gender}
    for kind, value in asked.items():
        if value not in choices(kind):
            raise ValueError(f"{OPTIONS[kind]} is one of {', '.join(choices(kind))}, "
                             f"not {value!r}")
    wanted = {kind: value for kind, value in asked.items() if value != AUTO}
    missing = [kind for kind in wanted if kind not in manifest.controls]
    if missing:
        kinds = " or ".join(_WORDS[k] for k in missing)
        options = " and ".join(f"{OPTIONS[k]} auto" for k in missing)
        raise BundleError(f"this model was not trained with {kinds} tags; use {options} "
                          f"(or a model whose subctx.json lists them under \"controls\")")
    return tuple(tags(wanted.values(), manifest.special_tokens))


@dataclass(frozen=True)
class RegisterCarry:
    """`--formality auto` with a model that knows formality tags: a scene keeps the register
    it has used. A line whose context chain (the context rule's previous lines, walking back at
    most `reach` lines) has a translation with ты forms and no вы forms, or the reverse, gets
    that register's tag, from the nearest such translation; the first line of a scene, and a
    line after translations with neither, is free (no tag)."""

    informal: str  # the pieces of the two registers
    formal: str
    reach: int = 8

    def piece(self, contexts: Sequence[Sequence[int]], unit: int,
              translated: Sequence[Translation | None]) -> str | None:
        """The tag for `unit`, from the translations so far (None: free)."""
        told = self.told_by(contexts, unit, translated)
        return None if told is None else self.tag(lexicon.register(told))  # type: ignore[arg-type]

    def told_by(self, contexts: Sequence[Sequence[int]], unit: int,
                translated: Sequence[Translation | None]) -> str | None:
        """The translation whose register `unit` carries (None: free)."""
        current = unit
        for _ in range(self.reach):
            if not contexts[current]:
                return None
            current = max(contexts[current])
            done = translated[current]
            if done is None:
                return None
            if lexicon.register(done.text) is not None:
                return done.text
        return None

    def tag(self, register: str) -> str:
        """The piece of a register as subctx.lexicon names it (ты or вы)."""
        return self.informal if register == lexicon.INFORMAL else self.formal

    def without(self, controls: tuple[str, ...]) -> tuple[str, ...]:
        """Control pieces less this kind's."""
        return tuple(c for c in controls if c not in (self.informal, self.formal))


def register_carry(manifest: Manifest, formality: str = AUTO) -> RegisterCarry | None:
    """What `--formality auto` does with this model: carry the scene's register where it was
    trained with formality tags, else nothing (None)."""
    if formality != AUTO or FORMALITY not in manifest.controls:
        return None
    return RegisterCarry(tag_piece(INFORMAL, manifest.special_tokens),
                         tag_piece(FORMAL, manifest.special_tokens))


@dataclass(frozen=True)
class GenderTags:
    """The speaker-gender pieces of a model trained with them (the review's `g` asks with
    them)."""

    masculine: str
    feminine: str

    def piece(self, value: str) -> str:
        return self.masculine if value == MASCULINE else self.feminine

    def without(self, controls: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(c for c in controls if c not in (self.masculine, self.feminine))


def gender_tags(manifest: Manifest) -> GenderTags | None:
    """The model's speaker-gender pieces, or None where it was not trained with them."""
    if SPEAKER_GENDER not in manifest.controls:
        return None
    return GenderTags(tag_piece(MASCULINE, manifest.special_tokens),
                      tag_piece(FEMININE, manifest.special_tokens))
