"""`build_schemas` builds a deferred model's schema and those of the models its fields hold."""

from __future__ import annotations

import subprocess
import sys

from pydantic import BaseModel, ConfigDict

from tether._schemas import build_schemas


def test_the_models_a_state_holds_are_built_and_others_are_not():
    code = (
        "from tether._schemas import build_schemas;"
        "from tether.message import TextBlock, ToolResultBlock, UserMsg, Msg;"
        "from tether.state import AgentState;"
        "before = [m.__pydantic_complete__ for m in (TextBlock, AgentState)];"
        "build_schemas(AgentState);"
        "print(before, [m.__pydantic_complete__ for m in (TextBlock, ToolResultBlock, Msg,"
        " AgentState, UserMsg)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[False, False] [True, True, True, True, False]"


class _Node(BaseModel):
    model_config = ConfigDict(defer_build=True)

    name: str
    children: list[_Node] = []
    parent: _Node | None = None


def test_a_model_that_holds_itself_is_built_once():
    assert not _Node.__pydantic_complete__
    build_schemas(_Node)
    assert _Node.__pydantic_complete__
    tree = _Node.model_validate({"name": "a", "children": [{"name": "b"}]})
    assert tree.children[0].name == "b"
