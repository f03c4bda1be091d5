"""Skills: folders with a `SKILL.md` that the model opens only when it needs them.

A skill is a folder holding `SKILL.md`: a front matter with `name` and `description`, then
instructions. Pass skills folders as `Toolkit(skills_or_loaders=["skills/"])` (or a
`LocalSkillLoader`). The system prompt lists each skill's name and description only; the
model reads a whole skill by calling the `Skill` tool, so unused skills cost a line each.

Run it: `python examples/skills.py` (offline). The skills folder is created in
`$TETHER_EXAMPLE_DIR` if set, else in a temporary folder.
"""

import asyncio
import os
import tempfile
from pathlib import Path

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

SKILL_MD = """---
name: release-notes
description: Write release notes from a list of merged changes.
---

Group the changes under Added, Changed and Fixed. One line per change, past tense.
"""


async def main(root: Path) -> None:
    skill = root / "skills" / "release-notes"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "assistant", [ScriptedChatModel.tool_call("Skill", {"name": "release-notes"})]
            ),
            AssistantMsg("assistant", "## Added\n- Added dark mode."),
        ]
    )
    agent = Agent(
        name="writer",
        system_prompt="You write for the team.",
        model=model,
        toolkit=Toolkit(skills_or_loaders=[root / "skills"]),
    )
    msg = await agent.reply(UserMsg("user", "Release notes for: dark mode."))
    listed = "release-notes" in model.calls[0].messages[0].get_text_content()
    print("skill listed in the system prompt:", listed)
    print("Skill tool returned:", msg.tool_results[0].get_text().splitlines()[-1])
    print(msg.get_text_content())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(os.environ.get("TETHER_EXAMPLE_DIR") or tmp)))
