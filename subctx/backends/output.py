"""What a decoder may write into a subtitle, whatever the model says.

- No control characters and no U+FFFD: a byte-fallback vocabulary can decode `<0x1A>` and the
  like, which would make the subtitle file unreadable (subctx itself refuses such a file as
  binary), or bytes that are no UTF-8 at all, which come out as '�'.
- No runaway repetition: a model that loops writes a word or a few words over and over
  ("утра утра утра утра …", «Э-э-э-э-…» for "Eh-"), or one character ("&&&&&&&&…"). `loops`
  tells such an output from repetitions the English has too ("No, no, no, no!", "Nooooo!");
  `collapse_loop` cuts the loop down to as many repeats as the English has, where no other
  hypothesis is free of it.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")
MAX_NGRAM = 4  # a loop repeats one to four words
MIN_LOOP = 4  # repeats of the same words in a row that make a loop
MIN_CHAR_LOOP = 8  # or repeats of one character in a row
_NOT_TEXT = "\ufffd"  # what undecodable bytes become


def clean(text: str) -> str:
    """The text without control characters (line breaks and tabs become spaces) and without
    U+FFFD, its spaces collapsed."""
    if not any(unicodedata.category(ch) == "Cc" or ch == _NOT_TEXT for ch in text):
        return text
    kept = "".join(" " if unicodedata.category(ch) == "Cc" and ch.isspace() else ch
                   for ch in text if ch != _NOT_TEXT
                   and (unicodedata.category(ch) != "Cc" or ch.isspace()))
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


def char_run(text: str) -> tuple[int, int]:
    """The longest run of one non-space character: (length, index of its first character)."""
    best, start = (0, 0), 0
    for i in range(1, len(text) + 1):
        if i == len(text) or text[i] != text[start]:
            if not text[start].isspace() and i - start > best[0]:
                best = (i - start, start)
            start = i
    return best


def _word_loop(source: str, text: str) -> bool:
    repeats = longest_run(_lower(_words(text)))[0]
    return repeats >= MIN_LOOP and repeats > longest_run(_lower(_words(source)))[0] + 1


def _char_loop(source: str, text: str) -> bool:
    run = char_run(text)[0]
    return run >= MIN_CHAR_LOOP and run > char_run(source)[0] + 2


def loops(source: str, text: str) -> bool:
    """Whether `text`, a translation of `source`, repeats some words MIN_LOOP times or more in
    a row, more than once beyond what the source repeats, or one character MIN_CHAR_LOOP times
    or more, beyond the source's longest such run."""
    return _word_loop(source, text) or _char_loop(source, text)


def collapse_loop(source: str, text: str) -> str:
    """`text` with its loop cut down to the source's own number of repeats (the rest of the
    text kept); `text` itself where it does not loop."""
    if _char_loop(source, text):
        run, start = char_run(text)
        keep = max(1, char_run(source)[0])
        return collapse_loop(source, text[:start + keep] + text[start + run:])
    if not _word_loop(source, text):
        return text
    words = _words(text)
    repeats, n, start = longest_run(_lower(words))
    keep = longest_run(_lower(_words(source)))[0]
    cut_from = words[start + keep * n - 1].end()  # the end of the last repeat kept
    resume_at = words[start + repeats * n - 1].end()  # the end of the loop
    return collapse_loop(source, text[:cut_from] + text[resume_at:])
