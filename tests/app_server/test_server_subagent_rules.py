"""Over HTTP, a confirmation of a sub-agent's call may scope its rules to the parent too
(`ConfirmResult.rules_scope`): the stored parent state remembers them only when asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import subagent_svc
from svc_helpers import SSE, ThreadServer, confirm_all, new_session, sse, user

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage

KEY = "key-alice-0123456789"


@pytest.mark.parametrize("scope", [None, "agent", "agent_and_parents"])
def test_the_confirm_route_takes_the_rules_scope(
    tmp_path: Path, test_dir: Path, scope: str | None
) -> None:
    (test_dir / "mid").touch()  # the researcher's gate is open
    db = tmp_path / "sessions.db"
    app = create_app(
        subagent_svc.agents(),
        SQLiteStorage(db),
        events=SQLiteEventLog(tmp_path / "events.db"),
        api_keys={KEY: "alice"},
    )
    with ThreadServer(app) as server:
        import httpx

        headers = {"authorization": f"Bearer {KEY}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            sid = new_session(client, agent_id="team")
            with client.stream(
                "POST", f"/v1/sessions/{sid}/replies", json=user("go"), headers=SSE
            ) as r:
                frames = list(sse(r))
            pause = frames[-1].data
            assert frames[-1].event == "require_user_confirm"
            assert pause["tool_calls"][0]["id"] == "boss1/wri0"
            body: dict[str, Any] = confirm_all(pause)
            if scope is not None:
                body["input"]["confirm_results"][0]["rules_scope"] = scope
            done = client.post(f"/v1/sessions/{sid}/replies", json=body).json()
            assert done["status"] == "completed", done
            bad = confirm_all(pause)
            bad["input"]["confirm_results"][0]["rules_scope"] = "everyone"
            refused = client.post(f"/v1/sessions/{sid}/replies", json=bad)
            assert refused.status_code == 422 and "rules_scope" in refused.text

    async def stored() -> list[str]:
        record = await SQLiteStorage(db).get_session("alice", "team", sid)
        assert record is not None
        return [str(r) for r in record.state.permission_context.allow_rules]

    assert asyncio.run(stored()) == (["publish"] if scope == "agent_and_parents" else [])
