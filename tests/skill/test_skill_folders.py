"""Several skill folders: one `Skill` tool opens the skills of all of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.agent import Agent
from tether.errors import ConfigError, SkillError
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.skill import LocalSkillLoader
from tether.state import AgentState
from tether.tool import Toolkit

tc = ScriptedChatModel.tool_call


def write_skill(root: Path, name: str, body: str) -> None:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\n\n{body}\n")


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    project, personal = tmp_path / "project", tmp_path / "personal"
    write_skill(project, "deploy", "DEPLOY-BODY")
    write_skill(personal, "review", "REVIEW-BODY")
    return project, personal


async def test_two_folders_give_one_tool_listing_both(folders: tuple[Path, Path]) -> None:
    toolkit = Toolkit(skills_or_loaders=[str(folders[0]), folders[1]])
    view = await toolkit.view(AgentState())
    assert [s["name"] for s in view.schemas] == ["Skill"]
    assert "deploy: The deploy skill." in view.prompt and "review: The review skill." in view.prompt
    (loader,) = toolkit.sources
    assert isinstance(loader, LocalSkillLoader)
    assert loader.directories == [folders[0].resolve(), folders[1].resolve()]


async def test_the_agent_opens_a_skill_from_the_second_folder(folders: tuple[Path, Path]) -> None:
    model = ScriptedChatModel(
        [AssistantMsg("a", [tc("Skill", {"name": "review"})]), AssistantMsg("a", "Done.")]
    )
    agent = Agent(
        name="a",
        system_prompt="Help.",
        model=model,
        toolkit=Toolkit(skills_or_loaders=[folders[0], folders[1]]),
    )
    await agent.reply(UserMsg("user", "review my change"))
    (result,) = agent.state.context[-1].get_content_blocks(ToolResultBlock)
    assert "REVIEW-BODY" in result.get_text()


def test_the_same_name_in_two_folders_is_an_error_naming_both(
    folders: tuple[Path, Path],
) -> None:
    write_skill(folders[1], "deploy", "OTHER")
    with pytest.raises(SkillError) as info:
        Toolkit(skills_or_loaders=[folders[0], folders[1]])
    message = str(info.value)
    assert str(folders[0] / "deploy" / "SKILL.md") in message
    assert str(folders[1] / "deploy" / "SKILL.md") in message


def test_a_folder_given_twice_is_read_once(folders: tuple[Path, Path]) -> None:
    loader = LocalSkillLoader([folders[0], str(folders[0]) + "/"])
    assert loader.directories == [folders[0].resolve()]
    same = str(folders[0])
    (only,) = Toolkit(skills_or_loaders=[same, same]).sources  # one object, twice
    assert isinstance(only, LocalSkillLoader) and only.directories == [folders[0].resolve()]


def test_bad_items_are_clear_errors(folders: tuple[Path, Path]) -> None:
    with pytest.raises(SkillError, match="no skills folder"):
        LocalSkillLoader([])
    with pytest.raises(SkillError, match="does not exist"):
        Toolkit(skills_or_loaders=[folders[0], folders[0] / "missing"])
    with pytest.raises(ConfigError, match="not a tool source"):
        Toolkit(skills_or_loaders=[42])  # type: ignore[list-item]
