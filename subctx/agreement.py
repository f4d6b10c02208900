"""What a previous line is for: agreement.

English leaves out what a Russian translation must say, and the previous line often tells:
ты or вы (and the verb forms that go with them), the gender of the speaker or the listener
(я был / я была, ты уверен / уверена), and the gender of a pronoun that stands for something
said before (it -> он / она / оно). `changes(plain, with_context)` names which of these differ
between two translations of one cue; `needs_context(source)` tells, from the English, whether a
cue can carry any of those the scope below keeps (a listener or a thing referred to, an order
given, or a verb left out: "I did." needs the previous line's verb).

The guard's 'agreement' scope translates with context only the cues that can, and keeps such a
translation only where it changes ты/вы or a pronoun, or fills in an elided verb (`keeps`): the
other differences a previous line brings are, for a model that has not learnt more from
context, as likely to hurt as to help.

Word forms are compared pairwise (a word only in one translation against a word only in the
other), by endings: no dictionary, so a rare pair may be missed or taken for agreement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from subctx import lexicon
from subctx.lexicon import FORMAL, INFORMAL

FORMALITY, GENDER, PRONOUN = "formality", "gender", "pronoun"

# the Russian forms (subctx.lexicon): ты/вы pronouns, verb endings, gender endings
_INFORMAL, _FORMAL = lexicon.INFORMAL_PRONOUNS, lexicon.FORMAL_PRONOUNS
_FORMALITY_ENDINGS = lexicon.PERSON_ENDINGS + lexicon.IMPERATIVE_ENDINGS
# he / she / it and their cases ("его" is also "its": neuter shares the masculine forms)
_THIRD = (lexicon.THIRD_PERSON[lexicon.MASCULINE], lexicon.THIRD_PERSON[lexicon.FEMININE],
          frozenset({"оно"}))


def _forms(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _words(text: str) -> set[str]:
    return set(lexicon.words(text))


def _becomes(x: str, y: str, one: str, other: str) -> bool:
    """Whether `y` is `x` with its ending `one` replaced by `other` (same stem)."""
    return lexicon.moves(x, y, ((one, other),))


def _paired(a: str, b: str, endings: tuple[tuple[str, str], ...]) -> bool:
    """Whether `a` and `b` are one stem with the two endings of some pair, either way."""
    return lexicon.paired(a, b, endings)


def _third_gender(word: str) -> int | None:
    return next((i for i, forms in enumerate(_THIRD) if word in forms), None)


def changes(plain: str, with_context: str) -> frozenset[str]:
    """The kinds of agreement (FORMALITY, GENDER, PRONOUN) in which two translations of the
    same cue differ; empty when they differ in other ways only (or not at all)."""
    a, b = _words(plain), _words(with_context)
    kinds = set()
    if (bool(a & _INFORMAL), bool(a & _FORMAL)) != (bool(b & _INFORMAL), bool(b & _FORMAL)):
        kinds.add(FORMALITY)
    for x in a - b:
        for y in b - a:
            if _paired(x, y, _FORMALITY_ENDINGS):
                kinds.add(FORMALITY)
            if _paired(x, y, lexicon.GENDER_ENDINGS):
                kinds.add(GENDER)
            gx, gy = _third_gender(x), _third_gender(y)
            if gx is not None and gy is not None and gx != gy:
                kinds.add(PRONOUN)
    return frozenset(kinds)


# English words whose Russian translation depends on who is addressed or what was mentioned
# before (you -> ты / вы; it -> он / она / оно). Not I / me (the speaker's gender, which the scope
# leaves alone), he / she (the English says the gender already) nor they (no gender in the
# Russian plural).
_ADDRESS = _forms("you your yours yourself yourselves")
_THINGS = _forms("it its itself")
# orders and requests come without a pronoun in English, not in Russian (смотри / смотрите)
_ORDERS = _forms("look wait listen come go stop take give tell sit stand get let hold stay keep "
                 "try be have leave forget remember hurry calm relax shut help please "
                 "do call bring put show check watch say excuse forgive pardon "
                 "imagine guess trust believe promise answer don't let's")

# a clause that ends on an auxiliary has left its verb to the previous line (I did. / She won't.)
_AUXILIARIES = _forms("do does did don't doesn't didn't will won't would wouldn't can can't "
                      "could couldn't shall should shouldn't have has had haven't hasn't hadn't "
                      "am is are was were isn't aren't wasn't weren't might must may i'm you're "
                      "he's she's it's we're they're")
_AFTER_AUXILIARY = _forms("not too either so though then yet really already anyway")
_REFERENCE, _ADDRESSED = "reference", "addressed"  # what a cue needs its context for
_DO = _forms("do does did")  # after another auxiliary, the main verb: "What do I do?"
_SENTENCE = re.compile(r"([^.!?\u2026]*)([.!?\u2026]+|$)")
_CLAUSE = re.compile(r"[,;:\u2014\"()]+|\s-\s|^-")
_CONTRACTED_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _sentences(source: str) -> list[tuple[str, str]]:
    """A cue's sentences, lower-cased with straight apostrophes: (words, end punctuation)."""
    return _SENTENCE.findall(source.lower().replace("’", "'"))


def _clauses(body: str) -> list[list[str]]:
    """A sentence's clauses (cut at commas, colons, dashes, quotes), each as its words."""
    return [words for part in _CLAUSE.split(body) if (words := _CONTRACTED_WORD.findall(part))]


def _ends_on_auxiliary(sentences: list[tuple[str, str]]) -> bool:
    for body, end in sentences:
        if not end or "\u2026" in end or ".." in end:
            continue
        words = _CONTRACTED_WORD.findall(_CLAUSE.split(body)[-1])
        while words and words[-1] in _AFTER_AUXILIARY:
            words = words[:-1]
        main_verb_do = bool(words) and words[-1] in _DO and bool(_AUXILIARIES & set(words[:-1]))
        if words and len(words) <= 4 and words[-1] in _AUXILIARIES and not main_verb_do:
            return True
    return False


def elided(source: str) -> bool:
    """Whether a sentence of an English cue ends, in a short clause, on an auxiliary: its verb
    is left to the line before (ctxpro's auxiliary ellipsis: "I did." -> «Видел.»). A sentence
    that trails off ("this is...") or goes on after a comma ("He did, however, ...") has not."""
    return _ends_on_auxiliary(_sentences(source))


def _trigger(source: str) -> str | None:
    """What in an English cue context could change, as far as `keeps` goes: a thing referred
    to or an elided verb (_REFERENCE), else words of address (_ADDRESSED), else None."""
    sentences = _sentences(source)
    clauses = [clause for body, _ in sentences for clause in _clauses(body)]
    words = {w.split("'")[0] for clause in clauses for w in clause}
    if _THINGS & words or _ends_on_auxiliary(sentences):
        return _REFERENCE
    if _ADDRESS & words or any(c[0] in _ORDERS for c in clauses):
        return _ADDRESSED
    return None


def needs_context(source: str) -> bool:
    """Whether an English cue has a word whose Russian form may depend on the previous line, as
    far as `keeps` goes: it, an elided verb, or words of address (you, a verb that gives an
    order, first in its clause)."""
    return _trigger(source) is not None


def worth_asking(source: str, plain: str, previous: Sequence[str]) -> bool:
    """Whether a translation with context could be kept (`keeps`), once the plain translation
    and the context translations are known: a cue whose only such words are of address can only
    move to the register the context translations tell, so it is not worth decoding where they
    tell none or the plain translation has it already."""
    trigger = _trigger(source)
    if trigger != _ADDRESSED:
        return trigger is not None
    told = _told(previous)
    return told is not None and register(plain) != told


def _told(previous: Sequence[str]) -> str | None:
    """The register of the nearest context translation that has one."""
    return next((r for r in map(register, reversed(previous)) if r is not None), None)


def register(text: str) -> str | None:
    """INFORMAL (ты) or FORMAL (вы) where a translation's pronouns say which, else None."""
    words = _words(text)
    informal, formal = bool(words & _INFORMAL), bool(words & _FORMAL)
    return INFORMAL if informal and not formal else FORMAL if formal and not informal else None


def _moved_to(plain: str, with_context: str) -> str | None:
    """The register a translation with context moves to from the plain one (pronouns and
    verb endings counted), or None where the two count the same."""
    a, b = _words(plain), _words(with_context)
    informal = int(bool(b & _INFORMAL)) - int(bool(a & _INFORMAL))
    formal = int(bool(b & _FORMAL)) - int(bool(a & _FORMAL))
    for x in a - b:
        for y in b - a:
            for t_end, v_end in _FORMALITY_ENDINGS:
                formal += _becomes(x, y, t_end, v_end)
                informal += _becomes(x, y, v_end, t_end)
    return INFORMAL if informal > formal else FORMAL if formal > informal else None


def keeps(source: str, plain: str, with_context: str, previous: Sequence[str] = ()) -> bool:
    """Whether the 'agreement' scope keeps a translation made with context: it changes a
    pronoun's gender, or the cue's verb is elided, or it changes ты/вы *to the register of the
    previous translation* (`previous`: the context translations, nearest last). A ты/вы change
    the previous line does not explain is a guess (the GPU fine-tune's, friends_dev: 27 such
    cues, sentence chrF -24 in sum, against +39 for the 8 that agree). The gender of the speaker
    or the listener is left to the translation without context: a previous line (usually another
    speaker's) rarely tells it (the embedded model's changes of it: 27 cues, half of them against
    the reference, chrF -0.07)."""
    kinds = changes(plain, with_context)
    if PRONOUN in kinds or elided(source):
        return True
    if FORMALITY not in kinds:
        return False
    told = _told(previous)
    return told is not None and told == _moved_to(plain, with_context)
