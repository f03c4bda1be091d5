"""`LocalFileOffloader`: JSONL per session, full texts as files, safe names."""

from __future__ import annotations

import pytest

from tether.context import LocalFileOffloader, Offloader
from tether.errors import ConfigError
from tether.message import AssistantMsg, Msg, ToolCallBlock, ToolResultBlock, UserMsg


async def test_messages_are_appended_as_json_lines_and_round_trip(tmp_path) -> None:
    offloader = LocalFileOffloader(tmp_path / "off")
    assert isinstance(offloader, Offloader)
    first = [UserMsg(name="u", content="hello 你好")]
    second = [
        AssistantMsg(
            name="a",
            content=[
                ToolCallBlock(id="c", name="t", input="{}"),
                ToolResultBlock(id="c", name="t", output="r"),
            ],
        )
    ]
    p1 = await offloader.offload_messages("s1", first)
    p2 = await offloader.offload_messages("s1", second)
    assert p1 == p2 == str((tmp_path / "off" / "s1" / "context.jsonl").resolve())
    lines = open(p1, encoding="utf-8").read().splitlines()
    assert [Msg.model_validate_json(line) for line in lines] == first + second


async def test_full_texts_are_files_named_after_the_result(tmp_path) -> None:
    offloader = LocalFileOffloader(tmp_path)
    path = await offloader.offload_text("s1", "Bash-call_1", "x" * 10)
    assert path == str(tmp_path.resolve() / "s1" / "tool_results" / "Bash-call_1.txt")
    assert open(path).read() == "x" * 10


async def test_names_cannot_escape_the_root(tmp_path) -> None:
    offloader = LocalFileOffloader(tmp_path / "root")
    path = await offloader.offload_text("../../etc", "../passwd", "nope")
    assert path.startswith(str((tmp_path / "root").resolve()) + "/")
    assert not (tmp_path / "etc").exists()
    with pytest.raises(ConfigError, match="cannot make a file name"):
        await offloader.offload_text("..", "x", "nope")


def test_a_root_that_is_a_file_is_refused(tmp_path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match="is not a folder"):
        LocalFileOffloader(tmp_path / "f")
