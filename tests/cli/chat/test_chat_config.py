"""Config files and `.mcp.json` for `tether chat` (parsed, merged, rejected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.cli.chat._config import load_settings
from tether.errors import ChatConfigError


@pytest.fixture(autouse=True)
def _user_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return tmp_path / "cfg"


def _user(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cfg" / "tether" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)


def _project(root: Path, text: str) -> Path:
    (root / ".tether").mkdir(exist_ok=True)
    path = root / ".tether" / "config.toml"
    path.write_text(text)
    return path


def test_project_wins_and_rules_add_up(tmp_path: Path) -> None:
    _user(
        tmp_path,
        'model = "openai:gpt-4o"\nskills = ["~/skills"]\n'
        '[permissions]\nmode = "bypass"\nallow = ["Bash(ls:*)"]\n'
        '[mcp_servers.a]\ncommand = "a-server"\n',
    )
    root = tmp_path / "p"
    root.mkdir()
    _project(
        root,
        'model = "anthropic:claude"\n[permissions]\nmode = "accept_edits"\n'
        'allow = ["Read(docs/**)"]\ndeny = ["Bash(rm:*)"]\n'
        '[mcp_servers.b]\nurl = "http://127.0.0.1:1/mcp"\nheaders = {X = "1"}\n',
    )
    settings = load_settings(root)
    assert settings.model == "anthropic:claude"
    assert settings.mode == "accept_edits"
    assert settings.allow == ("Bash(ls:*)", "Read(docs/**)")
    assert settings.deny == ("Bash(rm:*)",)
    assert settings.skills == ("~/skills",)
    assert set(settings.mcp_servers) == {"a", "b"}
    assert len(settings.files) == 2


def test_mcp_json_is_read_and_config_wins_by_name(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": "mcp-server-time", "args": ["--x"], "env": {"A": "1"}},
                    "web": {"url": "https://example.com/mcp", "headers": {"K": "v"}},
                }
            }
        )
    )
    _project(tmp_path, '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\n')
    servers = load_settings(tmp_path).mcp_servers
    assert servers["time"] == {"command": "mcp-server-time", "args": ["--x"], "env": {"A": "1"}}
    assert servers["web"] == {"url": "http://127.0.0.1:9/mcp"}


def test_config_flag_replaces_the_project_file(tmp_path: Path) -> None:
    _project(tmp_path, 'model = "openai:a"\n')
    other = tmp_path / "other.toml"
    other.write_text('model = "openai:b"\n')
    assert load_settings(tmp_path, str(other)).model == "openai:b"
    with pytest.raises(ChatConfigError, match="no such file"):
        load_settings(tmp_path, str(tmp_path / "absent.toml"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour = 1\n", "unknown keys ['colour']"),
        ("[permissions]\nmode = 'yolo'\n", "is not one of"),
        ("[permissions]\nallow = 'Bash'\n", "must be a list of strings"),
        ("[permissions]\nwho = 1\n", "in [permissions]"),
        ("model = 3\n", "must be a string"),
        ("[mcp_servers.x]\nargs = []\n", "needs either `command`"),
        ("[mcp_servers.x]\ncommand = 'a'\nurl = 'http://b'\n", "needs either `command`"),
        ("[mcp_servers.x]\ncommand = 'a'\ncolour = 1\n", "unknown keys ['colour']"),
        ("model = \n", "cannot read config"),
    ],
)
def test_bad_config_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _project(tmp_path, text)
    with pytest.raises(ChatConfigError) as caught:
        load_settings(tmp_path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_bad_mcp_json(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"servers": {}}')
    with pytest.raises(ChatConfigError, match="mcpServers"):
        load_settings(tmp_path)
    (tmp_path / ".mcp.json").write_text("{not json")
    with pytest.raises(ChatConfigError, match="cannot read"):
        load_settings(tmp_path)


def test_mcp_clients_from_settings(tmp_path: Path) -> None:
    from tether.cli.chat._build import mcp_clients

    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "local": {"type": "stdio", "command": "srv", "args": ["-v"], "env": {"A": "1"}},
                    "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                    "bad": {"url": "ftp://nowhere"},
                }
            }
        )
    )
    settings = load_settings(tmp_path)
    with pytest.raises(ChatConfigError, match="MCP server 'bad'"):
        mcp_clients(settings, tmp_path)
    del settings.mcp_servers["bad"]
    local, legacy = mcp_clients(settings, tmp_path)
    assert local.mcp_config.command == "srv" and local.mcp_config.args == ["-v"]
    assert str(local.mcp_config.cwd) == str(tmp_path)
    assert legacy.mcp_config.transport == "sse"


def test_mcp_trust_annotations_is_per_server_and_off_by_default(tmp_path: Path) -> None:
    from tether.cli.chat._build import mcp_clients

    servers = {
        "plain": {"command": "srv"},
        "trusted": {"command": "srv", "trust_annotations": True},
        "bad": {"command": "srv", "trust_annotations": "yes"},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    settings = load_settings(tmp_path)
    with pytest.raises(ChatConfigError, match="`trust_annotations` must be true or false"):
        mcp_clients(settings, tmp_path)
    del settings.mcp_servers["bad"]
    plain, trusted = mcp_clients(settings, tmp_path)
    assert (plain.trust_annotations, trusted.trust_annotations) == (False, True)
