"""English names in Cyrillic: the renderings Russian uses for common English first names, and a
rule for the rest (Whitfield -> Уитфилд), after the practical transcription of English names
(Ермолович): spelling patterns read as English sounds, each sound written the usual Russian way.

A rule cannot know every name's pronunciation, so the result is a reasonable rendering, never a
Latin fragment; a name a person wants written otherwise goes in a glossary (subctx.names).
"""

from __future__ import annotations

import re

KNOWN = {
    "alice": "Элис", "amanda": "Аманда", "amy": "Эми", "andrew": "Эндрю", "angela": "Анджела",
    "anthony": "Энтони", "barbara": "Барбара", "benjamin": "Бенджамин", "brian": "Брайан",
    "catherine": "Кэтрин", "charles": "Чарльз", "charlie": "Чарли", "charlotte": "Шарлотта",
    "chris": "Крис", "christopher": "Кристофер", "claire": "Клэр", "daniel": "Дэниел",
    "david": "Дэвид", "diana": "Диана", "edward": "Эдвард", "elizabeth": "Элизабет",
    "emily": "Эмили", "emma": "Эмма", "george": "Джордж", "grace": "Грейс", "hannah": "Ханна",
    "helen": "Хелен", "henry": "Генри", "hermione": "Гермиона", "jack": "Джек",
    "jacob": "Джейкоб", "james": "Джеймс", "jane": "Джейн", "jennifer": "Дженнифер",
    "jessica": "Джессика", "john": "Джон",
    "joseph": "Джозеф", "julia": "Джулия", "kate": "Кейт", "katherine": "Кэтрин",
    "kathryn": "Кэтрин", "laura": "Лора", "linda": "Линда", "lucy": "Люси", "margaret": "Маргарет",
    "maria": "Мария", "mary": "Мэри", "matthew": "Мэттью", "michael": "Майкл",
    "nicholas": "Николас", "patrick": "Патрик", "paul": "Пол", "peter": "Питер", "phoebe": "Фиби",
    "rachel": "Рэйчел", "richard": "Ричард", "robert": "Роберт", "sarah": "Сара",
    "sean": "Шон", "sophie": "Софи", "stephen": "Стивен", "steven": "Стивен", "susan": "Сьюзан",
    "thomas": "Томас", "william": "Уильям",
}
"""Renderings the rule would miss (silent letters, old spellings), lowercase English keys."""

WOMEN = frozenset(re.findall(r"[a-z]+", """
    abigail alice alison allison amanda amy angela ann anne barbara beth carol caroline
    catherine charlotte claire colleen diana eileen elizabeth ellen emily emma esther evelyn
    grace gwen hannah harriet helen hermione ingrid isabel jane janet jennifer jessica jill
    jocelyn joyce judith julia karen kate katherine kathleen kathryn laura lauren linda liz lucy
    margaret maria mary meg megan meredith miriam monica phoebe rachel rose ruth sarah
    sharon sophie susan
"""))
"""Common English first names of women, lowercase: Russian does not decline a woman's name
that ends in a consonant (у Кэтрин, с Рэйчел), as it does a man's (у Росса)."""


def womans_name(name: str) -> bool:
    """Whether an English name is a woman's first name (WOMEN; of a hyphenated one, the last
    part: Mary-Kate)."""
    return name.split("-")[-1].lower() in WOMEN


_VOWELS = set("aeiouy")
_IOTATED = {"йа": "я", "йэ": "я", "йу": "ю", "йей": "ей"}

# (pattern, rendering), longest first; "^" only at the start, "$" only at the end
_RULES: list[tuple[str, str]] = [
    ("^mc", "мак"), ("tch", "ч"), ("igh", "ай"), ("ia$", "ия"), ("sch", "ш"), ("wh", "у"),
    ("^kn", "н"), ("^wr", "р"),
    ("ch", "ч"), ("sh", "ш"), ("th", "т"), ("ph", "ф"), ("ck", "к"), ("qu", "кв"),
    ("gh", ""), ("ee", "и"), ("ea", "и"), ("oo", "у"), ("ou", "ау"), ("ow$", "оу"),
    ("ow", "ау"), ("ai", "ей"), ("ay", "ей"), ("ey$", "и"), ("ei", "ей"), ("ey", "ей"),
    ("oa", "оу"), ("oe", "оу"), ("au", "о"), ("aw", "о"), ("ew", "ью"), ("oy", "ой"),
    ("oi", "ой"), ("ie$", "и"), ("ie", "и"), ("ue$", "ью"), ("er$", "ер"), ("j", "дж"),
    ("x", "кс"), ("w", "у"), ("b", "б"), ("d", "д"), ("f", "ф"), ("h", "х"), ("k", "к"),
    ("l", "л"), ("m", "м"), ("n", "н"), ("p", "п"), ("r", "р"), ("s", "с"), ("t", "т"),
    ("v", "в"), ("z", "з"),
]


def _magic_e(word: str, i: int) -> bool:
    """Whether the vowel at i is long: one consonant, then a final silent e (Kate, Mike)."""
    return (i + 2 == len(word) - 1 and word[-1] == "e" and word[i + 1] not in _VOWELS)


def _vowel(word: str, i: int) -> str:
    """The rendering of the single vowel letter at i."""
    c, initial = word[i], i == 0
    if c == "e":
        if i == len(word) - 1 and any(v in _VOWELS for v in word[:-1]):
            return ""  # silent final e
        return "э" if initial else "е"
    if c == "y":
        return "й" if initial else "и"
    if _magic_e(word, i):
        return {"a": "ей", "i": "ай", "o": "оу", "u": "ью"}[c]
    if c == "a":
        closed = i + 1 < len(word) and word[i + 1] not in _VOWELS and word[i + 1] != "r" \
            and (i + 2 >= len(word) or word[i + 2] not in _VOWELS)
        return "э" if closed else "а"
    return {"i": "и", "o": "о", "u": "у"}[c]


def _rule(word: str) -> str:
    out, i = [], 0
    while i < len(word):
        c = word[i]
        if c == "h" and i and word[i - 1] in _VOWELS and word[i - 1:i + 1] != "ch":
            i += 1  # John, Sarah: h after a vowel is not heard
            continue
        if c == "s" and 0 < i < len(word) - 1 and word[i - 1] in _VOWELS \
                and word[i + 1] in _VOWELS:
            out.append("з")  # Rose, Isabel
            i += 1
            continue
        for pattern, rendering in _RULES:
            text = pattern.strip("^$")
            if pattern.startswith("^") and i:
                continue
            if pattern.endswith("$") and i + len(text) != len(word):
                continue
            if word.startswith(text, i):
                out.append(rendering)
                i += len(text)
                break
        else:
            if c == "c":
                out.append("с" if word[i + 1:i + 2] in ("e", "i", "y") else "к")
                i += 1
            elif c == "g":
                soft = word[i + 1:i + 2] in ("e", "i", "y") and i + 1 < len(word) - 1
                out.append("дж" if soft else "г")
                i += 1
            elif c in _VOWELS:
                out.append(_vowel(word, i))
                i += 1
            else:
                i += 1  # a letter no rule knows (an apostrophe...) is left out
    text = "".join(out)
    for start, joined in _IOTATED.items():  # Yasmine -> Ясмин, Yule -> Юл
        if text.startswith(start):
            return joined + text[len(start):]
    return text


def transliterate(name: str) -> str:
    """A Cyrillic rendering of an English name (Katherine Whitfield -> Кэтрин Уитфилд):
    KNOWN renderings, else the rule; hyphens and spaces are kept, each part capitalised."""
    parts = re.split(r"([\s-]+)", name)
    out = []
    for part in parts:
        if not part or not part[0].isalpha():
            out.append(part)
            continue
        key = part.lower().replace("'", "")
        russian = KNOWN.get(key) or _rule(key)
        out.append(russian[:1].upper() + russian[1:])
    return "".join(out)
