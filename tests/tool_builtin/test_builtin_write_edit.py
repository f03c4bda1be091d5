import os
import subprocess
import sys
from typing import Any

import pytest

from tether.message import ToolResultState
from tether.permission import PermissionContext
from tether.tool import Edit, Read, ToolContext, Write


async def test_write_creates_a_file_and_its_parents(session):
    result = await session.run(Write(), file_path="deep/er/new.txt", content="one\ntwo\n")
    assert result.state is ToolResultState.SUCCESS
    path = session.work / "deep/er/new.txt"
    assert path.read_text() == "one\ntwo\n"
    assert "Created" in result.get_text() and "2 lines" in result.get_text()


async def test_write_refuses_to_overwrite_an_unread_file(session):
    path = session.work / "a.txt"
    path.write_text("keep me\n")
    result = await session.run(Write(), file_path="a.txt", content="gone\n")
    assert result.state is ToolResultState.ERROR
    assert "Read it first" in result.get_text()
    assert path.read_text() == "keep me\n"


async def test_write_overwrites_after_read_and_may_write_again(session):
    path = session.work / "a.txt"
    path.write_text("old\n")
    await session.run(Read(), file_path="a.txt")
    first = await session.run(Write(), file_path="a.txt", content="new\n")
    assert first.state is ToolResultState.SUCCESS and "Updated" in first.get_text()
    # Its own write is known: no re-read needed for the next one.
    second = await session.run(Write(), file_path=str(path), content="newer\n")
    assert second.state is ToolResultState.SUCCESS
    assert path.read_text() == "newer\n"


async def test_write_refused_after_an_external_change(session):
    path = session.work / "a.txt"
    path.write_text("v1\n")
    await session.run(Read(), file_path="a.txt")
    path.write_text("changed by the user\n")
    session.set_mtime(path, -5)  # a later modification time, as a real edit would leave
    refused = await session.run(Write(), file_path="a.txt", content="v2\n")
    assert refused.state is ToolResultState.ERROR
    assert "changed on disk" in refused.get_text()
    assert path.read_text() == "changed by the user\n"
    await session.run(Read(), file_path="a.txt")
    allowed = await session.run(Write(), file_path="a.txt", content="v2\n")
    assert allowed.state is ToolResultState.SUCCESS
    assert path.read_text() == "v2\n"


async def test_write_to_a_directory_is_an_error(session):
    (session.work / "d").mkdir()
    result = await session.run(Write(), file_path="d", content="x")
    assert result.state is ToolResultState.ERROR and "directory" in result.get_text()


async def _read(session: Any, name: str, data: bytes | str) -> None:
    path = session.work / name
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    await session.run(Read(), file_path=name)


async def test_edit_with_zero_matches_is_an_error_and_changes_nothing(session):
    await _read(session, "a.py", "def f():\n    return 1\n")
    result = await session.run(Edit(), file_path="a.py", old_string="return 2", new_string="x")
    assert result.state is ToolResultState.ERROR
    assert "not found" in result.get_text()
    assert (session.work / "a.py").read_text() == "def f():\n    return 1\n"
    indented = await session.run(
        Edit(), file_path="a.py", old_string="  return 1\n  pass", new_string="x"
    )
    assert "line 2" in indented.get_text() and "whitespace" in indented.get_text()


async def test_edit_with_one_match_replaces_it(session):
    await _read(session, "a.py", "def f():\n    return 1\n")
    result = await session.run(
        Edit(), file_path="a.py", old_string="return 1", new_string="return 2"
    )
    assert result.state is ToolResultState.SUCCESS
    assert (session.work / "a.py").read_text() == "def f():\n    return 2\n"
    assert "     2\t    return 2" in result.get_text()


async def test_edit_with_two_matches_needs_replace_all(session):
    await _read(session, "a.py", "x = 1\ny = 2\nx = 1\n")
    result = await session.run(Edit(), file_path="a.py", old_string="x = 1", new_string="x = 3")
    assert result.state is ToolResultState.ERROR
    assert "2 times" in result.get_text() and "lines 1, 3" in result.get_text()
    assert (session.work / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    every = await session.run(
        Edit(), file_path="a.py", old_string="x = 1", new_string="x = 3", replace_all=True
    )
    assert every.state is ToolResultState.SUCCESS and "2 occurrences" in every.get_text()
    assert (session.work / "a.py").read_text() == "x = 3\ny = 2\nx = 3\n"


async def test_no_op_edit_is_an_error(session):
    await _read(session, "a.txt", "same\n")
    result = await session.run(Edit(), file_path="a.txt", old_string="same", new_string="same")
    assert result.state is ToolResultState.ERROR and "identical" in result.get_text()


async def test_edit_needs_a_fresh_read(session):
    path = session.work / "a.txt"
    path.write_text("hello\n")
    unread = await session.run(Edit(), file_path="a.txt", old_string="hello", new_string="bye")
    assert unread.state is ToolResultState.ERROR and "not been read" in unread.get_text()
    await session.run(Read(), file_path="a.txt")
    path.write_text("hello there\n")
    session.set_mtime(path, -5)
    stale = await session.run(Edit(), file_path="a.txt", old_string="hello", new_string="bye")
    assert stale.state is ToolResultState.ERROR and "changed on disk" in stale.get_text()
    assert path.read_text() == "hello there\n"


async def test_consecutive_edits_need_no_reread(session):
    await _read(session, "a.txt", "a b c\n")
    await session.run(Edit(), file_path="a.txt", old_string="a", new_string="A")
    second = await session.run(Edit(), file_path="a.txt", old_string="b", new_string="B")
    assert second.state is ToolResultState.SUCCESS
    assert (session.work / "a.txt").read_text() == "A B c\n"


async def test_edit_keeps_crlf_line_endings(session):
    await _read(session, "win.txt", b"one\r\ntwo\r\nthree\r\n")
    result = await session.run(
        Edit(), file_path="win.txt", old_string="one\ntwo", new_string="1\n2\n2.5"
    )
    assert result.state is ToolResultState.SUCCESS
    assert (session.work / "win.txt").read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"


async def test_edit_keeps_the_encoding(session):
    await _read(session, "u16.txt", "naïve café\n".encode("utf-16"))
    await session.run(Edit(), file_path="u16.txt", old_string="café", new_string="bistro")
    data = (session.work / "u16.txt").read_bytes()
    assert data[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert data.decode("utf-16") == "naïve bistro\n"
    await _read(session, "latin.txt", "café crème\n".encode("latin-1"))
    await session.run(Edit(), file_path="latin.txt", old_string="crème", new_string="brûlée")
    assert (session.work / "latin.txt").read_bytes() == "café brûlée\n".encode("latin-1")
    await _read(session, "bom.txt", b"\xef\xbb\xbfkey = 1\n")
    await session.run(Edit(), file_path="bom.txt", old_string="1", new_string="2")
    assert (session.work / "bom.txt").read_bytes() == b"\xef\xbb\xbfkey = 2\n"


async def test_empty_old_string_creates_only_new_files(session):
    created = await session.run(Edit(), file_path="new/f.txt", old_string="", new_string="hi\n")
    assert created.state is ToolResultState.SUCCESS
    assert (session.work / "new/f.txt").read_text() == "hi\n"
    again = await session.run(Edit(), file_path="new/f.txt", old_string="", new_string="ho\n")
    assert again.state is ToolResultState.ERROR and "already exists" in again.get_text()
    missing = await session.run(Edit(), file_path="nope.txt", old_string="a", new_string="b")
    assert missing.state is ToolResultState.ERROR and "does not exist" in missing.get_text()


async def test_edit_refuses_binary_files(session):
    path = session.work / "img.bin"
    path.write_bytes(b"\x00\x01" * 50)
    session.state.tool_state_for("Read")["read_files"] = {str(path): path.stat().st_mtime_ns}
    result = await session.run(Edit(), file_path="img.bin", old_string="a", new_string="b")
    assert result.state is ToolResultState.ERROR and "binary" in result.get_text()


async def test_without_a_session_state_the_record_is_the_tool_state(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    shared: dict[str, Any] = {}
    context = ToolContext(
        tool_call_id="c",
        reply_id="r",
        permission_context=PermissionContext(working_directories=[str(tmp_path)]),
        tool_state=shared,
    )
    read, edit = Read(), Edit()
    await read.call(read.input_model.model_validate({"file_path": "a.txt"}), context)
    assert shared["read_files"] == {str(path): path.stat().st_mtime_ns}
    args = edit.input_model.model_validate(
        {"file_path": "a.txt", "old_string": "x", "new_string": "y"}
    )
    assert isinstance(await edit.call(args, context), str)
    assert path.read_text() == "y\n"


async def test_edit_keeps_every_byte_of_utf8_with_a_stray_byte_after_the_first_8k(session):
    # Valid UTF-8 where Read sniffs, one invalid byte further on: the file used to be
    # decoded as latin-1 then, so "café" did not match and a non-latin-1 new_string
    # re-encoded the whole file, doubling every accented character.
    tail = b"x" * 9000 + b"\n\xff stray\n"
    await _read(session, "notes.txt", "café\n".encode() + tail)
    result = await session.run(Edit(), file_path="notes.txt", old_string="café", new_string="thé→")
    assert result.state is ToolResultState.SUCCESS, result.get_text()
    assert (session.work / "notes.txt").read_bytes() == "thé→\n".encode() + tail


async def test_edit_refuses_characters_a_legacy_encoding_cannot_hold(session):
    data = "café\n".encode("latin-1")
    await _read(session, "legacy.txt", data)
    result = await session.run(
        Edit(), file_path="legacy.txt", old_string="café", new_string="café →"
    )
    assert result.state is ToolResultState.ERROR
    assert "latin-1" in result.get_text() and "'→'" in result.get_text()
    assert (session.work / "legacy.txt").read_bytes() == data


async def test_write_with_characters_a_legacy_encoding_cannot_hold_says_utf8(session):
    await _read(session, "legacy.txt", "café\n".encode("latin-1"))
    result = await session.run(Write(), file_path="legacy.txt", content="café →\n")
    assert result.state is ToolResultState.SUCCESS
    assert "UTF-8" in result.get_text()
    assert (session.work / "legacy.txt").read_bytes() == "café →\n".encode()


_FAILING_WRITE = """
import asyncio, resource, signal, sys
from tether.permission import PermissionContext
from tether.tool import Edit, Read, ToolContext, Write

async def main(path, tool_name):
    context = ToolContext(tool_call_id="c", reply_id="r",
                          permission_context=PermissionContext(working_directories=["/"]))
    await Read().call(Read.input_model.model_validate({"file_path": path}), context)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    big = "N" * 100_000
    if tool_name == "Write":
        args = Write.input_model.model_validate({"file_path": path, "content": big})
        result = await Write().call(args, context)
    else:
        args = Edit.input_model.model_validate(
            {"file_path": path, "old_string": "old", "new_string": big})
        result = await Edit().call(args, context)
    print(result.output if hasattr(result, "output") else result)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.mark.parametrize("tool_name", ["Write", "Edit"])
def test_a_failed_write_leaves_the_old_content_intact(tmp_path, tool_name):
    path = tmp_path / "keep.txt"
    old = "old\n" + "content\n" * 100
    path.write_text(old)
    done = subprocess.run(
        [sys.executable, "-c", _FAILING_WRITE, str(path), tool_name],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "Cannot write" in done.stdout and "too large" in done.stdout
    assert path.read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]  # no temp file left


async def test_write_and_edit_keep_mode_links_and_symlinks(session):
    script = session.work / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o750)
    await session.run(Read(), file_path="run.sh")
    await session.run(Edit(), file_path="run.sh", old_string="hi", new_string="ho")
    assert script.stat().st_mode & 0o777 == 0o750
    await session.run(Write(), file_path="run.sh", content="#!/bin/sh\n")
    assert script.stat().st_mode & 0o777 == 0o750
    # A hard link sees the change (the file is changed, not replaced by another).
    os.link(script, session.work / "alias.sh")
    await session.run(Edit(), file_path="run.sh", old_string="sh\n", new_string="bash\n")
    assert (session.work / "alias.sh").read_text() == "#!/bin/bash\n"
    # A symlink stays a symlink; its target changes.
    (session.work / "link.sh").symlink_to("run.sh")
    await session.run(Read(), file_path="link.sh")
    written = await session.run(Write(), file_path="link.sh", content="echo via link\n")
    assert written.state is ToolResultState.SUCCESS
    assert (session.work / "link.sh").is_symlink()
    assert script.read_text() == "echo via link\n"


async def test_write_under_a_file_says_the_parent_is_a_file(session):
    (session.work / "notes").write_text("")
    result = await session.run(Write(), file_path="notes/today.txt", content="x")
    assert result.state is ToolResultState.ERROR
    assert "is a file, not a directory" in result.get_text()
