"""Every example runs (seed samples with a scripted model in place of the real one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"

EXPECTED = {
    "seed_minimal_agent.py": ["Hello! How can I help you today?"],
    "seed_reply.py": ["There are three entries"],
    "seed_reply_stream.py": ["[calling read_readme]", "The README says tether"],
    "seed_observe.py": ["context has 1 message(s); the model was called 0 time(s)", "Bob said"],
    "seed_hitl_confirm.py": [
        'Tool: write_note, input: {"path": "todo.md", "text": "buy milk"}',
        "Suggested rules: [PermissionRule(tool_name='write_note'",
        "Saved your note.",
        "without asking",
    ],
    "seed_hitl_external.py": [
        "External execution: get_browser_location({})",
        "You are in Hangzhou.",
    ],
    "readme_example.py": ["2 + 3 = 5"],
    "seed_context.py": ["compressed: ", "summary: ## Goal"],
    "seed_tools.py": [
        "[calling Read]",
        "[calling Grep]",
        "[calling Edit]",
        "[calling Bash]",
        "Done. The script now prints: Hi, world",
    ],
    "plugin_seed_samples.py": [
        "Plugin `note` is now activated for the next 3 runs.",
        "hint in reply 4: Last visible run. Call extend_plugin_activation('note') now "
        "if you still need it next run.",
        "after 4 replies: {'note': 3, 'weather': 2}",
    ],
    "plugin_strategies.py": [
        "basic: allow_sleep=False, allow_sleep -> always_awake",
        "legacy: allow_sleep=None, allow_sleep -> sleeping",
        "nobrief: allow_sleep=None, allow_sleep -> always_awake",
    ],
    "seed_plugin.py": ["notes: {'milk': 'buy milk'} | state.plugins: {}"],
}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_example_runs(path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=EXAMPLES
    )
    assert out.returncode == 0, out.stderr[-3000:]
    for expected in EXPECTED.get(path.name, []):
        assert expected in out.stdout


def test_readme_example_is_the_file() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text()
    code = readme.split("## Example", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    body = (EXAMPLES / "readme_example.py").read_text().split('"""', 2)[2]
    assert code.strip() == body.strip()
