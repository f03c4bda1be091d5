"""Bounds on requests over real HTTP: `Last-Event-ID` like `?after=`, bodies over the limit
(chunked or not) → 413, and the security headers on every response."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from svc_agents import make_agent
from svc_helpers import SSE, ThreadServer, new_session, plan, sse, stream_reply

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage

LIMIT = 20_000
CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@pytest.fixture
def url(tmp_path: Path, test_dir: Path) -> Iterator[str]:
    app = create_app(
        {"planner": make_agent()},
        SQLiteStorage(tmp_path / "s.db"),
        events=SQLiteEventLog(tmp_path / "e.db"),
        max_body_bytes=LIMIT,
    )
    with ThreadServer(app) as server:
        yield server.url


BAD_IDS = [
    b"x",
    b"-1",
    b"\xb2",  # superscript two: `str.isdigit()` says yes, `int()` says no
    "٣".encode(),  # an Arabic-Indic digit
    b"1e3",
    b"0x10",
    b"9007199254740993",  # 2**53 + 1
    b"9223372036854775808",  # 2**63
    b"18446744073709551616",  # 2**64
    b"9" * 5000,
    b"",
]


def test_last_event_id_is_checked_like_after(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = new_session(c)
        frames = stream_reply(c, sid, plan("hello"))
        for bad in BAD_IDS:
            r = c.get(f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": bad})
            assert r.status_code == 422, (bad[:20], r.status_code, r.text[:200])
            assert r.json()["type"] == "InvalidInputError"
            assert "ASCII digits, 0 to 9007199254740992" in r.json()["detail"]
            assert len(r.json()["detail"]) < 300  # a 5,000-digit value is not echoed whole
        for bad in ["-1", "9007199254740993", "9" * 5000, "²"]:
            r = c.get(f"/v1/sessions/{sid}/events", params={"after": bad})
            assert r.status_code == 422, (bad[:20], r.text[:200])
        with c.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": b"0"}
        ) as r:
            assert [f.id for f in sse(r)] == [f.id for f in frames]
        top = str(2**53).encode()
        for edge in [top, b"00000000000000000001"]:
            with c.stream(
                "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": edge}
            ) as r:
                assert r.status_code == 200
                assert [f.id for f in sse(r)] == ([] if edge == top else [f.id for f in frames[1:]])


def _chunks(total: int, size: int = 4096) -> Iterator[bytes]:
    sent = 0
    yield b'{"input": {"role": "user", "content": "'
    while sent < total:
        yield b"x" * size
        sent += size
    yield b'"}}'


def test_oversize_bodies_get_413_chunked_or_not(url: str, test_dir: Path) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = new_session(c)
        before = c.get(f"/v1/sessions/{sid}").json()
        path = f"/v1/sessions/{sid}/replies"
        json_type = {"content-type": "application/json"}
        for body in [_chunks(LIMIT * 3), _chunks(LIMIT + 1, size=LIMIT + 1)]:
            r = c.post(path, content=body, headers=json_type)
            assert "content-length" not in r.request.headers  # sent chunked
            assert r.status_code == 413, r.text
            assert r.json()["type"] == "RequestTooLargeError"
            assert f"limit of {LIMIT} bytes" in r.json()["detail"]
        r = c.post(path, content=b"x" * (LIMIT + 1), headers=json_type)
        assert r.status_code == 413 and r.json()["type"] == "RequestTooLargeError"
        made = c.post("/v1/sessions", content=(b'{"agent_id": "planner"}',), headers=json_type)
        assert made.status_code == 201, made.text  # a chunked body under the limit is read
        r = c.post(path, content=_chunks(LIMIT // 2), headers=json_type)
        assert r.status_code == 200 and r.json()["status"] == "completed"
        after = c.get(f"/v1/sessions/{sid}").json()
        assert after["message_count"] == before["message_count"] + 2
        assert not (test_dir / "runs.log").exists()


def test_every_response_carries_the_security_headers(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        sid = new_session(c)
        responses = [
            c.get("/"),
            c.get("/index.html"),
            c.get("/js/main.js"),
            c.get("/app.css"),
            c.get("/v1/sessions"),
            c.get(f"/v1/sessions/{sid}/events"),
            c.get("/nowhere"),
            c.get("/healthz", headers={"Host": "evil.example"}),
            c.post("/v1/sessions", json={}, headers={"Origin": "http://evil.example"}),
            c.post("/v1/sessions", content=b"x" * (LIMIT + 1)),
        ]
        assert [r.status_code for r in responses] == [200] * 6 + [404, 421, 403, 413]
        assert "text/html" in responses[0].headers["content-type"]
        for r in responses:
            assert r.headers["content-security-policy"] == CSP, r.request.url
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "no-referrer"
        docs = c.get("/docs")  # FastAPI's page loads its scripts from a CDN: no framing only
        assert docs.status_code == 200
        assert docs.headers["content-security-policy"].startswith("frame-ancestors 'none'")
        assert docs.headers["x-frame-options"] == "DENY"
