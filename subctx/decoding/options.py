"""How documents are decoded: context rule, beam, schedule, scope and guard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from subctx.contract import BATCH_SIZE
from subctx.decoding.schedules import BLOCKS, Schedule, schedule_named
from subctx.decoding.scope import SCOPES, ContextScope, scope_named
from subctx.guard import GuardSettings

if TYPE_CHECKING:
    from subctx.bundle import ContextSettings
    from subctx.controls import GenderTags, RegisterCarry


@dataclass
class DecodeOptions:
    context: int = 1  # previous units read as context (capped by the model)
    max_gap: float | None = 7.0  # seconds of silence that break context (None: never)
    beam_size: int = 4
    num_hypotheses: int = 1
    return_attention: bool = False
    batch_size: int = BATCH_SIZE  # requests decoded together; blocks side by side
    schedule: Schedule = BLOCKS  # how units wait for their context's translations
    guard: GuardSettings = field(default_factory=GuardSettings)
    scope: ContextScope = SCOPES["all"]  # what context may change
    controls: tuple[str, ...] = ()  # control tag pieces for every request (subctx.controls)
    carry: RegisterCarry | None = None  # --formality auto: each line its scene's register tag
    genders: GenderTags | None = None  # the model's speaker-gender pieces (the review asks)

    @classmethod
    def for_model(cls, settings: ContextSettings, context: int | None = None,
                  max_gap: float | None = None, guard: bool | None = None,
                  scope: str | None = None, schedule: str | None = None,
                  **rest) -> DecodeOptions:
        """The app's options for a bundle: its context rule, guard and scope unless given
        (names, as a command line or a manifest gives them)."""
        return cls(context=settings.default_k if context is None else context,
                   max_gap=settings.max_gap if max_gap is None else max_gap,
                   guard=GuardSettings(enabled=settings.guard if guard is None else guard),
                   scope=scope_named(settings.scope if scope is None else scope),
                   schedule=BLOCKS if schedule is None else schedule_named(schedule),
                   **rest)
