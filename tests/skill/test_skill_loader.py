"""Skills from real folders: loading, validation errors, disclosure, changes on disk."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tether.agent import Agent
from tether.errors import SkillError
from tether.message import AssistantMsg, ToolResultBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
)
from tether.skill import LocalSkillLoader, Skill, SkillTool
from tether.tool import ToolContext, Toolkit

tc = ScriptedChatModel.tool_call


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n\n{body}\n"


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(
        root / "pdf" / "SKILL.md",
        skill_md(
            "pdf", "Extract text from PDF files.", "SECRET-PDF-BODY\nRun `scripts/extract.py FILE`."
        ),
    )
    write(root / "pdf" / "scripts" / "extract.py", "print('x')\n")
    write(
        root / "csv" / "SKILL.md", skill_md("csv-report", "Summarise CSV files.", "SECRET-CSV-BODY")
    )
    write(root / "SKILL.md", skill_md("house-style", "How we write.", "SECRET-STYLE-BODY"))
    write(root / "notes" / "README.md", "not a skill\n")
    return root


def context() -> ToolContext:
    return ToolContext(tool_call_id="c", reply_id="r", permission_context=PermissionContext())


async def test_three_skills_load_with_their_fields(skills_dir: Path) -> None:
    loader = LocalSkillLoader(str(skills_dir))
    skills = {s.name: s for s in await loader.skills(None)}
    assert set(skills) == {"pdf", "csv-report", "house-style"}
    pdf = skills["pdf"]
    assert isinstance(pdf, Skill)
    assert pdf.description == "Extract text from PDF files."
    assert pdf.directory == str((skills_dir / "pdf").resolve())
    assert pdf.body.startswith("SECRET-PDF-BODY") and pdf.metadata == {"license": "MIT"}
    assert skills["house-style"].directory == str(skills_dir.resolve())


async def test_the_prompt_lists_names_descriptions_and_folders_only(skills_dir: Path) -> None:
    loader = LocalSkillLoader(skills_dir)
    parts = await loader.prompt(None)
    assert parts is not None and parts.dynamic == ""
    assert (
        "- pdf: Extract text from PDF files. (folder: " + str((skills_dir / "pdf").resolve())
        in parts.stable
    )
    assert "csv-report" in parts.stable and "house-style" in parts.stable
    assert "SECRET" not in parts.stable
    again = await loader.prompt(None)
    assert again is not None and again.stable == parts.stable


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("no front matter\n", "must start with YAML front matter"),
        ("---\nname: x\n", "must start with YAML front matter"),
        ("---\nname: [unclosed\ndescription: d\n---\nbody", "not valid YAML"),
        ("---\n- a\n- b\n---\nbody", "must be a mapping"),
        ("---\nname: x\n---\nbody", "`description`: Field required"),
        ("---\ndescription: d\n---\nbody", "`name`: Field required"),
        ("---\nname: 'has space'\ndescription: d\n---\nbody", "`name`"),
        ("---\nname: x\ndescription: ''\n---\nbody", "`description`"),
    ],
)
def test_malformed_front_matter_names_the_file(tmp_path: Path, text: str, fault: str) -> None:
    bad = write(tmp_path / "skills" / "broken" / "SKILL.md", text)
    write(tmp_path / "skills" / "fine" / "SKILL.md", skill_md("fine", "ok", "b"))
    with pytest.raises(SkillError) as info:
        LocalSkillLoader(tmp_path / "skills")
    assert str(bad) in str(info.value) and fault in str(info.value)


def test_duplicate_names_and_missing_folders_are_errors(tmp_path: Path) -> None:
    write(tmp_path / "s" / "a" / "SKILL.md", skill_md("same", "one", "b"))
    write(tmp_path / "s" / "b" / "SKILL.md", skill_md("same", "two", "b"))
    with pytest.raises(SkillError, match="already used by"):
        LocalSkillLoader(tmp_path / "s")
    with pytest.raises(SkillError, match="does not exist"):
        LocalSkillLoader(tmp_path / "nope")


async def test_the_skill_tool_is_read_only_always_allowed_and_returns_the_body(
    skills_dir: Path,
) -> None:
    loader = LocalSkillLoader(skills_dir)
    [tool] = await loader.list_tools(None)
    assert isinstance(tool, SkillTool) and tool.name == "Skill" and tool.is_read_only
    for mode in PermissionMode:
        if mode is PermissionMode.DONT_ASK:
            continue
        decision = await PermissionEngine(PermissionContext(mode=mode)).decide(
            tool, {"name": "pdf"}
        )
        assert decision.behavior is PermissionBehavior.ALLOW
    text = await tool.call(tool.input_model(name="pdf"), context())
    assert isinstance(text, str)
    assert "SECRET-PDF-BODY" in text and str((skills_dir / "pdf").resolve()) in text
    assert "scripts/extract.py" in text
    missing = await tool.call(tool.input_model(name="pfd"), context())
    assert isinstance(missing, ToolResultBlock) and missing.state is ToolResultState.ERROR
    assert "csv-report, house-style, pdf" in missing.get_text()


async def test_an_empty_folder_offers_no_tool_and_no_prompt(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    loader = LocalSkillLoader(tmp_path / "empty")
    assert await loader.list_tools(None) == [] and await loader.prompt(None) is None
    assert "no skills" in (loader.unavailable_hint("Skill", None) or "")


async def test_model_sees_descriptions_until_it_opens_a_skill(skills_dir: Path) -> None:
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("Skill", {"name": "pdf"}, id="open")]),
            AssistantMsg("a", "done"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="base",
        model=model,
        toolkit=Toolkit(skills_or_loaders=[str(skills_dir)]),
    )
    await agent.reply(UserMsg("user", "read my pdf"))
    first = model.calls[0]
    system = first.messages[0].get_text_content() or ""
    assert "Extract text from PDF files." in system and "Summarise CSV files." in system
    everything = "".join(m.model_dump_json() for m in first.messages) + str(first.tools)
    assert "SECRET" not in everything
    assert [t["name"] for t in first.tools] == ["Skill"]
    opened = model.calls[1].messages[-1].tool_results[0]
    assert "SECRET-PDF-BODY" in opened.get_text() and "SECRET-CSV-BODY" not in opened.get_text()
    model.assert_complete()


async def test_changes_on_disk_are_picked_up_on_the_next_reply(
    skills_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loader = LocalSkillLoader(skills_dir)
    model = ScriptedChatModel(
        [AssistantMsg("a", "one"), AssistantMsg("a", "two"), AssistantMsg("a", "three")]
    )
    agent = Agent(
        name="bot", system_prompt="base", model=model, toolkit=Toolkit(skills_or_loaders=[loader])
    )
    await agent.reply(UserMsg("user", "1"))
    write(skills_dir / "sql" / "SKILL.md", skill_md("sql", "Write SQL queries.", "b"))
    md = skills_dir / "pdf" / "SKILL.md"
    md.write_text(skill_md("pdf", "Read PDFs, now with OCR.", "b"), encoding="utf-8")
    os.utime(md, ns=(md.stat().st_atime_ns, md.stat().st_mtime_ns + 10**9))
    await agent.reply(UserMsg("user", "2"))
    second = model.calls[1].messages[0].get_text_content() or ""
    assert "Write SQL queries." in second and "now with OCR" in second
    write(skills_dir / "sql" / "SKILL.md", "broken\n")
    with caplog.at_level(logging.WARNING, logger="tether.skill"):
        await agent.reply(UserMsg("user", "3"))
    assert "Write SQL queries." in (model.calls[2].messages[0].get_text_content() or "")  # kept
    assert any(str(skills_dir / "sql" / "SKILL.md") in r.getMessage() for r in caplog.records)


async def test_skills_are_checked_once_per_reply_not_per_step(skills_dir: Path) -> None:
    loader = LocalSkillLoader(skills_dir)
    checks = 0
    original = loader._reload_if_changed

    def counting() -> None:
        nonlocal checks
        checks += 1
        original()

    loader._reload_if_changed = counting  # type: ignore[method-assign]
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("Skill", {"name": "pdf"})]),
            AssistantMsg("a", [tc("Skill", {"name": "csv-report"})]),
            AssistantMsg("a", "done"),
        ]
    )
    agent = Agent(
        name="bot", system_prompt="base", model=model, toolkit=Toolkit(skills_or_loaders=[loader])
    )
    await agent.reply(UserMsg("user", "go"))
    assert len(model.calls) == 3 and checks == 1


async def test_a_skill_set_wrapped_as_a_sleeping_plugin(skills_dir: Path) -> None:
    plugin = LocalSkillLoader(skills_dir).as_plugin(description="Document skills.")
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("activate_plugin", {"module_name": "skills"})]),
            AssistantMsg("a", [tc("Skill", {"name": "pdf"}, id="open")]),
            AssistantMsg("a", "done"),
        ]
    )
    agent = Agent(name="bot", system_prompt="base", model=model, toolkit=Toolkit(plugins=[plugin]))
    await agent.reply(UserMsg("user", "go"))
    asleep = model.calls[0]
    assert "Document skills." in (asleep.messages[0].get_text_content() or "")
    assert "Extract text from PDF files." not in (asleep.messages[0].get_text_content() or "")
    assert "Skill" not in [t["name"] for t in asleep.tools]
    awake = model.calls[1]
    assert "Extract text from PDF files." in (awake.messages[0].get_text_content() or "")
    [opened] = [r for r in model.calls[2].messages[-1].tool_results if r.id == "open"]
    assert "SECRET-PDF-BODY" in opened.get_text()
    model.assert_complete()
