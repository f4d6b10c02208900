"""Looking a name up in one of the registries (formats, architectures, backends, schedules,
scopes): the one place where a name given at an edge (a flag, a manifest) becomes an object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: str, what: str) -> T:
    """`registry[name]`; ValueError naming the valid names otherwise."""
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r} (use {', '.join(registry)})") from None
