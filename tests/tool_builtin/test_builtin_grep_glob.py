import pytest

from tether.message import ToolResultState
from tether.tool import Glob, Grep
from tether.tool.builtin import find_ripgrep


@pytest.fixture
def tree(session):
    """A small project with a .gitignore, hidden files and a .git directory."""
    w = session.work
    files = {
        ".gitignore": "build/\n*.log\n",
        "src/app.py": "import os\n\ndef handler():\n    return os.getcwd()\n",
        "src/util.py": "def Handler_util():\n    pass\n",
        "src/web/page.ts": "export function handler() {}\n",
        "README.md": "call handler() to start\n",
        "build/out.py": "def handler(): pass\n",
        "debug.log": "handler failed\n",
        ".hidden/conf.py": "handler = 1\n",
        ".git/config": "handler\n",
        "docs/.gitignore": "draft.md\n",
        "docs/draft.md": "handler draft\n",
        "docs/final.md": "handler final\n",
    }
    for name, text in files.items():
        path = w / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for age, name in enumerate(["README.md", "src/app.py", "docs/final.md", ".hidden/conf.py"]):
        session.set_mtime(w / name, 100 + age * 10)  # README newest
    session.set_mtime(w / "src/web/page.ts", 1000)
    session.set_mtime(w / "src/util.py", 2000)
    return w


def test_ripgrep_binary_comes_from_the_package():
    rg = find_ripgrep()
    assert rg is not None and rg.endswith("rg")


async def test_files_mode_honours_gitignore_and_sorts_newest_first(session, tree):
    result = await session.run(Grep(), pattern="handler")
    text = result.get_text()
    paths = text.split("\n")[1:]
    assert paths == [
        str(tree / "README.md"),
        str(tree / "src/app.py"),
        str(tree / "docs/final.md"),
        str(tree / ".hidden/conf.py"),
        str(tree / "src/web/page.ts"),
    ]
    assert text.startswith("5 files match")


async def test_content_mode_shows_line_numbers_and_context(session, tree):
    result = await session.run(Grep(), pattern="getcwd", output_mode="content", path="src")
    assert result.get_text() == f"{tree}/src/app.py:4:    return os.getcwd()"
    plain = await session.run(
        Grep(), pattern="getcwd", output_mode="content", path="src", **{"-n": False}
    )
    assert plain.get_text() == f"{tree}/src/app.py:    return os.getcwd()"
    around = await session.run(
        Grep(), pattern="def handler", output_mode="content", path="src", **{"-C": 1}
    )
    assert around.get_text().split("\n") == [
        f"{tree}/src/app.py-2-",
        f"{tree}/src/app.py:3:def handler():",
        f"{tree}/src/app.py-4-    return os.getcwd()",
    ]
    after = await session.run(
        Grep(), pattern="import", output_mode="content", path="src", **{"-A": 2}
    )
    assert len(after.get_text().split("\n")) == 3


async def test_case_insensitive_glob_and_type_filters(session, tree):
    sensitive = await session.run(Grep(), pattern="Handler", path="src")
    assert sensitive.get_text().split("\n")[1:] == [str(tree / "src/util.py")]
    insensitive = await session.run(Grep(), pattern="Handler", path="src", **{"-i": True})
    assert len(insensitive.get_text().split("\n")[1:]) == 3
    by_glob = await session.run(Grep(), pattern="handler", glob="*.ts")
    assert by_glob.get_text().split("\n")[1:] == [str(tree / "src/web/page.ts")]
    by_type = await session.run(Grep(), pattern="handler", type="md")
    assert sorted(by_type.get_text().split("\n")[1:]) == [
        str(tree / "README.md"),
        str(tree / "docs/final.md"),
    ]


async def test_count_mode(session, tree):
    (tree / "src/many.py").write_text("x\nx\nx\n")
    result = await session.run(Grep(), pattern="^x$", output_mode="count", path="src")
    assert result.get_text() == f"{tree}/src/many.py:3\n\n3 matching lines in 1 files."


async def test_head_limit_and_character_cap(session, tree):
    (tree / "many.txt").write_text("".join(f"hit {i}\n" for i in range(1000)))
    limited = await session.run(
        Grep(), pattern="hit", output_mode="content", path="many.txt", head_limit=5
    )
    lines = limited.get_text().split("\n\n[")[0].split("\n")
    assert lines == [f"{tree}/many.txt:{i + 1}:hit {i}" for i in range(5)]
    assert "Results cut at 5" in limited.get_text()
    default = await session.run(Grep(max_results=20), pattern="hit", output_mode="content")
    assert len(default.get_text().split("\n\n[")[0].split("\n")) == 20
    capped = await session.run(Grep(max_chars=300), pattern="hit", output_mode="content")
    assert len(capped.get_text().split("\n\n[")[0]) <= 300
    files = await session.run(Grep(), pattern="handler", head_limit=2)
    assert len(files.get_text().split("\n\n[")[0].split("\n")) == 3  # header + 2
    assert "Results cut" in files.get_text()


async def test_no_match_bad_regex_and_missing_path(session, tree):
    none = await session.run(Grep(), pattern="zzz_not_there")
    assert none.state is ToolResultState.SUCCESS and none.get_text() == "No matches found."
    bad = await session.run(Grep(), pattern="foo(")
    assert bad.state is ToolResultState.ERROR and "regex" in bad.get_text().lower()
    missing = await session.run(Grep(), pattern="x", path="nowhere")
    assert missing.state is ToolResultState.ERROR and "does not exist" in missing.get_text()


async def test_pattern_starting_with_a_dash(session, tree):
    (tree / "flags.txt").write_text("use --force here\n")
    result = await session.run(Grep(), pattern="--force", output_mode="content", path="flags.txt")
    assert result.get_text().endswith(":1:use --force here")


async def test_glob_honours_gitignore_and_sorts_newest_first(session, tree):
    result = await session.run(Glob(), pattern="**/*.py")
    assert result.get_text().split("\n") == [
        str(tree / "src/app.py"),
        str(tree / ".hidden/conf.py"),
        str(tree / "src/util.py"),
    ]
    everything = await session.run(Glob(respect_gitignore=False), pattern="**/*.py")
    assert str(tree / "build/out.py") in everything.get_text()


async def test_glob_star_stays_in_one_directory(session, tree):
    top = await session.run(Glob(), pattern="*.md")
    assert top.get_text() == str(tree / "README.md")
    nested = await session.run(Glob(), pattern="docs/*.md")
    assert nested.get_text() == str(tree / "docs/final.md")  # draft.md: docs/.gitignore
    braces = await session.run(Glob(), pattern="src/**/*.{ts,py}")
    assert len(braces.get_text().split("\n")) == 3
    in_path = await session.run(Glob(), pattern="*.ts", path="src/web")
    assert in_path.get_text() == str(tree / "src/web/page.ts")
    absolute = await session.run(Glob(), pattern=f"{tree}/src/*.py")
    assert sorted(absolute.get_text().split("\n")) == [
        str(tree / "src/app.py"),
        str(tree / "src/util.py"),
    ]


async def test_glob_cap_no_match_and_missing_dir(session, tree):
    for i in range(30):
        (tree / f"f{i}.txt").write_text("")
    capped = await session.run(Glob(max_results=10), pattern="*.txt")
    assert len(capped.get_text().split("\n\n[")[0].split("\n")) == 10
    assert "10 most recently modified of 30" in capped.get_text()
    none = await session.run(Glob(), pattern="*.rs")
    assert none.state is ToolResultState.SUCCESS and "No files match" in none.get_text()
    missing = await session.run(Glob(), pattern="*", path="nowhere")
    assert missing.state is ToolResultState.ERROR and "does not exist" in missing.get_text()


async def test_glob_over_a_huge_tree_stops_and_says_so(session):
    for i in range(20):
        folder = session.work / "tree" / f"d{i:02d}"
        folder.mkdir(parents=True)
        for j in range(100):
            (folder / f"f{j:03d}.txt").touch()
    whole = await session.run(Glob(max_results=5), pattern="**/*.txt")
    assert "5 most recently modified of 2000 matches" in whole.get_text()
    bounded = await session.run(Glob(max_results=5, max_scanned=500), pattern="**/*.txt")
    text = bounded.get_text()
    assert bounded.state is ToolResultState.SUCCESS
    assert len(text.split("\n\n[")[0].split("\n")) == 5
    assert "Stopped after looking at 500 files" in text and "of the 500 matches found" in text


async def test_grep_without_ripgrep_says_how_to_install_it(session, monkeypatch):
    import importlib

    grep_module = importlib.import_module("tether.tool.builtin._grep")
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)
    result = await session.run(Grep(), pattern="x")
    assert result.state is ToolResultState.ERROR
    assert (
        "pip install ripgrep" in result.get_text()
        and "apt-get install ripgrep" in result.get_text()
    )


async def test_grep_refuses_fifos_and_devices_instead_of_blocking(session):
    import os
    import time

    os.mkfifo(session.work / "fifo")
    started = time.monotonic()
    for path in ("fifo", "/dev/zero"):
        result = await session.run(Grep(), pattern="x", path=path)
        assert result.state is ToolResultState.ERROR, path
        assert "not a regular file" in result.get_text()
    assert time.monotonic() - started < 10


async def test_a_grep_that_runs_too_long_is_stopped_with_what_it_found(session, monkeypatch):
    import importlib
    import time

    fake = session.work.parent / "slow-rg"
    # Grep asks for `--null`: ripgrep ends each path with a NUL.
    fake.write_text(f"#!/bin/sh\nprintf '%s\\0' {session.work}/first.txt\nexec sleep 1000\n")
    fake.chmod(0o755)
    grep_module = importlib.import_module("tether.tool.builtin._grep")
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: str(fake))
    started = time.monotonic()
    result = await session.run(Grep(time_limit=0.5), pattern="x")
    assert time.monotonic() - started < 10
    assert result.state is ToolResultState.SUCCESS
    text = result.get_text()
    assert f"{session.work}/first.txt" in text
    assert "stopped after 0.5 s" in text


async def test_ripgrep_runs_log_no_asyncio_warning(session, caplog):
    for i in range(200):
        (session.work / f"f{i:03d}.txt").write_text("hit\n" * 50)
    for _ in range(20):  # a race: each round has a fair chance to show it
        result = await session.run(Grep(), pattern="hit", output_mode="content", head_limit=3)
        assert "Results cut at 3" in result.get_text()
        whole = await session.run(Grep(), pattern="hit", path="f000.txt", output_mode="count")
        assert whole.get_text().startswith(f"{session.work}/f000.txt:50")
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
