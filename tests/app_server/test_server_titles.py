"""`PUT /v1/sessions/{id}/title`: a session's title, other metadata kept, bad input refused."""

from __future__ import annotations

from svc_helpers import new_session


def _view(c, sid):
    return c.get(f"/v1/sessions/{sid}").json()


def test_title_is_set_and_other_metadata_kept(live):
    with live.client() as c:
        sid = new_session(c, metadata={"team": "a"})
        version = _view(c, sid)["version"]
        r = c.put(f"/v1/sessions/{sid}/title", json={"title": "  Fix the\n flaky   test "})
        assert r.status_code == 200, r.text
        assert r.json()["metadata"] == {"team": "a", "title": "Fix the flaky test"}
        view = _view(c, sid)
        assert view["metadata"]["title"] == "Fix the flaky test"
        assert view["version"] == version  # the state is untouched
        listed = c.get("/v1/sessions").json()["sessions"]
        assert [s["metadata"].get("title") for s in listed if s["session_id"] == sid] == [
            "Fix the flaky test"
        ]


def test_bad_titles_and_other_users_change_nothing(live):
    with live.client() as c, live.client("key-bob-9876543210") as bob:
        sid = new_session(c, metadata={"title": "kept"})
        for body in [{"title": "   "}, {"title": ""}, {"title": "x" * 201}, {"title": "a", "x": 1}]:
            r = c.put(f"/v1/sessions/{sid}/title", json=body)
            assert r.status_code == 422, (body, r.text)
        blank = c.put(f"/v1/sessions/{sid}/title", json={"title": " \t "})
        assert "visible character" in blank.json()["detail"]
        theirs = bob.put(f"/v1/sessions/{sid}/title", json={"title": "mine"})
        assert theirs.status_code == 404 and theirs.json()["type"] == "SessionNotFoundError"
        missing = c.put("/v1/sessions/nope/title", json={"title": "t"})
        assert missing.status_code == 404
        assert _view(c, sid)["metadata"] == {"title": "kept"}
