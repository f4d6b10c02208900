"""The context scopes (subctx.decoding.scope) and the guard's checks, as the decoder applies
them to a translation made with context."""

import pytest

from subctx.decoding.scope import OUT_OF_SCOPE, SCOPES, scope_named
from subctx.guard import LENGTH, GuardSettings, verdict

AGREEMENT, ALL = SCOPES["agreement"], SCOPES["all"]


@pytest.mark.parametrize("source, plain, with_context, previous, kept", [
    ("I'll take my things.", "Я возьму вещи.", "Я принесу вещи.", [], False),  # wording only
    # ты/вы: kept where the previous translation says the register it moves to
    ("Are you sure?", "Ты уверен?", "Вы уверены?", ["Простите, вы Анна?"], True),
    ("Are you sure?", "Ты уверен?", "Вы уверены?", ["Привет, Анна."], False),  # nothing tells вы
    ("Are you sure?", "Ты уверен?", "Вы уверены?", ["Ты где?"], False),  # the line says ты
    ("It's gone.", "Он ушёл.", "Она ушла.", [], True),
    # the speaker's gender: a guess from another speaker's line, left to the plain translation
    ("I got it.", "Я понял.", "Я поняла.", [], False),
    # an elided verb takes the verb the previous line gives it
    ("I did.", "Я сделал.", "Видел.", ["Ты видел его?"], True),
    ("I did.", "Я сделал.", "Видел.", [], False),  # not a word of it from a previous line
])
def test_the_agreement_scope_keeps_only_agreement(source, plain, with_context, previous, kept):
    assert AGREEMENT.keeps(source, plain, with_context, previous) is kept
    assert ALL.keeps(source, plain, with_context, previous)  # scope 'all': anything goes


def test_what_each_scope_asks_for():
    assert not AGREEMENT.needs_context("Seven sharp.") and ALL.needs_context("Seven sharp.")
    assert AGREEMENT.needs_context("Are you sure?") and AGREEMENT.needs_context("It left.")
    # a cue of address is worth decoding with context only where the context tells a register
    # the plain translation lacks
    assert AGREEMENT.worth_asking("Are you sure?", "Ты уверен?", ["Простите, вы Анна?"])
    assert not AGREEMENT.worth_asking("Are you sure?", "Ты уверен?", ["Привет, Анна."])
    assert ALL.worth_asking("Are you sure?", "Ты уверен?", ["Привет, Анна."])
    assert AGREEMENT.compares_plain and not ALL.compares_plain
    assert scope_named("agreement") is AGREEMENT
    with pytest.raises(ValueError, match="use all, agreement"):
        scope_named("some")


def test_the_guard_checks_what_the_scope_lets_through():
    on, off = GuardSettings(), GuardSettings(enabled=False)
    assert verdict("Вы уверены? " * 5, "Ты уверен?", ["Вы кто?"], None, None, on) == LENGTH
    assert verdict("Вы уверены? " * 5, "Ты уверен?", ["Вы кто?"], None, None, off) is None
    assert verdict("Ты уверен?", "Ты уверен?", [], None, None, on) is None  # the same text
    assert not OUT_OF_SCOPE.broken and LENGTH.broken  # what the summary counts as fallbacks
