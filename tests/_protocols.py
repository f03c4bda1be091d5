"""The protocols' own JS clients, installed pinned by `tests/protocols/install.sh`.

`node_with(package)` is the `node` to run them with: the test skips (saying why) when Node
or the package is missing, and fails instead when `TETHER_REQUIRE_NODE` is set (`.ci/run`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

MODULES = Path(__file__).resolve().parents[1] / ".ci" / ".protocols" / "node_modules"
"""Where `install.sh` puts the clients (a script run beside it resolves their imports)."""


def node_with(package: str) -> str:
    """The path of `node`, once `package` (e.g. `@ag-ui/client`) is installed in `MODULES`."""
    node = shutil.which("node")
    if node is None or not (MODULES / package).is_dir():
        if os.environ.get("TETHER_REQUIRE_NODE"):
            pytest.fail(f"node or {package} is missing: run tests/protocols/install.sh")
        pytest.skip(f"node or {package} is not installed (tests/protocols/install.sh)")
    return node
