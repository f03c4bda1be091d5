"""`GET /v1/agents/{id}/intro`: the empty page's name, description and example prompts."""

from __future__ import annotations

from types import SimpleNamespace

from tether.app.server._demo import demo_agents
from tether.app.server._intro import examples_of


def test_intro_of_a_served_agent_and_an_unknown_one(live):
    with live.client() as c:
        agents = c.get("/v1/agents").json()["agents"]
        first = agents[0]
        r = c.get(f"/v1/agents/{first['id']}/intro")
        assert r.status_code == 200, r.text
        intro = r.json()
        assert intro["id"] == first["id"] and intro["name"] == first["name"]
        assert intro["description"].startswith(first["description"])
        assert isinstance(intro["examples"], list)
        missing = c.get("/v1/agents/nope/intro")
        assert missing.status_code == 404 and "GET /v1/agents" in missing.json()["detail"]


def test_examples_come_from_the_agent_or_the_demo_help(tmp_path):
    demo = demo_agents(tmp_path / "notes")["notes"]
    examples = examples_of(demo)
    assert len(examples) == 3 and examples[0].startswith("count the words")
    assert examples_of(SimpleNamespace(examples=["a", " ", "b", "c", "d"])) == ["a", "b", "c"]
    assert examples_of(SimpleNamespace(examples=["a", 1])) == []
    assert examples_of(SimpleNamespace()) == []
