"""The sub-agent team (`subagent_svc`) served in this process, for the AG-UI tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from subagent_svc import agents
from svc_agents import make_agent
from svc_helpers import ThreadServer

from tether.app.server import create_app

ALICE = "key-alice-0123456789"


@dataclass
class Served:
    """A running service: its URL, storage backend and test folder."""

    url: str
    backend: Any
    dir: Path

    def client(self, key: str = ALICE) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"authorization": f"Bearer {key}"},
                            timeout=30)  # fmt: skip

    def runs(self) -> list[str]:
        path = self.dir / "runs.log"
        return path.read_text().splitlines() if path.exists() else []


@contextmanager
def serve_team(backend: Any, test_dir: Path, *, planner: bool = False) -> Iterator[Served]:
    """Serve `team` (boss → researcher, writer), and `planner` too if asked; the
    researcher's gate is open."""
    (test_dir / "mid").touch()
    storage, events = backend.pair()
    served = {**({"planner": make_agent()} if planner else {}), **agents()}
    app = create_app(served, storage, events=events, api_keys={ALICE: "alice"}, lease_ttl=2.0)
    with ThreadServer(app) as server:
        yield Served(server.url, backend, test_dir)
