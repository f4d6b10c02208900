"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import build_tiny_bundle


@pytest.fixture(scope="session")
def tiny_bundle(tmp_path_factory) -> Path:
    return build_tiny_bundle(tmp_path_factory.mktemp("tiny"))
