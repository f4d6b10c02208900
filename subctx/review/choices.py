"""Which English words hide a choice Russian must make, and the Russian variants to offer.

English `it/they/you/I` say nothing of gender, number or politeness; Russian must choose
(он/она/оно/они, ты/вы, сделал/сделала). For a translation we generate the *forced variants*
— the same sentence with the other choice — so the model can score them against each other.
"""

from __future__ import annotations

import re

from subctx import lexicon

AMBIGUOUS = {
    "it": "gender", "its": "gender", "itself": "gender",
    "they": "number/gender", "them": "number/gender", "their": "number/gender",
    "theirs": "number/gender", "themselves": "number/gender",
    "you": "ты/вы", "your": "ты/вы", "yours": "ты/вы", "yourself": "ты/вы",
    "yourselves": "ты/вы",
    "one": "gender", "ones": "gender",
    "i": "speaker gender",
}
_WORD = re.compile(r"[A-Za-z']+")

# the Russian forms that trade places (subctx.lexicon), lower case
_POLITENESS = lexicon.PRONOUN_PAIRS
_GENDER_SETS = lexicon.THIRD_PERSON_CASES  # (он, она, оно, они) case by case


def ambiguous_words(english: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) spans of English words whose Russian depends on context."""
    spans = []
    for match in _WORD.finditer(english):
        word = match.group(0).lower()
        kind = AMBIGUOUS.get(word) or AMBIGUOUS.get(word.split("'")[0])
        if kind:
            spans.append((match.start(), match.end(), kind))
    return spans


def _replace_word(text: str, old: str, new: str) -> str:
    def swap(match: re.Match) -> str:
        word = match.group(0)
        if word.isupper() and len(word) > 1:
            return new.upper()
        return new.capitalize() if word[0].isupper() else new

    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", swap, text, flags=re.IGNORECASE)


def _contains(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def forced_variants(english: str, russian: str) -> list[str]:
    """Russian variants that flip the choices `english` leaves open (ты↔вы, он/она/оно/они,
    the speaker's gender in past-tense verbs)."""
    kinds = {kind for _, _, kind in ambiguous_words(english)}
    variants: list[str] = []
    if "ты/вы" in kinds:
        for a, b in _POLITENESS:
            if _contains(russian, a):
                variants.append(_swap_family(russian, _POLITENESS, to_polite=True))
                break
            if _contains(russian, b):
                variants.append(_swap_family(russian, _POLITENESS, to_polite=False))
                break
    if kinds & {"gender", "number/gender"}:
        for forms in _GENDER_SETS:
            present = [f for f in forms if _contains(russian, f)]
            if present:
                for index, other in enumerate(forms):
                    if other != present[0] and other not in forms[:index]:
                        variant = _replace_word(russian, present[0], other)
                        if forms is _GENDER_SETS[0]:  # a subject: past tense agrees
                            variant = _past_tense_to(variant, lexicon.PAST_ENDINGS[index])
                        variants.append(variant)
                break
    if "speaker gender" in kinds:
        flipped = _flip_past_tense(russian)
        if flipped != russian:
            variants.append(flipped)
    return [v for v in dict.fromkeys(variants) if v != russian]


def choice_signature(russian: str, kinds: set[str]) -> tuple:
    """What a Russian sentence chose where English left it open, for the given kinds of
    choice: politeness (ты/вы), the third-person pronouns used (он/она/оно/они...) and the
    past-tense agreement endings (сделал/сделала/сделали). Two translations that differ only
    in other words have the same signature."""
    words = lexicon.words(russian)
    parts: list = []
    if "ты/вы" in kinds:
        informal, polite = lexicon.address(russian)
        parts.append(("politeness", bool(informal), bool(polite)))
    if kinds & {"gender", "number/gender"}:
        pronouns = sorted({w for w in words for forms in _GENDER_SETS if w in forms})
        parts.append(("pronouns", tuple(pronouns)))
    if kinds & {"gender", "number/gender", "speaker gender", "ты/вы"}:
        endings = sorted({m.group(2).lower() for m in lexicon.PAST_TENSE.finditer(russian)
                          if m.group(1).lower() not in lexicon.NOT_PAST_STEMS})
        parts.append(("past", tuple(endings)))
    return tuple(parts)


def politeness(russian: str) -> str | None:
    """'ты' or 'вы' when a translation addresses someone one way only, else None."""
    return lexicon.register(russian)


def forced_head(original: str, variant: str) -> str:
    """The start of `variant` up to and including its first word that differs from
    `original` ("Вы должен вернуться." vs "Ты должен..." -> "Вы"): what to force so that the
    model writes the rest in agreement."""
    theirs = list(re.finditer(r"\w+", variant))
    mine = [m.group(0) for m in re.finditer(r"\w+", original)]
    for i, match in enumerate(theirs):
        if i >= len(mine) or match.group(0) != mine[i]:
            return variant[: match.end()]
    return variant


def _swap_family(text: str, pairs: tuple[tuple[str, str], ...], to_polite: bool) -> str:
    out = text
    for informal, polite in pairs:
        source, target = (informal, polite) if to_polite else (polite, informal)
        out = _replace_word(out, source, target)
    # imperatives (смотри <-> смотрите), then verbs in the second person: можешь <-> можете,
    # говоришь <-> говорите, боишься <-> боитесь; and the past tense: был -> были
    for informal, polite in lexicon.IMPERATIVES:
        source, target = (informal, polite) if to_polite else (polite, informal)
        out = _replace_word(out, source, target)
    for informal, polite in lexicon.PERSON_ENDINGS:
        source, target = (informal, polite) if to_polite else (polite, informal)
        out = re.sub(rf"(?<!\w)([а-яё]{{2,}}){source}(?!\w)", rf"\g<1>{target}", out,
                     flags=re.IGNORECASE)
    return _past_tense_to(out, "ли") if to_polite else out


def _past_tense_to(text: str, ending: str) -> str:
    """Put every past-tense-looking verb (был, сказала...) into the given agreement ending."""
    def change(match: re.Match) -> str:
        stem, reflexive = match.group(1), match.group(3)
        if stem.lower() in lexicon.NOT_PAST_STEMS:
            return match.group(0)
        suffix = ("ся" if ending == "л" else "сь") if reflexive else ""
        return f"{stem}{ending}{suffix}"

    return lexicon.PAST_TENSE.sub(change, text)


def toward_speaker(russian: str, feminine: bool) -> str | None:
    """The line with its past tense after 'я' turned to the speaker's gender asked, where it
    shows only the other one (я потерял -> я потеряла); None where there is nothing to turn."""
    if not _contains(russian, "я"):
        return None
    endings = {m.group(2).lower() for m in lexicon.PAST_TENSE.finditer(russian)
               if _gendered_past(m)}
    other, wanted = ("л", "ла") if feminine else ("ла", "л")
    if other not in endings or wanted in endings:
        return None
    flipped = _flip_past_tense(russian)
    return flipped if flipped != russian else None


def _gendered_past(match: re.Match) -> bool:
    """Whether a PAST_TENSE match is a masculine or feminine past tense (not a noun)."""
    return match.group(1).lower() not in lexicon.NOT_PAST_STEMS \
        and match.group(2).lower() in ("л", "ла")


def _flip_past_tense(text: str) -> str:
    """Masculine <-> feminine past tense of verbs after 'я' (я сделал <-> я сделала)."""
    if not _contains(text, "я"):
        return text

    def flip(match: re.Match) -> str:
        stem, ending, reflexive = match.group(1), match.group(2), match.group(3) or ""
        if not _gendered_past(match):
            return match.group(0)
        if ending.lower() == "л":
            return f"{stem}ла{'сь' if reflexive else ''}"
        return f"{stem}л{'ся' if reflexive else ''}"

    return lexicon.PAST_TENSE.sub(flip, text)
