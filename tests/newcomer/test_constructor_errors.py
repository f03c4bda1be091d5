"""The traps a newcomer falls into fail at construction, with a typed error showing the fix."""

from __future__ import annotations

from typing import Any

import pytest

from tether.agent import Agent, ContextConfig, ModelConfig, ReActConfig
from tether.errors import ArgumentError, ConfigError, ScriptExhaustedError, ToolError
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import FunctionTool, Toolkit, tool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


MODEL = ScriptedChatModel([AssistantMsg("assistant", "hi")])


@pytest.mark.parametrize("cls", [UserMsg, AssistantMsg, SystemMsg])
def test_a_lone_positional_string_is_not_an_empty_message(cls: type[Msg]) -> None:
    with pytest.raises(ArgumentError) as caught:
        cls("What is 2+3?")
    role = cls.__name__.removesuffix("Msg").lower()
    assert f"`{cls.__name__}({role!r}, 'What is 2+3?')`" in str(caught.value)


def test_content_as_keyword_or_second_positional_still_works() -> None:
    assert UserMsg("user", "hi").get_text_content() == "hi"
    assert UserMsg(name="user", content="hi").get_text_content() == "hi"
    assert UserMsg("user", content=[]).content == []
    assert UserMsg("user", "hi", role="user").role == "user"  # a matching role is harmless


def test_role_without_name_says_which_argument_is_missing() -> None:
    with pytest.raises(ArgumentError, match=r"needs `name`.*UserMsg\(name='user', content='hi'\)"):
        UserMsg(role="user", content="hi")  # type: ignore[call-arg]


def test_a_different_role_is_refused_not_silently_replaced() -> None:
    with pytest.raises(ArgumentError, match="always has role 'user'"):
        UserMsg("u", "hi", role="assistant")


def test_a_name_that_is_not_a_string_is_named() -> None:
    with pytest.raises(ArgumentError, match="`name`"):
        UserMsg(["hello"], "hi")  # type: ignore[arg-type]


def test_a_model_given_as_a_string_points_to_from_string() -> None:
    with pytest.raises(ArgumentError, match=r"tether\.model\.from_string\('openai:gpt-4o'\)"):
        Agent(name="a", system_prompt="s", model="openai:gpt-4o")  # type: ignore[arg-type]


def test_a_list_as_toolkit_points_to_toolkit_tools() -> None:
    with pytest.raises(ArgumentError, match=r"toolkit=Toolkit\(tools=\[\.\.\.\]\)"):
        Agent(name="a", system_prompt="s", model=MODEL, toolkit=[add])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": ""}, "name"),
        ({"system_prompt": None}, "system_prompt"),
        ({"state": {}}, "AgentState.model_validate"),
        ({"middlewares": [object()]}, r"middlewares=\.\.\.\)\[0\]"),
        ({"react_config": {"max_iters": 3}}, r"react_config=ReActConfig\(\*\*\.\.\.\)"),
        ({"model_config": ReActConfig()}, "ModelConfig"),
        ({"offloader": "offload/"}, "LocalFileOffloader"),
    ],
)
def test_other_wrong_kinds_name_the_argument(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"name": "a", "system_prompt": "s", "model": MODEL, **kwargs}
    with pytest.raises(ArgumentError, match=match):
        Agent(**args)


def test_argument_errors_are_config_and_type_errors() -> None:
    assert issubclass(ArgumentError, ConfigError)
    assert issubclass(ArgumentError, TypeError)


def test_a_good_agent_still_builds() -> None:
    agent = Agent(
        name="a", system_prompt="s", model=MODEL, toolkit=Toolkit(tools=[add]), state=AgentState()
    )
    assert agent.toolkit.tools.keys() == {"add"}


class Point:
    def __init__(self, x: int) -> None:
        self.x = x


def test_a_plain_class_parameter_names_the_tool_and_the_parameter() -> None:
    def move(where: Point, steps: int) -> str:
        """Move somewhere."""
        return "moved"

    with pytest.raises(ToolError) as caught:
        tool(move)
    text = str(caught.value)
    assert "tool 'move'" in text and "parameter 'where'" in text and "BaseModel" in text
    assert "arbitrary_types_allowed" not in text


def test_a_name_given_positionally_to_tool_shows_the_keyword() -> None:
    with pytest.raises(ToolError, match=r"@tool\(name='adder'\)"):
        tool("adder")  # type: ignore[call-overload]


def test_a_flag_that_is_not_a_bool_is_refused() -> None:
    with pytest.raises(ArgumentError, match="`is_read_only` must be True or False"):
        FunctionTool(add, is_read_only="no")  # type: ignore[arg-type]


@pytest.mark.parametrize("arg", ["tools", "mcps", "plugins", "skills_or_loaders"])
def test_a_toolkit_argument_that_is_not_a_list_shows_the_list_form(arg: str) -> None:
    value: Any = tool(add) if arg == "tools" else "skills/" if arg == "skills_or_loaders" else 3
    with pytest.raises(ArgumentError, match=rf"Toolkit\({arg}=\["):
        Toolkit(**{arg: value})


async def test_an_exhausted_script_counts_in_english() -> None:
    model = ScriptedChatModel([AssistantMsg("assistant", "one")])
    agent = Agent(name="a", system_prompt="s", model=model)
    await agent.reply(UserMsg("user", "1"))
    with pytest.raises(ScriptExhaustedError, match="called a 2nd time"):
        await agent.reply(UserMsg("user", "2"))


@pytest.mark.parametrize(
    ("n", "text"),
    [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th")]
    + [(21, "21st"), (22, "22nd"), (111, "111th"), (112, "112th"), (123, "123rd")],
)
def test_ordinals(n: int, text: str) -> None:
    from tether.model._scripted import _ordinal

    assert _ordinal(n) == text


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: ReActConfig(max_iter=3), r"unknown option `max_iter`.*did you mean `max_iters`"),
        (lambda: ReActConfig(max_iters=0), r"`max_iters=0`: Input should be greater than"),
        (lambda: ContextConfig(trigger_ratio=2), r"^ContextConfig needs 0 < reserve_ratio"),
        (
            lambda: ModelConfig(fallback_model="openai:gpt-4o"),
            r"from_string\('openai:gpt-4o'\)",
        ),
    ],
)
def test_configs_raise_config_errors_naming_the_argument(make: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as caught:
        make()
    assert "errors.pydantic.dev" not in str(caught.value)


def test_configs_still_load_from_json() -> None:
    assert ReActConfig.model_validate({"max_iters": 3}).max_iters == 3
    assert ContextConfig.model_validate_json('{"trigger_ratio": 0.5}').trigger_ratio == 0.5


def test_help_explains_every_argument_of_agent_and_tool() -> None:
    import inspect

    for func, doc in [(Agent.__init__, Agent.__doc__ or ""), (tool, tool.__doc__ or "")]:
        assert "Args:" in doc
        for name in inspect.signature(func).parameters:
            if name != "self":
                assert f"{name}:" in doc, f"{func.__qualname__}: {name} is not explained"
