import base64
import struct
import zlib

from tether.message import DataBlock, TextBlock, ToolResultState
from tether.tool import Read


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n\n[")[0].split("\n")]


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


async def test_numbers_lines_like_cat_n(session):
    (session.work / "a.txt").write_text("alpha\n\tbeta\ngamma")
    result = await session.run(Read(), file_path="a.txt")
    assert result.state is ToolResultState.SUCCESS
    assert result.get_text() == "     1\talpha\n     2\t\tbeta\n     3\tgamma"


async def test_offset_and_limit_select_a_window(session):
    (session.work / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await session.run(Read(), file_path="a.txt", offset=4, limit=3)
    text = result.get_text()
    assert _lines(text) == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "offset=7" in text and "of 10" in text
    from_zero = await session.run(Read(), file_path="a.txt", offset=0, limit=1)
    assert _lines(from_zero.get_text()) == ["     1\tline 1"]


async def test_pages_through_a_100000_line_file(session):
    path = session.work / "big.txt"
    path.write_text("".join(f"row {i}\n" for i in range(1, 100_001)))
    read = Read()

    first = (await session.run(read, file_path=str(path))).get_text()
    shown = _lines(first)
    assert len(shown) == 2000
    assert shown[0] == "     1\trow 1" and shown[-1] == "  2000\trow 2000"
    assert "Showing lines 1-2000 of 100000" in first and "offset=2001" in first

    middle = (await session.run(read, file_path=str(path), offset=50_000, limit=5)).get_text()
    assert _lines(middle) == [f" {n}\trow {n}" for n in range(50_000, 50_005)]
    assert "offset=50005" in middle

    last = (await session.run(read, file_path=str(path), offset=99_001)).get_text()
    assert _lines(last)[-1] == "100000\trow 100000"
    assert len(_lines(last)) == 1000 and "end of file" in last

    past = await session.run(read, file_path=str(path), offset=100_001)
    assert past.state is ToolResultState.ERROR
    assert "100000 lines" in past.get_text()


async def test_character_cap_cuts_at_a_line_and_says_where_to_continue(session):
    path = session.work / "wide.txt"
    path.write_text("".join(f"{i:04d} " + "x" * 95 + "\n" for i in range(1, 201)))
    read = Read(max_chars=1000)
    first = (await session.run(read, file_path=str(path))).get_text()
    shown = _lines(first)
    assert 0 < len(shown) < 200
    assert sum(len(line) + 1 for line in shown) <= 1000
    assert "capped at 1000 characters" in first
    next_offset = len(shown) + 1
    assert f"offset={next_offset}" in first
    second = (await session.run(read, file_path=str(path), offset=next_offset)).get_text()
    assert _lines(second)[0].split("\t")[0].strip() == str(next_offset)


async def test_long_lines_are_cut(session):
    (session.work / "min.js").write_text("a" * 5000 + "\nshort\n")
    text = (await session.run(Read(max_line_length=100), file_path="min.js")).get_text()
    first, second = text.split("\n")
    assert first.startswith("     1\t" + "a" * 100) and "4900 more characters" in first
    assert second == "     2\tshort"


async def test_binary_files_are_refused_and_not_recorded(session):
    (session.work / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    result = await session.run(Read(), file_path="blob.bin")
    assert result.state is ToolResultState.ERROR
    assert "binary" in result.get_text()
    assert session.state.tool_state.get("Read", {}).get("read_files", {}) == {}


async def test_images_come_back_as_data_blocks(session):
    data = _png()
    (session.work / "dot.png").write_bytes(data)
    result = await session.run(Read(), file_path="dot.png")
    assert result.state is ToolResultState.SUCCESS
    assert isinstance(result.output, list)
    text, image = result.output
    assert isinstance(text, TextBlock) and "image/png" in text.text
    assert isinstance(image, DataBlock)
    assert image.source.type == "base64"
    assert image.source.media_type == "image/png"
    assert base64.b64decode(image.source.data) == data
    too_big = await session.run(Read(max_image_bytes=10), file_path="dot.png")
    assert too_big.state is ToolResultState.ERROR and "limit" in too_big.get_text()


async def test_missing_files_and_directories_are_errors(session):
    missing = await session.run(Read(), file_path="nope.txt")
    assert missing.state is ToolResultState.ERROR
    assert str(session.work / "nope.txt") in missing.get_text()
    directory = await session.run(Read(), file_path=".")
    assert directory.state is ToolResultState.ERROR and "directory" in directory.get_text()


async def test_empty_file_and_no_trailing_newline(session):
    (session.work / "empty.txt").write_text("")
    assert "empty" in (await session.run(Read(), file_path="empty.txt")).get_text()
    (session.work / "two.txt").write_text("a\nb")
    text = (await session.run(Read(), file_path="two.txt", limit=1)).get_text()
    assert "of 2" in text and "offset=2" in text


async def test_other_encodings_are_decoded(session):
    (session.work / "u16.txt").write_bytes("héllo\nwörld\n".encode("utf-16"))
    assert (await session.run(Read(), file_path="u16.txt")).get_text() == (
        "     1\théllo\n     2\twörld"
    )
    (session.work / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert (await session.run(Read(), file_path="latin.txt")).get_text() == "     1\tcafé"
    (session.work / "bom.txt").write_bytes(b"\xef\xbb\xbfhi\n")
    assert (await session.run(Read(), file_path="bom.txt")).get_text() == "     1\thi"


async def test_records_path_and_mtime_in_the_read_tool_state(session):
    path = session.work / "a.txt"
    path.write_text("x\n")
    await session.run(Read(), file_path="a.txt")
    record = session.state.tool_state["Read"]["read_files"]
    assert record == {str(path): path.stat().st_mtime_ns}
    # The record is plain JSON: it survives a save and load of the session.
    from tether.state import AgentState

    loaded = AgentState.model_validate_json(session.state.model_dump_json())
    assert loaded.tool_state["Read"]["read_files"] == record


async def test_bad_arguments_name_the_field(session):
    result = await session.run(Read(), file_path="a.txt", limit=0)
    assert result.state is ToolResultState.ERROR
    assert "`limit`" in result.get_text()


async def test_a_huge_single_line_is_read_in_bounded_memory(session):
    import tracemalloc

    path = session.work / "one-line.json"
    with path.open("wb") as f:
        for _ in range(50):
            f.write(b"a" * 1_000_000)
        f.write(b"\nsecond line\n")
    tracemalloc.start()
    try:
        result = await session.run(Read(max_line_length=100), file_path=str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    first, second = result.get_text().split("\n")
    assert first == "     1\t" + "a" * 100 + "… [49999900 more characters on this line]"
    assert second == "     2\tsecond line"
    assert peak < 10_000_000, f"peak {peak} bytes for a 50 MB line"


async def test_a_long_line_before_the_window_is_skipped_in_bounded_memory(session):
    import tracemalloc

    path = session.work / "dump.sql"
    with path.open("wb") as f:
        f.write(b"head\n")
        for _ in range(30):
            f.write("é".encode() * 500_000)
        f.write(b"\ntail\n")
    tracemalloc.start()
    try:
        result = await session.run(Read(), file_path=str(path), offset=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.get_text().split("\n")[0] == "     3\ttail"
    assert peak < 10_000_000, f"peak {peak} bytes"
    middle = (await session.run(Read(max_line_length=10), file_path=str(path), offset=2)).get_text()
    assert (
        middle.split("\n")[0] == "     2\t" + "é" * 10 + "… [14999990 more characters on this line]"
    )


async def test_files_that_report_size_zero_are_still_read(session):
    # /proc files have st_size 0 but content: "empty" would be a lie.
    result = await session.run(Read(), file_path="/proc/version")
    assert result.state is ToolResultState.SUCCESS
    assert result.get_text().startswith("     1\tLinux version")


async def test_a_read_error_is_an_error_result_naming_the_file(session):
    # Reading a process's memory at offset 0 fails with EIO, even for root.
    result = await session.run(Read(), file_path="/proc/self/mem")
    assert result.state is ToolResultState.ERROR
    assert result.get_text().startswith("Cannot read /proc/")
    assert "Input/output error" in result.get_text()


async def test_a_symlink_loop_is_named(session):
    (session.work / "loop1").symlink_to("loop2")
    (session.work / "loop2").symlink_to("loop1")
    result = await session.run(Read(), file_path="loop1")
    assert result.state is ToolResultState.ERROR
    assert "symbolic links" in result.get_text()


async def test_devices_and_fifos_are_refused_without_blocking(session):
    import os

    os.mkfifo(session.work / "fifo")
    for path in ("fifo", "/dev/zero", "/dev/urandom"):
        result = await session.run(Read(), file_path=path)
        assert result.state is ToolResultState.ERROR
        assert "not a regular file" in result.get_text()


async def test_utf8_with_a_stray_byte_is_shown_as_utf8(session):
    (session.work / "notes.txt").write_bytes("café\n".encode() + b"\xff end\n")
    result = await session.run(Read(), file_path="notes.txt")
    assert result.get_text() == "     1\tcafé\n     2\t\ufffd end"


async def test_cut_lines_count_what_was_left_out_in_every_encoding(session):
    (session.work / "crlf.txt").write_bytes(b"a" * 100 + b"\r\nb\r\n")
    (session.work / "u16.txt").write_bytes(("é" * 100 + "\nb\n").encode("utf-16"))
    for name in ("crlf.txt", "u16.txt"):
        text = (await session.run(Read(max_line_length=10), file_path=name)).get_text()
        first, second = text.split("\n")
        assert first.endswith("… [90 more characters on this line]"), name
        assert second == "     2\tb", name


async def test_offsets_at_the_end_of_a_file_without_a_final_newline(session):
    (session.work / "two.txt").write_text("a\nb")
    last = await session.run(Read(), file_path="two.txt", offset=2)
    assert last.get_text() == "     2\tb\n\n[Lines 2-2 of 2: end of file.]"
    past = await session.run(Read(), file_path="two.txt", offset=3)
    assert past.state is ToolResultState.ERROR and "which has 2 lines" in past.get_text()
    far = await session.run(Read(), file_path="two.txt", offset=10**9)
    assert far.state is ToolResultState.ERROR and "which has 2 lines" in far.get_text()
