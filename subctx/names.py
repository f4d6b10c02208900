"""Names and glossary terms, rendered one way throughout a file.

Once a document is translated, `settle_names`:

1. finds the English names of the document (`find_names`: capitalised words seen inside a
   sentence and never written in lowercase) and the glossary's entries in each unit's English;
2. finds each name's rendering in the translations of the units whose English has it
   (`find_renderings`: a capitalised Cyrillic word, in any case form, that sounds like the
   name's transliteration, or the name itself in Latin letters, or partly: «Ееmione»;
   hyphenated words and names whole: Jean-Luc, «Жан-Люку»);
3. chooses one rendering per name: the glossary's, else the one the model wrote most often (its
   nominative; of two as frequent, the one nearer the transliteration; never a truncated one,
   «Уитд» for «Уитфилд»), else the rule's transliteration (subctx.transliterate); and writes
   it, in the case form the model used, wherever the model wrote another one or a Latin
   fragment (a woman's name that ends in a consonant undeclined: «у Кэтрин»);
4. where a glossary entry is still missing from a unit's translation, decodes the unit again
   (the request it was translated with, asking for `hypotheses` best) and takes the likeliest
   hypothesis that has the entry, changes no gender or pronoun and does not loop; a unit none has
   stays as it is and is reported.

A name's case form follows the model's: «позвони Джои» -> «позвони Джоуи», «у Монки» -> «у
Моники», «с Чендлером» stays. The model is not trained with placeholders, so this is the whole
mechanism; docs/decoding.md ("Names and glossary") has what it does on dev.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from pathlib import Path

from subctx.backends.output import loops
from subctx.contract import Request, Translation, Translator
from subctx.decoding import DecodeOptions, DocumentResult
from subctx.errors import SubctxError
from subctx.reading import decode_again, keeps_choices
from subctx.transliterate import transliterate, womans_name

GLOSSARY_BESIDE = "glossary.tsv"  # a glossary beside a film applies to the films of its folder

_ENGLISH_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_NAME = r"[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:-[A-Z][a-z]+(?:[A-Z][a-z]+)?)*"  # Joey, McDonald, Jean-Luc
_CAPITALISED = re.compile(rf"(?<![\w']){_NAME}(?![\w])")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;]|--?|—)[\s\"'“«(\[-]*$")
_NOT_NAMES = {
    "I", "Mr", "Mrs", "Ms", "Dr", "Sir", "Miss", "Madam", "Mister", "Lord", "Lady", "God",
    "OK", "Ok", "Okay", "Mom", "Mommy", "Dad", "Daddy", "Mum", "Grandma", "Grandpa", "Uncle",
    "Aunt", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December", "English", "Christmas", "Internet", "TV",
    "Oh", "Ooh", "Ah", "Aah", "Uh", "Um", "Hmm", "Hey", "Hi", "Hello", "Bye", "Wow", "Yes",
    "Yeah", "No", "Nope", "Please", "Thanks", "Sorry", "Well", "So", "What", "Why", "Who",
}
# a capitalised word, whole: hyphenated (Мэри-Кейт, Нью-Йорке), camel-case (МакАллестер), in
# Latin letters maybe with a Russian ending (Whitfieldа, Joey's), or in both scripts (Ееmione);
# not the second half of a hyphenated word; a turn's dash before it (-Моника) is no hyphen
_LETTERS = "A-Za-zА-ЯЁа-яё"
_RUSSIAN_WORD = re.compile(
    rf"(?<!\w)(?<!\w-)[A-ZА-ЯЁ][a-zа-яё][{_LETTERS}]*(?:'[a-z]+[а-яё]*)?"
    rf"(?:-[A-ZА-ЯЁ][{_LETTERS}]+)*(?![\w])")
_LATIN = re.compile(r"[A-Za-z]")


class GlossaryError(SubctxError):
    """A glossary file that cannot be read."""


@dataclass(frozen=True)
class Glossary:
    """English -> Russian renderings a person wants, as given (the Russian in its nominative)."""

    entries: dict[str, str] = field(default_factory=dict)

    def merged(self, other: Glossary) -> Glossary:
        """This glossary with `other`'s entries added; `other` wins where both have one."""
        return Glossary({**self.entries, **other.entries})

    @classmethod
    def read(cls, path: Path) -> Glossary:
        """Tab-separated lines `English<TAB>Russian`; blank lines and lines starting with #
        are skipped. GlossaryError (one line) for anything else, and for an English term given
        another rendering on another line (a lowercase term is any case's: `joey` is `Joey`'s
        too); the same line twice is no error."""
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise GlossaryError(f"{path}: not UTF-8 text") from None
        except OSError as problem:
            raise GlossaryError(f"cannot read glossary {path}: "
                                f"{problem.strerror or problem}") from None
        entries: dict[str, str] = {}
        lines: dict[str, int] = {}  # each term's line
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split("\t")]
            if len(parts) != 2 or not all(parts):
                raise GlossaryError(f"{path}:{number}: expected 'English<TAB>Russian', "
                                    f"got {line.strip()[:60]!r}")
            english, russian = " ".join(parts[0].split()), " ".join(parts[1].split())
            clash = next((t for t in entries if _same_words(t, english)
                          and entries[t] != russian), None)
            if clash is not None:
                raise GlossaryError(f"{path}:{number}: {english!r} is given {russian!r} here "
                                    f"and {entries[clash]!r} on line {lines[clash]}; keep one")
            lines.setdefault(english, number)
            entries[english] = russian
        return cls(entries)

    @classmethod
    def beside(cls, film: Path) -> Glossary:
        """The glossary.tsv in a film's folder (empty when there is none)."""
        path = film.parent / GLOSSARY_BESIDE
        return cls.read(path) if path.is_file() else cls()


def _same_words(a: str, b: str) -> bool:
    """Whether two glossary terms apply to the same words (`_term`: a capitalised term as
    written, another in any case)."""
    return a == b or (a.lower() == b.lower() and not (a[:1].isupper() and b[:1].isupper()))


# -- English names ----------------------------------------------------------------------------
_TITLE = re.compile(r"(?<![\w])(?:Mr|Mrs|Ms|Dr|St|Jr|Prof)\.\s*$")


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at]
    return bool(_SENTENCE_START.search(before)) and not _TITLE.search(before)


def find_names(sources: Sequence[str]) -> dict[str, list[int]]:
    """The names of a document: capitalised words seen at least once inside a sentence, never in
    lowercase, and not titles or calendar words; each with the units whose English has it."""
    lowercase = {w.lower() for s in sources for w in _ENGLISH_WORD.findall(s)
                 if not w[0].isupper()}
    inside: set[str] = set()
    where: dict[str, list[int]] = {}
    for unit, text in enumerate(sources):
        for m in _CAPITALISED.finditer(text):
            word = m.group()
            if word in _NOT_NAMES or word.lower() in lowercase:
                continue
            if not _sentence_start(text, m.start()):
                inside.add(word)
            if unit not in where.setdefault(word, []):
                where[word].append(unit)
    return {word: units for word, units in where.items() if word in inside}


def _term(term: str) -> re.Pattern[str]:
    """A glossary term in English text: as words; a capitalised term as written, another in
    any case."""
    flags = 0 if term[:1].isupper() else re.IGNORECASE
    return re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", flags)


def _has_term(text: str, term: str) -> bool:
    return _term(term).search(text) is not None


# -- Russian renderings -----------------------------------------------------------------------
CASES = ("nom", "gen", "dat", "acc", "ins", "prep")
_SAME_SOUND = str.maketrans("ёэйы", "ееии")
_OPEN = set("аеоу")  # Amber is Амбер or Эмбер (э is е here)
# case endings by declension, longest first: (ending, case)
_ENDINGS = {
    "hard": [("ом", "ins"), ("ем", "ins"), ("ём", "ins"), ("а", "gen"), ("я", "gen"),
             ("у", "dat"), ("ю", "dat"), ("е", "prep"), ("", "nom")],
    "a": [("ой", "ins"), ("ей", "ins"), ("ою", "ins"), ("ёй", "ins"), ("ы", "gen"),
          ("и", "gen"), ("е", "dat"), ("у", "acc"), ("ю", "acc"), ("а", "nom"), ("я", "nom")],
    "fixed": [("", "nom")],
}


def declension(nominative: str, woman: bool = False) -> str:
    """How a Russian rendering of a name declines: 'a' (Моника), 'hard' (Росс, Чендлер) or
    'fixed' (Джоуи, Паоло; and a `woman`'s name that ends in a consonant: Кэтрин, Рэйчел)."""
    last = nominative[-1:].lower()
    if last in "ая":
        return "a"
    if last in "еёиоуыэю" or woman:
        return "fixed"
    return "hard"


def inflect(nominative: str, case: str, woman: bool = False) -> str:
    """A rendering in a case ('nom', 'gen', 'dat', 'acc', 'ins', 'prep'); the accusative of a
    hard rendering is its genitive (names are of people); a woman's in a consonant (`woman`:
    subctx.transliterate.womans_name) is not declined."""
    kind = declension(nominative, woman)
    if kind == "fixed" or case == "nom":
        return nominative
    if kind == "hard":
        stem, soft = (nominative[:-1], True) if nominative[-1] in "йь" else (nominative, False)
        hissing = stem[-1:] in "жшчщц"
        ending = {"gen": "я" if soft else "а", "acc": "я" if soft else "а",
                  "dat": "ю" if soft else "у", "prep": "е",
                  "ins": "ем" if soft or hissing else "ом"}[case]
        return stem + ending
    stem, soft = nominative[:-1], nominative[-1] == "я"
    if stem.endswith("и") and soft:  # Мария: Марии, Марию, Марией
        return stem + {"gen": "и", "dat": "и", "prep": "и", "acc": "ю", "ins": "ей"}[case]
    velar = stem[-1:] in "гкхжшчщ"
    return stem + {"gen": "и" if soft or velar else "ы", "dat": "е", "prep": "е",
                   "acc": "ю" if soft else "у",
                   "ins": "ей" if soft or stem[-1:] in "жшчщц" else "ой"}[case]


_SAME_FIRST = str.maketrans("г", "х")  # an English h is Х or Г (Хэрри, Гарри; Гермиона)


def _sounds(word: str) -> str:
    word = word.lower().translate(_SAME_SOUND)
    return word[:1].translate(_SAME_FIRST) + word[1:]


def _similar(a: str, b: str) -> float:
    """How alike two renderings are (0..1): difflib's ratio with like sounds merged; 0 where
    they start with different consonants (Он is not Шон) or one is under three letters."""
    a, b = _sounds(a), _sounds(b)
    if len(a) < 3 or len(b) < 3 or (a[0] != b[0] and not {a[0], b[0]} <= _OPEN):
        return 0.0
    return SequenceMatcher(None, a, b).ratio()


MISSING = 3  # a form this many letters shorter than a rendering it sounds like is truncated


@dataclass(frozen=True)
class Found:
    """A rendering of a name in a translation: where, the word, and its nominative and case;
    `truncated`: a nominative MISSING letters shorter than the rendering it sounds most like
    («Уитд» for «Уитфилд»: written over like a Latin one, never chosen)."""

    start: int
    end: int
    word: str
    nominative: str
    case: str
    truncated: bool = False

    @property
    def latin(self) -> bool:
        """Whether the word has Latin letters (Whitfield, Whitfieldа, Ееmione)."""
        return _LATIN.search(self.word) is not None


SIMILAR = 0.72  # how alike (difflib ratio, like sounds merged) a word and a rendering must be


_CYRILLIC_TAIL = re.compile(r"[а-яё]+$")


def _parse_latin(word: str, name: str, targets: Sequence[str]) -> Found | None:
    """A word with Latin letters as a form of `name`: the name itself, maybe with a Russian
    ending (Whitfieldа), or the name's letters partly in Cyrillic (Ееmione, Herмиона: each run
    of Latin letters in the name, in order, those at the word's ends at the name's)."""
    base = word.rstrip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")
    if not re.search("[А-ЯЁа-яё]", base) and base.split("'")[0].lower() == name.lower():
        ending = word[len(base):]
        return Found(0, 0, word, name, next((c for e, c in _ENDINGS["hard"] if e == ending),
                                            "nom"))
    pieces = re.findall(r"[A-Za-z]+|[^A-Za-z]+", word.lower())
    if sum(len(p) for p in pieces if _LATIN.match(p)) < 3 or not re.fullmatch(
            "".join(re.escape(p) if _LATIN.match(p) else ".+" for p in pieces), name.lower()):
        return None
    tail = _CYRILLIC_TAIL.search(word.lower())
    case = "nom" if tail is None else next(
        (c for c in CASES for t in targets if inflect(t, c).lower().endswith(tail.group())),
        "nom")
    return Found(0, 0, word, name, case)


def _parse(word: str, name: str, targets: Sequence[str]) -> Found | None:
    """The word as a case form of a rendering of `name`: with Latin letters (`_parse_latin`),
    or a Cyrillic word whose nominative sounds like one of `targets`."""
    if _LATIN.search(word):
        return _parse_latin(word, name, targets)
    best: tuple[float, Found] | None = None
    for kind, endings in _ENDINGS.items():
        for ending, case in endings:
            if not word.endswith(ending) or len(word) - len(ending) < 2:
                continue
            stem = word[:len(word) - len(ending)] if ending else word
            nominatives = [stem] if kind != "a" else [stem + "а", stem + "я"]
            for nominative in nominatives:
                if kind != "fixed" and declension(nominative) != kind:
                    continue
                score, target = max((_similar(nominative, t), t) for t in targets)
                if kind == "fixed" or not ending:
                    score += 0.01  # the word as it is, where it is as likely
                if score >= SIMILAR and (best is None or score > best[0]):
                    best = score, Found(0, 0, word, nominative, case,
                                        len(target) - len(nominative) >= MISSING)
    return best[1] if best else None


def find_renderings(name: str, translation: str, targets: Sequence[str]) -> list[Found]:
    """Every word of a translation that renders `name` (see `_parse`), in order."""
    found = []
    for m in _RUSSIAN_WORD.finditer(translation):
        parsed = _parse(m.group(), name, targets)
        if parsed is not None:
            found.append(replace(parsed, start=m.start(), end=m.end()))
    return found


def _replace(translation: str, found: Sequence[Found], rendering: str, name: str) -> str:
    """The words found replaced by `name`'s rendering, each in its case form."""
    woman = womans_name(name)
    out = translation
    for f in sorted(found, key=lambda f: f.start, reverse=True):
        out = out[:f.start] + inflect(rendering, f.case, woman) + out[f.end:]
    return out


def has_rendering(translation: str, rendering: str) -> bool:
    """Whether a translation has a Russian rendering, each of its words in any case form (a
    name's forms as `inflect` makes them; another word's with an ending of up to 3 letters).
    A hyphenated word is a word (Нью-Йорке: only its last part declines), and so is each of its
    parts."""
    words = {w.lower() for hyphenated in re.findall(r"\w+(?:-\w+)*", translation)
             for w in {hyphenated, *hyphenated.split("-")}}

    def present(word: str) -> bool:
        forms = {inflect(word, case).lower() for case in CASES}
        if forms & words:
            return True
        head, dash, last = word.lower().rpartition("-")  # (Жан-Люк is not Жан-Луууу)
        stem = head + dash + last[:max(3, len(last) - 2)]
        return len(last) > 3 and any(w.startswith(stem) and len(w) - len(word) <= 3
                                     for w in words)

    return all(present(word) for word in rendering.split())


# -- settling a document ----------------------------------------------------------------------
@dataclass(frozen=True)
class NameRule:
    """What `settle_names` does: write each name one way (`unify`), force a glossary's entries,
    decoding a unit again with `hypotheses` best where an entry is missing."""

    unify: bool = True
    glossary: Glossary = field(default_factory=Glossary)
    hypotheses: int = 16


DEFAULT_NAMES = NameRule()


@dataclass
class NamesReport:
    """What `settle_names` did to one document."""

    renderings: dict[str, str] = field(default_factory=dict)  # name -> its one rendering
    changed: list[int] = field(default_factory=list)  # units whose translation changed
    redecoded: int = 0  # units decoded again for a glossary entry
    missing: list[tuple[int, str]] = field(default_factory=list)  # (unit, entry) still absent


def _is_name(english: str) -> bool:
    return re.fullmatch(_NAME, english) is not None


def forced_names(glossary: Glossary) -> dict[str, str]:
    """The glossary's renderings of single names: an entry of capitalised words with as many
    Russian words gives each word's (Katherine Whitfield -> Кэтрин Уитфилд)."""
    out: dict[str, str] = {}
    for english, russian in glossary.entries.items():
        words, renderings = english.split(), russian.split()
        if len(words) == len(renderings) and all(_is_name(w) for w in words):
            out.update(zip(words, renderings, strict=True))
    return out


def _names(sources: Sequence[str], forced: dict[str, str], unify: bool
           ) -> dict[str, list[int]]:
    """Names to settle: the document's (where `unify`), and the glossary's."""
    names = find_names(sources) if unify else {}
    for english in forced:
        names[english] = [u for u, s in enumerate(sources) if _has_term(s, english)]
    return names


def _choose(name: str, found: Iterable[Found], forced: dict[str, str]) -> str:
    """The glossary's rendering of a name, else the nominative the model wrote most (of two as
    frequent, the one closer to the transliteration; not a truncated one), else the
    transliteration."""
    if name in forced:
        return forced[name]
    counts = Counter(f.nominative for f in found if not f.latin and not f.truncated)
    rule = transliterate(name)
    return max(counts, key=lambda nominative: (counts[nominative], _similar(nominative, rule)),
               default=rule)


def _targets(name: str, forced: dict[str, str]) -> list[str]:
    return [transliterate(name)] + ([forced[name]] if name in forced else [])


def settle_names(result: DocumentResult, translator: Translator | None, options: DecodeOptions,
                 rule: NameRule = DEFAULT_NAMES) -> NamesReport:
    """Each name of the document written one way (where `rule.unify`), and the glossary's
    entries wherever their English is (the module's docstring says how);
    `result.translations` change in place. No `translator`: nothing is decoded again."""
    sources = [u.text for u in result.plan.units]
    texts = result.texts()
    report = NamesReport()
    glossary = rule.glossary
    forced = forced_names(glossary)
    names = _names(sources, forced, rule.unify)
    for name, units in names.items():
        targets = _targets(name, forced)
        found = {u: find_renderings(name, texts[u], targets) for u in units}
        rendering = _choose(name, (f for fs in found.values() for f in fs), forced)
        if not any(found.values()) or (len(units) < 2 and name not in forced and not any(
                f.latin for fs in found.values() for f in fs)):
            continue  # a name said once is the model's business, unless it is left in Latin
        report.renderings[name] = rendering
        for u, fs in found.items():
            texts[u] = _replace(texts[u], fs, rendering, name)
    wanted = glossary_wanted(sources, glossary)
    absent = sorted(u for u, entries in wanted.items() if _lacking(texts[u], entries, glossary))
    if absent and translator is not None:
        texts = _redecode(result, translator, options, glossary, forced, texts, absent, wanted,
                          rule.hypotheses)
        report.redecoded = len(absent)
    report.missing = [(u, entry) for u, entries in wanted.items()
                      for entry in _lacking(texts[u], entries, glossary)]
    for u, text in enumerate(texts):
        old = result.translations[u]
        if text != old.text:
            report.changed.append(u)
            result.translations[u] = Translation(text, old.score, old.alternatives,
                                                 fallback=old.fallback)
    return report


def keep_renderings(english: str, text: str, renderings: dict[str, str],
                    glossary: Glossary | None = None) -> str:
    """A translation made after its document was settled (a line the review translates again)
    with each name its English has written as the document's `renderings` say, in the case form
    the model used; the glossary's names are found by their rendering too."""
    forced = forced_names(glossary or Glossary())
    for name, rendering in renderings.items():
        if _has_term(english, name):
            text = _replace(text, find_renderings(name, text, _targets(name, forced)), rendering,
                            name)
    return text


def glossary_wanted(sources: Sequence[str], glossary: Glossary) -> dict[int, list[str]]:
    """The glossary entries each unit's English has (units with none left out)."""
    wanted: dict[int, list[str]] = {}
    for english in glossary.entries:
        for u, source in enumerate(sources):
            if _has_term(source, english):
                wanted.setdefault(u, []).append(english)
    return wanted


def _redecode(result: DocumentResult, translator: Translator, options: DecodeOptions,
              glossary: Glossary, forced: dict[str, str], texts: list[str],
              units: list[int], wanted: dict[int, list[str]], hypotheses: int
              ) -> list[str]:
    """Units missing a glossary entry decoded again: the likeliest hypothesis with every entry
    the unit wants (names written as the glossary says) replaces the translation; where none
    has them and only names are missing, the unit is translated with stand-in names
    (`_with_stand_ins`)."""
    requests, decoded = decode_again(result, units, translator, options, hypotheses)
    texts = list(texts)
    for u, out in zip(units, decoded, strict=True):
        for alt in sorted(out.alternatives, key=lambda h: -h.log_prob / max(1, h.tokens)):
            text = _forced_in(alt.text.strip(), wanted[u], forced)
            if _better(result, u, texts[u], text, wanted[u], glossary):
                texts[u] = text
                break
    still = [(u, r) for u, r in zip(units, requests, strict=True)
             if _lacking(texts[u], wanted[u], glossary)
             and all(_names_only(e, forced) for e in wanted[u])]
    if still:
        for (u, _), text in zip(still, _with_stand_ins(translator, options, still, wanted,
                                                       forced), strict=True):
            if _better(result, u, texts[u], text, wanted[u], glossary):
                texts[u] = text
    return texts


def _lacking(text: str, entries: Sequence[str], glossary: Glossary) -> list[str]:
    """The entries whose rendering a translation does not have."""
    return [e for e in entries if not has_rendering(text, glossary.entries[e])]


def _forced_in(text: str, entries: Sequence[str], forced: dict[str, str]) -> str:
    """A translation with the glossary's names written as it says, in the forms found."""
    for name in {w for e in entries for w in e.split() if w in forced}:
        text = _replace(text, find_renderings(name, text, _targets(name, forced)), forced[name],
                        name)
    return text


def _names_only(entry: str, forced: dict[str, str]) -> bool:
    return all(word in forced for word in entry.split())


def _better(result: DocumentResult, unit: int, old: str, new: str, entries: Sequence[str],
            glossary: Glossary) -> bool:
    """Whether a new translation may replace a unit's: it has every entry the unit wants, keeps
    the choices later lines may have followed (subctx.reading.keeps_choices), does not loop."""
    return bool(new) and not _lacking(new, entries, glossary) \
        and keeps_choices(old, new) and not loops(result.plan.units[unit].text, new)


STAND_INS = {"hard": [("Bob", "Боб"), ("Tom", "Том"), ("Jack", "Джек")],
             "a": [("Anna", "Анна"), ("Nina", "Нина"), ("Olga", "Ольга")],
             "fixed": [("Bob", "Боб"), ("Tom", "Том"), ("Jack", "Джек")]}
"""Names the model renders the one way and declines, standing in for a name it cannot render:
the stand-in's case form in the translation gives the glossary rendering's."""


def _with_stand_ins(translator: Translator, options: DecodeOptions,
                    units: Sequence[tuple[int, Request]], wanted: dict[int, list[str]],
                    forced: dict[str, str]) -> list[str]:
    """Each unit translated with its glossary names replaced in the English by stand-ins of
    their declension (STAND_INS; a woman's name by a woman's: verbs agree with her),
    the stand-ins' renderings then replaced by the glossary's in the case the model gave them;
    '' where a stand-in did not come through."""
    asked, swaps = [], []
    for u, request in units:
        text, used, swap = request.text, set(request.text.split()), {}
        for name in dict.fromkeys(w for e in wanted[u] for w in e.split()):
            kind = "a" if womans_name(name) else declension(forced[name])
            stand_in = next(((en, ru) for en, ru in STAND_INS[kind] if en not in used), None)
            if stand_in is None:
                break
            used.add(stand_in[0])
            text = _term(name).sub(stand_in[0], text)
            swap[stand_in] = name
        asked.append(replace(request, text=text))
        swaps.append(swap)
    out = translator.translate(asked, beam_size=options.beam_size)
    texts = []
    for translation, swap in zip(out, swaps, strict=True):
        text = translation.text
        for (english, russian), name in swap.items():
            found = [f for f in find_renderings(english, text, [russian]) if not f.latin
                     and f.nominative == russian]
            text = _replace(text, found, forced[name], name) if found else ""
            if not text:
                break
        texts.append(text)
    return texts
