import importlib

import pytest

from tether.tool import Bash, Edit, Glob, Grep, Read, Write, builtin

PARAMETERS = {
    Read: ["file_path", "offset", "limit"],
    Write: ["file_path", "content"],
    Edit: ["file_path", "old_string", "new_string", "replace_all"],
    Grep: [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "head_limit",
    ],  # fmt: skip
    Glob: ["pattern", "path"],
    Bash: ["command", "timeout", "description"],
}


@pytest.mark.parametrize("cls", list(PARAMETERS), ids=lambda c: c.__name__)
def test_names_and_parameters_are_the_ones_models_know(cls):
    tool = cls()
    schema = tool.json_schema()
    assert schema["name"] == cls.__name__
    assert list(schema["parameters"]["properties"]) == PARAMETERS[cls]
    for name, prop in schema["parameters"]["properties"].items():
        assert prop.get("description"), f"{cls.__name__}.{name} has no description"
    assert len(tool.description) > 200


def test_flags():
    for tool in (Read(), Grep(), Glob()):
        assert tool.is_read_only and tool.is_concurrency_safe
    for tool in (Write(), Edit(), Bash()):
        assert not tool.is_read_only and not tool.is_concurrency_safe


def test_limits_are_stated_in_descriptions():
    assert "up to 50 lines" in Read(max_lines=50).description
    assert "at most 7" in Glob(max_results=7).description
    assert "At most 9 lines" in Grep(max_results=9).description
    assert "Output over 1234 characters" in Bash(max_output_chars=1234).description
    assert "600000" in Bash().description


def test_exported_from_tether_tool():
    package = importlib.import_module("tether.tool")  # `tether.tool` the attribute is @tool
    for name in ("Bash", "Edit", "Glob", "Grep", "Read", "Write"):
        assert getattr(package, name) is getattr(builtin, name)
    assert builtin.__all__ == sorted(
        builtin.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )
