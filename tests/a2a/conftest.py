"""The A2A client tests need the `a2a` extra (a2a-sdk); without it they skip, saying so."""

from __future__ import annotations

import pytest

pytest.importorskip("a2a.client", reason="a2a-sdk is not installed (pip install 'tether[a2a]')")
