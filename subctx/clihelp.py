"""Typer command classes both command lines use, so that `--help` reads alike: a flag shows no
'<bool>' after it, an argument its name alone (no '<list[Path]>'); Typer shows both."""

from __future__ import annotations

import typer


def _no_type(ctx) -> None:
    return None


class _PlainHelp:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for param in self.params:  # type: ignore[attr-defined]
            if isinstance(param, typer.core.TyperArgument):
                param.display_type_rich = _no_type  # its metavar says what it is

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class PlainCommand(_PlainHelp, typer.core.TyperCommand):
    """A command whose --help shows no types."""


class PlainGroup(_PlainHelp, typer.core.TyperGroup):
    """A command group whose --help shows no types."""
