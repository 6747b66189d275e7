"""Helpers for engine tests: build exact positions through from_text."""

from __future__ import annotations

import pytest
from helpers.positions import build_position


@pytest.fixture
def position():
    return build_position
