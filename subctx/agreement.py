"""What a previous line is for: agreement.

English leaves out what a Russian translation must say, and the previous line often tells:
ты or вы (and the verb forms that go with them), the gender of the speaker or the listener
(я был / я была, ты уверен / уверена), and the gender of a pronoun that stands for something
said before (it -> он / она / оно). `changes(plain, with_context)` names which of these differ
between two translations of one cue; `needs_context(source)` tells, from the English, whether a
cue can carry any of those the scope below keeps (a listener or a thing referred to, an order
given, or a verb left out: "I did." needs the previous line's verb).

The 'agreement' context scope (subctx.decoding.scope) translates with context only the cues
that can, and keeps such a translation only where it moves ты/вы to the previous line's
register, gives an "it" a pronoun of another gender, or takes an elided verb from the previous
line (`keeps`): the other differences a previous line brings are, for a model that has not
learnt more from context, as likely to hurt as to help.

The Russian forms are subctx.lexicon's. Word forms are compared pairwise (a word only in one
translation against a word only in the other), by endings: no dictionary, so a rare pair may be
missed or taken for agreement. tests/test_agreement_cases.py measures the rules on real cues.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from subctx import lexicon
from subctx.lexicon import FORMAL, INFORMAL

FORMALITY, GENDER, PRONOUN = "formality", "gender", "pronoun"

_FORMALITY_ENDINGS = lexicon.PERSON_ENDINGS + lexicon.IMPERATIVE_ENDINGS
_TO_INFORMAL = tuple((v, t) for t, v in _FORMALITY_ENDINGS)


def _forms(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _words(text: str) -> set[str]:
    return set(lexicon.words(text))


def _genders(word: str) -> frozenset[str]:
    """The singular genders a word can be a third-person pronoun of (the plural has none)."""
    return lexicon.genders(word) - {lexicon.PLURAL}


def _addressed(text: str) -> tuple[bool, bool]:
    """Whether a text uses ты forms, and вы forms (pronouns and verbs)."""
    informal, formal = lexicon.address(text)
    return bool(informal), bool(formal)


def changes(plain: str, with_context: str) -> frozenset[str]:
    """The kinds of agreement (FORMALITY, GENDER, PRONOUN) in which two translations of the
    same cue differ; empty when they differ in other ways only (or not at all)."""
    a, b = _words(plain), _words(with_context)
    kinds = set()
    if _addressed(plain) != _addressed(with_context):
        kinds.add(FORMALITY)
    for x in a - b:
        for y in b - a:
            if lexicon.paired(x, y, _FORMALITY_ENDINGS):
                kinds.add(FORMALITY)
            if lexicon.paired(x, y, lexicon.GENDER_ENDINGS):
                kinds.add(GENDER)
            gx, gy = _genders(x), _genders(y)
            if gx and gy and gx.isdisjoint(gy):
                kinds.add(PRONOUN)
    return frozenset(kinds)


# English words whose Russian translation depends on who is addressed or what was mentioned
# before (you -> ты / вы; it -> он / она / оно). Not I / me (the speaker's gender, which the scope
# leaves alone), he / she (the English says the gender already) nor they (no gender in the
# Russian plural); not itself (its antecedent is in its own clause). "Sorry" is an order in
# Russian (извини / извините).
_ADDRESS = _forms("you your yours yourself yourselves sorry")
_THINGS = _forms("it its")
_NAMED = {lexicon.MASCULINE: _forms("he him his himself"),
          lexicon.FEMININE: _forms("she her hers herself")}
# it that stands for nothing: "damn it", "that's it", "it's okay", "it's been a year", "it seems"
_DUMMY_BEFORE = _forms("damn screw that's")
_DUMMY_AFTER = _forms("okay ok fine alright all over time me him her us them you like been true "
                      "a an the gonna raining snowing late early seems seemed")
_BE = _forms("is was isn't wasn't 's")
_WHAT = _forms("how what")
_ADVERBS = _forms("not just really literally actually probably totally only still already also")
# "you" said to several people: вы whatever the line before says
_SEVERAL = re.compile(r"\byou (?:guys|kids|two|three|all|people|both|girls|boys|ladies|lot)\b|"
                      r"\b(?:y'all|all of you|both of you)\b")
# orders and requests come without a pronoun in English, not in Russian (смотри / смотрите)
_ORDERS = _forms("look wait listen come go stop take give tell sit stand get let hold stay keep "
                 "try be have leave forget remember hurry calm relax shut help please "
                 "do call bring put show check watch say excuse forgive pardon "
                 "imagine guess trust believe promise answer don't let's ask open move run eat "
                 "drink read follow find make turn pick send hide catch push pull drive breathe "
                 "wake enjoy mind behave hear kiss hug grab drop pay start fix clean meet")
# words before the verb of an order: "Just wait.", "So tell me", "Please, sit down."
_BEFORE_ORDER = _forms("just so now and but then please oh well okay ok hey yeah also simply")
# "Do they know?", "Have you seen it?", "Don't you dare": an auxiliary, not an order
_SUBJECTS = _forms("i you we they he she ya anyone anybody everyone everybody someone somebody "
                   "people")
_AUXILIARY_FIRST = _forms("do does did don't doesn't didn't have haven't")
# spoken spellings: "Y'know", "D'ya need any help?"
_SPOKEN = tuple((re.compile(pattern, re.IGNORECASE), written) for pattern, written in (
    (r"\by'know\b", "you know"), (r"\bd'ya\b|\bd'you\b", "do you"), (r"\bya'll\b", "y'all"),
    (r"\bc'mon\b", "come on"), (r"\bgimme\b", "give me"), (r"\blemme\b", "let me")))
# "thank you", "see you" said as such are спасибо / увидимся: no ты or вы in them
_FORMULA = re.compile(r"^(?:thank you|see you)(?: so much| very much| later| then| soon| "
                      r"tomorrow| around| again)?$")

# a clause that ends on an auxiliary has left its verb to the previous line (I did. / She won't.)
_AUXILIARIES = _forms("do does did don't doesn't didn't will won't would wouldn't can can't "
                      "could couldn't shall should shouldn't have has had haven't hasn't hadn't "
                      "am is are was were isn't aren't wasn't weren't might must may i'm you're "
                      "he's she's it's we're they're")
_PRONOUNS = _forms("i you we they he she it there")
_AFTER_AUXILIARY = _forms("not too either so though then yet really already anyway actually now "
                          "again later soon today tomorrow tonight anymore sometimes still once "
                          "twice")
# what may follow an elided clause: "I won't, dear.", "We do, Mr President.", "I didn't, uh..."
_AFTERTHOUGHTS = _AFTER_AUXILIARY | _forms(
    "sir madam ma'am dear honey sweetie sweetheart darling baby babe man dude mom mum dad mommy "
    "daddy guys kid kids boss buddy pal mister miss mr mrs ms doctor doc president lady son "
    "uh um er erm ah oh well but and")
_OPENERS = _forms("but and so well yes yeah no oh maybe sure")  # before an elided clause
# an auxiliary stranded by a question word, not by ellipsis: "Here it is.", "the way they were"
_STRANDERS = _forms("here there where what how way who which whatever wherever whoever as than")
_REFERENCE, _ADDRESSED = "reference", "addressed"  # what a cue needs its context for
_DO = _forms("do does did")  # after another auxiliary, the main verb: "What do I do?"
_CONTRACTED_AUXILIARY = ("'ll", "'d", "'ve")  # what'll, who'd, we've
_SENTENCE = re.compile(r"([^.!?\u2026]*)([.!?\u2026]+|$)")
_CLAUSE = re.compile(r"[,;:\u2014\"()]+|\s-\s|^-|--+")
_CONTRACTED_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?", re.IGNORECASE)
_CUT_OFF = ("--", "\u2014", "-")


def _spoken(source: str) -> str:
    text = source.replace("’", "'")
    for pattern, written in _SPOKEN:
        text = pattern.sub(written, text)
    return text


def _sentences(source: str) -> list[tuple[str, str]]:
    """A cue's sentences, with straight apostrophes and spoken spellings written out (y'know ->
    you know): (words, end punctuation); a sentence cut off with a dash ends on '--'."""
    out = []
    for body, end in _SENTENCE.findall(_spoken(source)):
        if not end and body.rstrip().endswith(_CUT_OFF):
            end = "--"
        if body.strip() or end:
            out.append((body, end))
    return out


def _parts(body: str) -> list[list[str]]:
    """A sentence's clauses (cut at commas, colons, dashes, quotes), each as its words as
    written (capitals kept)."""
    return [words for part in _CLAUSE.split(body) if (words := _CONTRACTED_WORD.findall(part))]


def _clauses(body: str) -> list[list[str]]:
    """A sentence's clauses, each as its words, lower case."""
    return [[w.lower() for w in words] for words in _parts(body)]


def _refers(words: list[str]) -> bool:
    """Whether a clause has an it / its that stands for something said ("I found it"), not
    for nothing ("damn it", "it's okay", "it's been a year", "is it OK?", "it seems")."""
    for i, word in enumerate(words):
        head, _, tail = word.partition("'")
        if head == "its":
            return True
        if head != "it" or (i and words[i - 1] in _DUMMY_BEFORE):
            continue
        rest = [w for w in words[i + 1:] if w not in _ADVERBS]
        if tail == "s" or (i and words[i - 1] in _BE):
            rest = ["is", *rest]
        if rest and rest[0].startswith("seem"):
            continue
        if rest and rest[0] in _BE and (rest[1:2] and rest[1] in _DUMMY_AFTER or (
                not rest[1:] and i and words[i - 1] in _WHAT)):
            continue  # "it's okay", "that's just how it is"
        return True
    return False


def _gives_an_order(words: list[str]) -> bool:
    """Whether a clause begins with an order ("Wait.", "Just tell me", "Don't go"), not with
    an auxiliary and its subject ("Do they know?", "Have you seen it?")."""
    while len(words) > 1 and words[0] in _BEFORE_ORDER:
        words = words[1:]
    if not words or words[0] not in _ORDERS or words == ["please"]:
        return False
    return not (words[0] in _AUXILIARY_FIRST and len(words) > 1 and words[1] in _SUBJECTS)


def _afterthought(words: list[str]) -> bool:
    """Whether a clause after an auxiliary adds nothing to its verb: "too", "sir", "Danny",
    "uh", a tag question ("didn't she")."""
    lower = [w.lower() for w in words]
    if all(w in _AFTERTHOUGHTS for w in lower):
        return True
    if len(words) <= 2 and all(w[0].isupper() and w != "I" for w in words):
        return True  # a name: "Sure you will, Danny."
    return 2 <= len(lower) <= 3 and lower[0] in _AUXILIARIES and lower[-1] in _PRONOUNS and (
        len(lower) == 2 or lower[1] == "not")


def _elided_clause(words: list[str], question: bool) -> bool:
    while len(words) > 1 and words[0] in _OPENERS:
        words = words[1:]
    if question and 2 <= len(words) <= 3 and words[0] in _AUXILIARIES and words[-1] in _PRONOUNS \
            and not (words[0] in _AUXILIARY_FIRST and words[-1] == "it"):
        return True  # "Will we?", "Are you?": the verb is the line before's (not "Do it?")
    while words and words[-1] in _AFTER_AUXILIARY:
        words = words[:-1]
    if not words or len(words) > 4 or words[-1] not in _AUXILIARIES:
        return False
    if words[-1] in _DO and any(w in _AUXILIARIES or w.endswith(_CONTRACTED_AUXILIARY)
                                for w in words[:-1]):
        return False  # "What do I do?", "What'll you do?": the main verb
    return not _STRANDERS & set(words[:-2])  # "Here it is.", "the way they were"


def _ends_on_auxiliary(sentences: list[tuple[str, str]]) -> bool:
    for body, end in sentences:
        if not end:
            continue  # the sentence goes on in the next cue
        parts = _parts(body)
        dropped = False
        while len(parts) > 1 and _afterthought(parts[-1]):
            parts, dropped = parts[:-1], True
        trails = "\u2026" in end or ".." in end or end == "--"
        if not parts or (trails and not dropped):
            continue  # "this is..." trails off
        if _elided_clause([w.lower() for w in parts[-1]], "?" in end):
            return True
    return False


def elided(source: str) -> bool:
    """Whether a sentence of an English cue ends, in a short clause, on an auxiliary: its verb
    is left to the line before (ctxpro's auxiliary ellipsis: "I did." -> «Видел.»), also before
    an afterthought ("I won't, dear.", "Oh, she did, didn't she?", "You did, but...") and in a
    short question ("Will we?"). A sentence that trails off ("this is..."), goes on after a
    comma ("He did, however, ...") or strands its auxiliary after a question word ("Here it
    is.", "That's what it is.") has not."""
    return _ends_on_auxiliary(_sentences(source))


def _trigger(source: str) -> str | None:
    """What in an English cue context could change, as far as `keeps` goes: a thing referred
    to or an elided verb (_REFERENCE), else words of address (_ADDRESSED), else None."""
    sentences = _sentences(source)
    clauses = [clause for body, _ in sentences for clause in _clauses(body)]
    if any(_refers(c) for c in clauses) or _ends_on_auxiliary(sentences):
        return _REFERENCE
    words = {w.split("'")[0] for c in clauses if not _FORMULA.match(" ".join(c)) for w in c}
    if _ADDRESS & words or any(_gives_an_order(c) for c in clauses):
        return _ADDRESSED
    return None


def needs_context(source: str) -> bool:
    """Whether an English cue has a word whose Russian form may depend on the previous line, as
    far as `keeps` goes: an it that stands for something, an elided verb, or words of address
    (you, sorry, a verb that gives an order first in its clause)."""
    return _trigger(source) is not None


def _several(source: str) -> bool:
    """Whether an English cue speaks to several people ("you guys"): вы, whatever came before."""
    return _SEVERAL.search(_spoken(source).lower()) is not None


def worth_asking(source: str, plain: str, previous: Sequence[str]) -> bool:
    """Whether a translation with context could be kept (`keeps`), once the plain translation
    and the context translations are known: a cue whose only such words are of address can only
    move to the register the context translations tell, so it is not worth decoding where they
    tell none or the plain translation has it already (or where "you guys" needs вы anyway)."""
    trigger = _trigger(source)
    if trigger != _ADDRESSED:
        return trigger is not None
    told = _told(previous)
    if told is None or register(plain) == told:
        return False
    return not (told == INFORMAL and _several(source))


def _told(previous: Sequence[str]) -> str | None:
    """The register of the nearest context translation that has one."""
    return next((r for r in map(register, reversed(previous)) if r is not None), None)


def register(text: str) -> str | None:
    """INFORMAL (ты) or FORMAL (вы) where a translation's forms of address say which (pronouns,
    verbs in the second person, imperatives: subctx.lexicon.register), else None."""
    return lexicon.register(text)


def _moved_to(plain: str, with_context: str) -> str | None:
    """The register a translation with context moves to from the plain one: it gains forms of
    that register (a pronoun, a verb or an ending: знаешь -> знаете) and has none of the other.
    A form that is only dropped («с вами» -> nothing) moves nowhere."""
    informal_a, formal_a = lexicon.address(plain)
    informal_b, formal_b = lexicon.address(with_context)
    gained_informal, gained_formal = bool(informal_b - informal_a), bool(formal_b - formal_a)
    a, b = _words(plain), _words(with_context)
    for x in a - b:
        for y in b - a:
            gained_formal |= lexicon.moves(x, y, _FORMALITY_ENDINGS)
            gained_informal |= lexicon.moves(x, y, _TO_INFORMAL)
    was = lexicon.register(plain)
    if gained_informal and not gained_formal and not formal_b and was != INFORMAL:
        return INFORMAL
    if gained_formal and not gained_informal and not informal_b and was != FORMAL:
        return FORMAL
    return None


def _gives_it_a_gender(source: str, plain: str, with_context: str) -> bool:
    """Whether the translation with context has a third-person pronoun of a gender the plain one
    has none of («Я нашла это» -> «Я нашла его»), or in place of one of another gender («Он
    остановился» -> «Она перестала»), for an English it / its (not for he / she, whose gender
    the English says)."""
    clauses = [c for body, _ in _sentences(source) for c in _clauses(body)]
    if not any(_refers(c) for c in clauses):
        return False
    english = {w for c in clauses for w in c}
    named = frozenset(g for g, words in _NAMED.items() if words & english)
    a, b = _words(plain), _words(with_context)
    had = frozenset().union(*map(_genders, a))
    for y in b - a:
        new = _genders(y)
        if new and new.isdisjoint(named) and (new.isdisjoint(had) or any(
                (old := _genders(x)) and old.isdisjoint(new) for x in a - b)):
            return True
    return False


def _takes_from(previous: Sequence[str], plain: str, with_context: str) -> bool:
    """Whether the translation with context has a word (not a form of быть) whose stem is in
    the previous translations and not in the plain one: an elided verb filled in from there."""
    stem = 4
    before = {w[:stem] for text in previous for w in lexicon.words(text) if len(w) >= stem}
    a = _words(plain)
    have = {w[:stem] for w in a}
    return any(len(w) >= stem and w not in lexicon.BE and w[:stem] in before
               and w[:stem] not in have for w in _words(with_context) - a)


def keeps(source: str, plain: str, with_context: str, previous: Sequence[str] = ()) -> bool:
    """Whether the 'agreement' scope keeps a translation made with context: it gives an English
    it a pronoun of another gender, or the cue's verb is elided and the context translation takes
    a word from the previous one, or it moves ты/вы *to the register of the previous
    translation* (`previous`: the context translations, nearest last; not to ты where the cue
    speaks to several people). A ты/вы change the previous line does not explain is a guess (the
    GPU fine-tune's, friends_dev: 27 such cues, sentence chrF -24 in sum, against +39 for the 8
    that agree). The gender of the speaker or the listener is left to the translation without
    context: a previous line (usually another speaker's) rarely tells it (the embedded model's
    changes of it: 27 cues, half of them against the reference, chrF -0.07)."""
    if _gives_it_a_gender(source, plain, with_context):
        return True
    if elided(source) and _takes_from(previous, plain, with_context):
        return True
    moved = _moved_to(plain, with_context)
    if moved is None or (moved == INFORMAL and _several(source)):
        return False
    return moved == _told(previous)
