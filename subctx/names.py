"""Names and glossary terms, rendered one way throughout a file.

Once a document is translated, `settle_names`:

1. finds the English names of the document (`find_names`: capitalised words seen inside a
   sentence and never written in lowercase) and the glossary's entries in each unit's English;
2. finds each name's rendering in the translations of the units whose English has it
   (`find_renderings`: a capitalised Cyrillic word, in any case form, that sounds like the
   name's transliteration, or the name itself in Latin letters);
3. chooses one rendering per name: the glossary's, else the one the model wrote most often (its
   nominative), else the rule's transliteration (subctx.transliterate); and writes it, in the case
   form the model used, wherever the model wrote another one or a Latin fragment;
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
from subctx.transliterate import transliterate

GLOSSARY_BESIDE = "glossary.tsv"  # a glossary beside a film applies to the films of its folder

_ENGLISH_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_CAPITALISED = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:[A-Z][a-z]+)?(?![\w])")
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
# a word, not the second half of a hyphenated one (Мэри-Кейт); a turn's dash before it (-Моника) is
# no hyphen
_RUSSIAN_WORD = re.compile(
    r"(?<!\w)(?<!\w-)(?:[А-ЯЁ][а-яё]+|[A-Z][a-z]+(?:'[a-z]+)?[а-яё]*)(?![\w])")


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
        are skipped. GlossaryError (one line) for anything else."""
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            raise GlossaryError(f"{path}: not UTF-8 text") from None
        except OSError as problem:
            raise GlossaryError(f"cannot read glossary {path}: "
                                f"{problem.strerror or problem}") from None
        entries: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split("\t")]
            if len(parts) != 2 or not all(parts):
                raise GlossaryError(f"{path}:{number}: expected 'English<TAB>Russian', "
                                    f"got {line.strip()[:60]!r}")
            entries[" ".join(parts[0].split())] = " ".join(parts[1].split())
        return cls(entries)

    @classmethod
    def beside(cls, film: Path) -> Glossary:
        """The glossary.tsv in a film's folder (empty when there is none)."""
        path = film.parent / GLOSSARY_BESIDE
        return cls.read(path) if path.is_file() else cls()


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


def declension(nominative: str) -> str:
    """How a Russian rendering of a name declines: 'a' (Моника), 'hard' (Росс, Чендлер; the
    model decides whether a woman's is declined) or 'fixed' (Джоуи, Паоло)."""
    last = nominative[-1:].lower()
    if last in "ая":
        return "a"
    if last in "еёиоуыэю":
        return "fixed"
    return "hard"


def inflect(nominative: str, case: str) -> str:
    """A rendering in a case ('nom', 'gen', 'dat', 'acc', 'ins', 'prep'); the accusative of a
    hard rendering is its genitive (names are of people)."""
    kind = declension(nominative)
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


def _similar(a: str, b: str) -> float:
    """How alike two renderings are (0..1): difflib's ratio with like sounds merged; 0 where
    they start with different consonants (Он is not Шон) or one is under three letters."""
    a, b = a.lower().translate(_SAME_SOUND), b.lower().translate(_SAME_SOUND)
    if len(a) < 3 or len(b) < 3 or (a[0] != b[0] and not {a[0], b[0]} <= _OPEN):
        return 0.0
    return SequenceMatcher(None, a, b).ratio()


@dataclass(frozen=True)
class Found:
    """A rendering of a name in a translation: where, the word, and its nominative and case."""

    start: int
    end: int
    word: str
    nominative: str
    case: str

    @property
    def latin(self) -> bool:
        return self.word[:1].isascii()


SIMILAR = 0.72  # how alike (difflib ratio, like sounds merged) a word and a rendering must be


def _parse(word: str, name: str, targets: Sequence[str]) -> Found | None:
    """The word as a case form of a rendering of `name`: Latin letters (the name itself, maybe
    with a Russian ending), or a Cyrillic word whose nominative sounds like one of `targets`."""
    if word[:1].isascii():
        base = word.rstrip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")
        if base.split("'")[0].lower() != name.lower():
            return None
        ending = word[len(base):]
        case = next((c for e, c in _ENDINGS["hard"] if e == ending), "nom")
        return Found(0, 0, word, name, case)
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
                score = max(_similar(nominative, t) for t in targets)
                if kind == "fixed" or not ending:
                    score += 0.01  # the word as it is, where it is as likely
                if score >= SIMILAR and (best is None or score > best[0]):
                    best = score, Found(0, 0, word, nominative, case)
    return best[1] if best else None


def find_renderings(name: str, translation: str, targets: Sequence[str]) -> list[Found]:
    """Every word of a translation that renders `name` (see `_parse`), in order."""
    found = []
    for m in _RUSSIAN_WORD.finditer(translation):
        parsed = _parse(m.group(), name, targets)
        if parsed is not None:
            found.append(Found(m.start(), m.end(), parsed.word, parsed.nominative, parsed.case))
    return found


def _replace(translation: str, found: Sequence[Found], rendering: str) -> str:
    out = translation
    for f in sorted(found, key=lambda f: f.start, reverse=True):
        out = out[:f.start] + inflect(rendering, f.case) + out[f.end:]
    return out


CASES = ("nom", "gen", "dat", "acc", "ins", "prep")


def has_rendering(translation: str, rendering: str) -> bool:
    """Whether a translation has a Russian rendering, each of its words in any case form (a
    name's forms as `inflect` makes them; another word's with an ending of up to 3 letters)."""
    words = {w.lower() for w in re.findall(r"\w+", translation)}

    def present(word: str) -> bool:
        forms = {inflect(word, case).lower() for case in CASES}
        if forms & words:
            return True
        stem = word.lower()[:max(3, len(word) - 2)]
        return len(word) > 3 and any(w.startswith(stem) and len(w) - len(word) <= 3
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
    return bool(re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z]+)?", english))


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
    if name in forced:
        return forced[name]
    counts = Counter(f.nominative for f in found if not f.latin)
    return counts.most_common(1)[0][0] if counts else transliterate(name)


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
            texts[u] = _replace(texts[u], fs, rendering)
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
            text = _replace(text, find_renderings(name, text, _targets(name, forced)), rendering)
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
        text = _replace(text, find_renderings(name, text, _targets(name, forced)), forced[name])
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
    their declension (STAND_INS), the stand-ins' renderings then replaced by the glossary's in
    the case the model gave them; '' where a stand-in did not come through."""
    asked, swaps = [], []
    for u, request in units:
        text, used, swap = request.text, set(request.text.split()), {}
        for name in dict.fromkeys(w for e in wanted[u] for w in e.split()):
            stand_in = next(((en, ru) for en, ru in STAND_INS[declension(forced[name])]
                             if en not in used), None)
            if stand_in is None:
                break
            used.add(stand_in[0])
            text = _term(name).sub(stand_in[0], text)
            swap[stand_in] = forced[name]
        asked.append(replace(request, text=text))
        swaps.append(swap)
    out = translator.translate(asked, beam_size=options.beam_size)
    texts = []
    for translation, swap in zip(out, swaps, strict=True):
        text = translation.text
        for (english, russian), rendering in swap.items():
            found = [f for f in find_renderings(english, text, [russian]) if not f.latin
                     and f.nominative == russian]
            text = _replace(text, found, rendering) if found else ""
            if not text:
                break
        texts.append(text)
    return texts
