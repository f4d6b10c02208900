"""Text a translation must copy, not translate: web addresses, e-mail addresses and long
numbers (phone numbers, codes, figures with separators).

The model writes them as pieces and often mangles them ('https://github.com/foo' ->
'htps://gitub.com/footh', '1-800-555-0199' -> '1-800-5-01'). After translation each such
token of the English that the translation lacks is put back in place of the translation's
most similar token of its kind; a token the translation dropped altogether is not invented
(there is no place to put it). A number written the Russian way (1,234,567 -> 1 234 567;
3.5 -> 3,5) has the same digits and is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import replace
from difflib import SequenceMatcher

from subctx.decoding import DocumentResult

_URL = r"(?:https?://|www\.)[^\s<>\"'«»]+"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_NUMBER = r"\d+(?:[-/:.,]\d+){1,}|\d{5,}"  # groups with separators, or 5+ digits
_TOKEN = re.compile(rf"{_URL}|{_EMAIL}|(?<![\w.,/-]){_NUMBER}")
_TRAILING = ".,;:!?)»\"'"
_CANDIDATE = re.compile(r"\d[\d \u00a0\u202f,.:/-]*\d|[^\s«»()\"]+")
SIMILAR = 0.6  # a translation token this close to the English one is its mangled copy
_DOMAIN_END = re.compile(r"\.[^\W\d_]{2,6}$")


def verbatim_tokens(text: str) -> list[str]:
    """The tokens of `text` a translation must copy, in order (sentence punctuation off)."""
    return [m.group(0).rstrip(_TRAILING) for m in _TOKEN.finditer(text)]


_FIGURE = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d+\.\d+$")  # 1,234,567 / 3.5
_RUSSIAN_FIGURE = re.compile(r"\d+(?:[ \u00a0\u202f]\d{3})*(?:,\d+)?")


def _present(token: str, translation: str) -> bool:
    """Copied: the token itself, or a figure written the Russian way (1 234 567, 3,5)."""
    if token in translation:
        return True
    if _FIGURE.match(token):
        value = token.replace(",", "")
        return any(re.sub(r"[ \u00a0\u202f]", "", m.group(0)).replace(",", ".") == value
                   for m in _RUSSIAN_FIGURE.finditer(translation))
    return False


def _written(token: str) -> str:
    """A token as the translation writes it: a figure the Russian way (1 234 567, 3,5)."""
    if not _FIGURE.match(token):
        return token
    whole, _, fraction = token.replace(",", " ").partition(".")
    return f"{whole},{fraction}" if fraction else whole


def _address(word: str) -> bool:
    """A word that looks like a web or e-mail address, however mangled ('Витити.com')."""
    return "@" in word or "://" in word or word.lower().startswith("www") \
        or _DOMAIN_END.search(word) is not None


def _closest(token: str, translation: str, taken: list[tuple[int, int]]
             ) -> tuple[int, int] | None:
    """The span of the translation's token of the same kind most like `token`, not among
    `taken`: for an address, one that looks like an address — an e-mail's '@' first, then the
    same ending ('.com'), then the likeliest — else a token at least SIMILAR to it."""
    words = [(a, b, w) for m in _CANDIDATE.finditer(translation)
             if (w := m.group(0).rstrip(_TRAILING))
             and (a := m.start(), b := m.start() + len(w)) not in taken]
    if _address(token):
        ending = _DOMAIN_END.search(token)
        addresses = [(a, b, w) for a, b, w in words if _address(w)]
        for wanted in (lambda w: "@" in token and "@" in w,
                       lambda w: ending is not None and w.lower().endswith(ending[0].lower())):
            found = [(a, b) for a, b, w in addresses if wanted(w)]
            if found:
                return found[0]
    best, best_ratio = None, SIMILAR
    for start, end, word in words:
        if token[0].isdigit() != any(c.isdigit() for c in word) and not _address(token):
            continue  # a number's copy has digits, a word's none (an address may have them)
        ratio = SequenceMatcher(None, token.lower(), word.lower()).ratio()
        if ratio > best_ratio:
            best, best_ratio = (start, end), ratio
    return best


def _without_pieces(text: str, start: int, end: int, token: str) -> str:
    """`text` less the words right before and after text[start:end] that are pieces of
    `token` the model wrote apart ('john.smi john.smith@example.com' -> the address alone)."""
    after = re.match(r"\s+([^\s«»()\"]{3,})", text[end:])
    if after and after[1].rstrip(_TRAILING).lower() in token.lower():
        cut = len(after[1].rstrip(_TRAILING))
        text = text[:end] + text[end + after.start(1) + cut:]
    before = re.search(r"([^\s«»()\"]{3,})\s+$", text[:start])
    if before and before[1].lower() in token.lower():
        text = text[:before.start(1)] + text[start:]
    return text


def restore_verbatim(source: str, translation: str) -> str:
    """The translation with each mangled copy of a verbatim token of `source` replaced by the
    token itself (and the pieces of it written beside it taken away)."""
    taken: list[tuple[int, int]] = []
    for token in verbatim_tokens(source):
        if _present(token, translation):
            continue
        span = _closest(token, translation, taken)
        if span is None:
            continue
        written = _written(token)
        mended = f"{translation[:span[0]]}{written}{translation[span[1]:]}"
        mended = _without_pieces(mended, span[0], span[0] + len(written), written)
        start = mended.find(written, max(0, span[0] - 80))
        taken = [(a, b) for a, b in taken if b <= start] + [(start, start + len(written))]
        translation = mended
    return translation


def restore_document(result: DocumentResult) -> list[int]:
    """Mend every unit of a translated document (its list of translations); the units
    changed."""
    changed = []
    for u, (unit, old) in enumerate(zip(result.plan.units, result.translations, strict=True)):
        mended = restore_verbatim(unit.text, old.text)
        if mended != old.text:
            result.translations[u] = replace(old, text=mended)
            changed.append(u)
    return changed
