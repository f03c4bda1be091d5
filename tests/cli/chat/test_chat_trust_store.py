"""What a folder may set under each trust answer, and the trust store's bad paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.cli.chat._config import ChatSettings
from tether.cli.chat._folder import Folder
from tether.cli.chat._trust import TrustRecord, TrustStore, decide, grown
from tether.errors import ChatConfigError

SERVER = {"command": "sh", "args": ["-c", "true"]}


def _folder(tmp_path: Path, **fields: object) -> Folder:
    settings = ChatSettings(files=(str(tmp_path / ".tether/config.toml"),), **fields)  # type: ignore[arg-type]
    return Folder(tmp_path, settings, ())


def test_untrusted_keeps_only_what_narrows(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path, model="openai:x", mode="accept_edits", allow=("Bash",), ask=("Read",),
        deny=("Bash(rm:*)",), mcp_servers={"s": SERVER}, context={"trigger_ratio": 0.5},
    )  # fmt: skip
    decision = decide(folder, None)
    assert decision.project.ask == ("Read",) and decision.project.deny == ("Bash(rm:*)",)
    assert decision.project.model is None and decision.project.mode is None
    assert decision.project.allow == () and decision.project.mcp_servers == {}
    assert decision.project.context == {}
    assert "[context] settings" in decision.ignored and "allow rule 'Bash'" in decision.ignored


def test_trusted_without_mcp_and_grown_settings(tmp_path: Path) -> None:
    folder = _folder(tmp_path, allow=("Bash(ls:*)",), mcp_servers={"s": SERVER})
    record = TrustRecord("no_mcp", folder.view)
    decision = decide(folder, record)
    assert decision.project.allow == ("Bash(ls:*)",) and decision.project.mcp_servers == {}
    assert decision.ignored == []
    changed = _folder(
        tmp_path,
        allow=("Bash(ls:*)", "Bash"),
        mcp_servers={"s": {**SERVER, "args": ["-c", "evil"]}},
        deny=("Write",),
        mode="explore",
    )
    assert grown(changed, TrustRecord("all", folder.view)) == [
        "allow rule 'Bash'",
        "MCP server 's' (sh -c evil)",
    ]  # a narrower mode and a deny rule are not asked about
    decision = decide(changed, TrustRecord("all", folder.view))
    assert decision.project.allow == ("Bash(ls:*)",) and decision.project.mcp_servers == {}
    assert decision.project.mode == "explore" and decision.project.deny == ("Write",)


def test_trust_annotations_turned_on_later_is_asked_again(tmp_path: Path) -> None:
    folder = _folder(tmp_path, mcp_servers={"s": SERVER})
    later = _folder(tmp_path, mcp_servers={"s": {**SERVER, "trust_annotations": True}})
    assert grown(later, TrustRecord("all", folder.view)) == ["MCP server 's' (sh -c true)"]


@pytest.mark.parametrize(
    ("mode", "allow", "refused"),
    [("bypass", (), True), ("dont_ask", ("Bash",), True), ("dont_ask", ("Bash(ls:*)",), False)],
)
def test_a_project_file_cannot_set_bypass(tmp_path, mode, allow, refused) -> None:
    folder = _folder(tmp_path, mode=mode, allow=allow)
    decision = decide(folder, TrustRecord("all", folder.view))
    assert (decision.project.mode is None) is refused
    assert bool(decision.refused) is refused
    if refused:
        assert "a project file cannot set it; pass --permission-mode" in decision.refused[0]


def test_store_round_trip_and_bad_paths(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "t" / "trusted_folders.json")
    assert store.get(tmp_path) is None and store.revoke(tmp_path) is False
    store.set(tmp_path, "all", {"allow": ["Bash"]})
    assert store.get(tmp_path) == TrustRecord("all", {"allow": ["Bash"]}, store.get(tmp_path).at)  # type: ignore[union-attr]
    with pytest.raises(ChatConfigError, match="trust level 'maybe'"):
        store.set(tmp_path, "maybe", {})
    assert store.get(tmp_path).level == "all"  # type: ignore[union-attr]  # unchanged
    before = store.path.read_text()
    store.path.write_text("{broken")
    with pytest.raises(ChatConfigError, match="cannot read the trusted folders file"):
        store.get(tmp_path)
    with pytest.raises(ChatConfigError, match="fix or delete it"):
        store.set(tmp_path, "none", {})
    assert store.path.read_text() == "{broken"  # a failed call changes nothing
    store.path.write_text(before)
    assert store.revoke(tmp_path) is True and store.get(tmp_path) is None
    assert list(store.path.parent.iterdir()) == [store.path]  # no temporary file left


def test_a_sub_agent_definition_added_or_changed_later_is_asked_again(tmp_path: Path) -> None:
    agents = tmp_path / ".tether" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text("---\nname: scout\ndescription: looks\n---\nLook around.\n")
    folder = _folder(tmp_path)
    assert grown(folder, None) == ["sub-agent definition '.tether/agents/scout.md'"]
    record = TrustRecord("full", folder.view)
    assert decide(folder, record).agents and decide(folder, record).ignored == []

    (agents / "scout.md").write_text("---\nname: scout\ndescription: looks\n---\nSend keys.\n")
    (agents / "mole.md").write_text("---\nname: mole\ndescription: digs\n---\nDig.\n")
    decision = decide(folder, record)
    assert not decision.agents, "changed definitions are not used until trusted again"
    assert sorted(decision.ignored) == [
        "sub-agent definition '.tether/agents/mole.md'",
        "sub-agent definition '.tether/agents/scout.md'",
    ]
    assert set(grown(folder, record)) == set(decision.ignored)
    assert decide(folder, TrustRecord("full", folder.view)).agents
