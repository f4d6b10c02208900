"""What a decoder may write into a subtitle, whatever the model says.

- No control characters: a byte-fallback vocabulary can decode `<0x1A>` and the like, which
  would make the subtitle file unreadable (subctx itself refuses such a file as binary).
- No runaway repetition: a model that loops writes a word or a few words over and over
  ("утра утра утра утра …", «Э-э-э-э-…» for "Eh-"). `loops` tells such an output from
  repetitions the English has too ("No, no, no, no!"); `collapse_loop` cuts the loop down to as
  many repeats as the English has, where no other hypothesis is free of it.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")
MAX_NGRAM = 4  # a loop repeats one to four words
MIN_LOOP = 4  # repeats of the same words in a row that make a loop


def clean(text: str) -> str:
    """The text without control characters (line breaks and tabs become spaces), its spaces
    collapsed."""
    if not any(unicodedata.category(ch) == "Cc" for ch in text):
        return text
    kept = "".join(" " if unicodedata.category(ch) == "Cc" and ch.isspace() else ch
                   for ch in text if unicodedata.category(ch) != "Cc" or ch.isspace())
    return _SPACES.sub(" ", kept).strip()


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def longest_run(words: list[str]) -> tuple[int, int, int]:
    """The longest run of one n-gram (n <= MAX_NGRAM) repeated back to back: (repeats, n,
    index of its first word); (1, 1, 0) when nothing repeats."""
    best = (1, 1, 0)
    for n in range(1, MAX_NGRAM + 1):
        for start in range(len(words) - 2 * n + 1):
            gram, repeats = words[start:start + n], 1
            while words[start + repeats * n:start + (repeats + 1) * n] == gram:
                repeats += 1
            if repeats > best[0]:
                best = (repeats, n, start)
    return best


def _lower(matches: list[re.Match[str]]) -> list[str]:
    return [m.group().lower() for m in matches]


def loops(source: str, text: str) -> bool:
    """Whether `text`, a translation of `source`, repeats some words MIN_LOOP times or more in
    a row, more than once beyond what the source repeats."""
    repeats = longest_run(_lower(_words(text)))[0]
    return repeats >= MIN_LOOP and repeats > longest_run(_lower(_words(source)))[0] + 1


def collapse_loop(source: str, text: str) -> str:
    """`text` with its loop cut down to the source's own number of repeats (the rest of the
    text kept); `text` itself where it does not loop."""
    if not loops(source, text):
        return text
    words = _words(text)
    repeats, n, start = longest_run(_lower(words))
    keep = longest_run(_lower(_words(source)))[0]
    cut_from = words[start + keep * n - 1].end()  # the end of the last repeat kept
    resume_at = words[start + repeats * n - 1].end()  # the end of the loop
    return collapse_loop(source, text[:cut_from] + text[resume_at:])
