"""What the previous line may change in a translation: the context scope, one object per scope.

A scope answers three questions of the decoder: does this cue need its context at all (from
the English), is a translation with context worth asking for (once the plain translation and
the previous translations are known), and is a translation with context kept over the plain
one. `all` lets context change anything; `agreement` (subctx.agreement) only ты/вы, a
pronoun's gender and an elided verb: for a model that has learnt no more from context, its
other changes are as likely to hurt as to help (docs/decoding.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from subctx import agreement
from subctx.contract import Fallback
from subctx.registry import lookup

OUT_OF_SCOPE = Fallback("changes no pronoun or ты/вы", broken=False)


class ContextScope(ABC):
    """What context may change; `compares_plain`: each context translation is weighed against
    the cue's translation without context (so every cue gets one)."""

    name: str
    words: str  # what it lets context change, for `subctx info` and the model card
    compares_plain: bool

    @abstractmethod
    def needs_context(self, source: str) -> bool:
        """Whether a cue with this English is worth translating with its context at all."""

    @abstractmethod
    def worth_asking(self, source: str, plain: str, previous: Sequence[str]) -> bool:
        """Whether a translation with context could be kept, given the plain translation and
        the context translations (nearest last)."""

    @abstractmethod
    def keeps(self, source: str, plain: str, with_context: str, previous: Sequence[str]
              ) -> bool:
        """Whether the translation made with context replaces the plain one."""


class EveryChange(ContextScope):
    name, words, compares_plain = "all", "anything", False

    def needs_context(self, source: str) -> bool:
        return True

    def worth_asking(self, source: str, plain: str, previous: Sequence[str]) -> bool:
        return True

    def keeps(self, source: str, plain: str, with_context: str, previous: Sequence[str]
              ) -> bool:
        return True


class AgreementOnly(ContextScope):
    name, words, compares_plain = "agreement", "only ты/вы, pronouns and elided verbs", True

    def needs_context(self, source: str) -> bool:
        return agreement.needs_context(source)

    def worth_asking(self, source: str, plain: str, previous: Sequence[str]) -> bool:
        return agreement.worth_asking(source, plain, previous)

    def keeps(self, source: str, plain: str, with_context: str, previous: Sequence[str]
              ) -> bool:
        return agreement.keeps(source, plain, with_context, previous)


SCOPES: dict[str, ContextScope] = {s.name: s for s in (EveryChange(), AgreementOnly())}


def scope_named(name: str) -> ContextScope:
    """The registered scope of this name; ValueError listing the names otherwise."""
    return lookup(SCOPES, name, "context scope")
