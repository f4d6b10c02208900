"""Labels of a Russian target for the control tags (subctx.controls): the form of address and
the speaker's gender its words show. Dictionary-free, from subctx.lexicon's word lists; each
label says what the target *shows*, and None where it shows nothing or contradicts itself.

Formality (`register_label`): INFORMAL where the target uses ты forms only (pronouns, verbs in
-ешь / -ишь, imperatives: subctx.lexicon.address), FORMAL where it uses вы forms only and
nothing marks that вы as plural, else None (none, both, or a plural вы). Russian has one вы for
"you, sir" and for "you, all of you": the tag is to choose between ты and вы for *one* listener,
and for several there is no choice to make, so a вы marked as plural (вы все, вас обоих, вы
двое, «Ребята, ...», or an English "you guys" / "all of you" / "everyone") gets no tag. A plural
the line does not mark (an order to a squad, "Are you ready?" to a crowd) cannot be told from a
polite singular and is labelled FORMAL: tests/data/control_labels.tsv measures how often.

Speaker gender (`speaker_label`): the gender of what agrees with я: a past tense (я сделал /
сделала, я ведь не знала), a short adjective or participle (я уверен / уверена, я сама), or a
full adjective ending its clause (я не такая); MASCULINE or FEMININE where every such form in
the target agrees, else None. Only within я's clause: a comma, a clause-opening word (что,
когда, который...), another subject (она, мы...) or a verb like «думаю» ends the search, so «Я
думал, она ушла» is masculine, «я знаю что она ушла» nothing. A plural or neuter verb after я
(«я и Моника были») says nothing; quoted speech («...», "...") is someone else's and is skipped.
Without я, only a sentence that opens on a short form like «Рад» or «Уверена» and asks nothing
(«Рад познакомиться») counts.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import sys

from subctx import lexicon
from subctx.contract import SpecialTokens
from subctx.controls import (
    CONTROLS,
    FEMININE,
    FORMAL,
    FORMALITY,
    INFORMAL,
    MASCULINE,
    SPEAKER_GENDER,
    known_controls,
    tag_piece,
)

# -- formality ---------------------------------------------------------------------------------

# "you" said to several people, in English
_SEVERAL = re.compile(
    r"\byou (?:guys|all|two|three|four|both|people|kids|boys|girls|ladies|gentlemen|lot|folks|"
    r"men|children|fellas|fellows)\b|\by'?all\b|\b(?:all|both|each|either|any|some|one|none|"
    r"many|most|few|two|three|half|neither) of (?:you|ya)\b|\b(?:everyone|everybody|guys|folks|"
    r"gentlemen|ladies)\b", re.IGNORECASE)

_GROUP_ADDRESS = "|".join(sorted(lexicon.GROUP_ADDRESS))
# a word for a group said to it: set off by punctuation on both sides («Ребята, вы где?»)
_GROUP_CALLED = re.compile(rf"(?:^|[,.!?…:;—–-])\s*(?:{_GROUP_ADDRESS})\s*(?=[,.!?…:;—–-]|$)",
                           re.IGNORECASE)


def plural_address(russian: str, english: str = "") -> bool:
    """Whether a line says its вы to several people: вы все / вас обоих / вы двое, a group
    called by name («Ребята, ...»), or an English "you guys", "all of you", "everyone"."""
    if _SEVERAL.search(english) or _GROUP_CALLED.search(russian):
        return True
    ws = lexicon.words(russian)
    return any(w in lexicon.FORMAL_PRONOUNS and lexicon.GROUP_WORDS & set(ws[max(0, i - 1):i + 2])
               for i, w in enumerate(ws))


def register_label(russian: str, english: str = "") -> str | None:
    """INFORMAL (ты forms only), FORMAL (вы forms only, not marked as plural) or None."""
    informal, formal = lexicon.address(russian)
    if informal and not formal:
        return INFORMAL
    if formal and not informal and not plural_address(russian, english):
        return FORMAL
    return None


# -- the speaker's gender ----------------------------------------------------------------------
# subctx.lexicon.speaker_genders: the one reading of what agrees with я, which the app's
# reading-speed fit uses too (a shorter translation shows no other speaker's gender)
_AS_LABEL = {lexicon.MASCULINE: MASCULINE, lexicon.FEMININE: FEMININE}


def speaker_label(russian: str) -> str | None:
    """MASCULINE or FEMININE where what agrees with я says one gender only, else None."""
    found = {_AS_LABEL[g] for g in lexicon.speaker_genders(russian)}
    return found.pop() if len(found) == 1 else None


def labels(russian: str, english: str = "") -> dict[str, str]:
    """A target's labels by kind (FORMALITY, SPEAKER_GENDER), only those it shows."""
    out = {FORMALITY: register_label(russian, english), SPEAKER_GENDER: speaker_label(russian)}
    return {kind: value for kind, value in out.items() if value is not None}


PARALLEL_FROM = 50_000  # targets: fewer are labelled in this process
MAX_PROCESSES = 8  # each imports the main module (torch with it): ~0.4 GB apiece


def _main_importable() -> bool:
    """Whether worker processes can start: they import the main module again, which must be
    a file (a script read from stdin would leave them waiting)."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return main is not None and os.path.isfile(main)


def all_labels(pairs: list[tuple[str, str]], processes: int | None = None,
               parallel_from: int = PARALLEL_FROM) -> list[dict[str, str]]:
    """The labels of many (Russian, English) pairs, in order. On a machine with more than two
    cores, many pairs are labelled across processes (`processes`, default the cores, at most
    MAX_PROCESSES): a million targets take about a minute on one core, a minute a GPU would
    wait for."""
    cores = os.cpu_count() or 1
    n = processes or (min(cores, MAX_PROCESSES) if cores > 2 else 1)
    if n < 2 or len(pairs) < parallel_from or not _main_importable():
        return [labels(russian, english) for russian, english in pairs]
    # forkserver: workers forked from a clean server, not from a process that may hold CUDA
    # and threads
    with multiprocessing.get_context("forkserver").Pool(n) as pool:
        return pool.starmap(labels, pairs, chunksize=max(1, min(5000, len(pairs) // (4 * n))))


# -- tags in training ----------------------------------------------------------------------------

def tag_ids(sp, tokens: SpecialTokens | None = None) -> dict[str, int]:
    """Each label's piece id in a SentencePiece model; ValueError for a tokenizer made before
    control tags (it has no such pieces: tags cannot be trained with it)."""
    has = known_controls(lambda piece: sp.piece_to_id(piece) != sp.unk_id(), tokens)
    if len(has) < len(CONTROLS):
        pieces = " ".join(tag_piece(v, tokens) for values in CONTROLS.values() for v in values)
        raise ValueError(f"control_share needs a tokenizer with the control tag pieces "
                         f"({pieces}) and this one was made before them: train with a new "
                         f"tokenizer (a new run) or set control_share 0")
    return {v: sp.piece_to_id(tag_piece(v, tokens)) for values in CONTROLS.values() for v in values}


def shown(share: float, seed: int, doc_id: str, index: int, kind: str) -> bool:
    """Whether an example shows its tag of one kind: a draw with chance `share`, fixed by the
    seed, the document, the segment and the kind (not by the order or the number of the
    examples), so a resumed run, every rank and a rerun tag the same examples."""
    key = f"{seed}/{doc_id}/{index}/{kind}".encode()
    draw = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2 ** 64
    return draw < share


def control_prefix(found: dict[str, str], ids: dict[str, int], share: float, seed: int,
                   doc_id: str, index: int) -> list[int]:
    """The tag ids a training source starts with: each of its target's labels (`found`,
    from `labels`) shown with chance `share` (independently per kind), formality first."""
    return [ids[found[kind]] for kind in CONTROLS
            if kind in found and shown(share, seed, doc_id, index, kind)]
