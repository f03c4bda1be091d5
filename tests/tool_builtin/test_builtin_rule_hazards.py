"""Issue 31 end to end: an allow rule grants words, never the capability to run or escape.

The real built-in Bash tool runs through an `Agent` (scripted model) under the rules a
user would hold: the README's, the rule tether suggests for a harmless sibling command,
and the broad `Prog:*` rules tether used to suggest. Each attack asks; the marker file
outside the work dir is never created and the secret is never printed. A first test runs
a few of the attacks straight through a shell to show they are real.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_run import run_call
from rule_hazard_cases import FURTHER, README_RULES, SECRET, Place, make_place, set_repo_config

from tether.permission import suggest_shell_rules
from tether.tool import Bash
from tether.tool.builtin import BubblewrapSandbox

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    found = make_place(tmp_path, repo=True)
    monkeypatch.setenv("HOME", str(found.home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return found


@pytest.fixture(params=["plain", "bwrap"])
def bash(request: pytest.FixtureRequest) -> Bash:
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_ok")  # skipped with the reason when absent
        return Bash(sandbox=BubblewrapSandbox())
    return Bash()


def _sibling_rules(place: Place, harmless: str) -> list[str]:
    return [str(r) for r in suggest_shell_rules(harmless, cwd=str(place.work))]


async def _held(bash: Bash, place: Place, command: str, rules: list[str]) -> None:
    outcome = await run_call(bash, {"command": place.fill(command)}, place.work, allow_rules=rules)
    assert outcome.asked, (command, rules, outcome.output)
    assert not place.marker.exists(), (command, rules)
    assert SECRET not in outcome.output, (command, rules)


def test_the_attacks_are_real_without_tether(place: Place) -> None:
    """Run straight through bash, the attacks do create the marker (the tests would see it)."""
    set_repo_config(place, "diff.external", str(place.work / "evil.sh"))
    for command in (
        "cd emb && git diff",
        "git diff --no-index a.txt b.txt",
        "sed 's|x|touch {M}|e' a.txt",
        "sort -o {M} a.txt",
        "git diff --output={M}",
        "git push ./emb2 HEAD:refs/heads/x",
    ):
        place.marker.unlink(missing_ok=True)
        subprocess.run(["bash", "-c", place.fill(command)], cwd=place.work, capture_output=True)
        assert place.marker.exists(), command
    place.marker.unlink()
    shown = subprocess.run(
        ["bash", "-c", place.fill("sort --files0-from={LIST}")],
        cwd=place.work,
        capture_output=True,
        text=True,
    )
    assert SECRET in shown.stdout


ACCEPTANCE: list[tuple[str, str, str | None]] = [
    # (command, the harmless sibling whose suggested rule the user accepted, repo config)
    ("cd emb && git diff", "git diff", None),
    ("git diff", "git diff", "core.fsmonitor"),
    ("git diff --no-index a.txt b.txt", "git diff", "diff.external"),
    ("git diff --output={M}", "git diff", None),
    ("git diff --outp={M}", "git diff", None),
    ("sed 's|x|touch {M}|e' a.txt", "sed -n 1,5p a.txt", None),
    ("sed '1e touch {M}' a.txt", "sed -n 1,5p a.txt", None),
    ("sed -n 'w {M}' a.txt", "sed -n 1,5p a.txt", None),
    ("sort -o {M} a.txt", "sort -o sorted.txt a.txt", None),
    ("sort --files0-from={LIST}", "sort -o sorted.txt a.txt", None),
    ("tar --rsh-command={EVIL} -cf localhost:x.tar a.txt", "tar -cf x.tar a.txt", None),
    ("tar --rsh-comm={EVIL} -cf localhost:x.tar a.txt", "tar -cf x.tar a.txt", None),
]


def _configure(place: Place, key: str | None) -> None:
    if key == "core.fsmonitor":
        set_repo_config(place, key, f"touch {place.marker}; false")
    elif key == "diff.external":
        set_repo_config(place, key, str(place.work / "evil.sh"))


@pytest.mark.parametrize(("command", "sibling", "config"), ACCEPTANCE)
@pytest.mark.parametrize("rules", ["readme", "suggested", "old-prefix"])
async def test_an_attack_asks_under_the_rules_a_user_holds(
    bash: Bash, place: Place, command: str, sibling: str, config: str | None, rules: str
) -> None:
    _configure(place, config)
    program = sibling.split()[0]
    held: dict[str, list[str]] = {
        "readme": README_RULES,
        "suggested": _sibling_rules(place, sibling) or README_RULES,
        "old-prefix": [f"Bash({program}:*)"],
    }
    await _held(bash, place, command, held[rules])


def test_the_suggested_rules_are_exact_for_programs_that_run_or_write(place: Place) -> None:
    assert _sibling_rules(place, "sed -n 1,5p a.txt") == ["Bash(sed -n 1,5p a.txt)"]
    assert _sibling_rules(place, "sort -o sorted.txt a.txt") == ["Bash(sort -o sorted.txt a.txt)"]
    assert _sibling_rules(place, "tar -cf x.tar a.txt") == ["Bash(tar -cf x.tar a.txt)"]


def test_there_are_at_least_80_further_cases() -> None:
    assert len(FURTHER) >= 80
    assert len(set(FURTHER)) == len(FURTHER)


@pytest.mark.parametrize(("rule", "command"), FURTHER)
async def test_a_further_case_is_held(place: Place, rule: str, command: str) -> None:
    await _held(Bash(), place, command, [rule, *README_RULES])


async def test_harmless_calls_still_run_under_a_prefix_rule(place: Place) -> None:
    """The rules still grant their words: no hazard, no question."""
    for rule, command in (
        ("Bash(git diff:*)", "git diff --stat"),
        ("Bash(tar:*)", "tar -cf x.tar a.txt"),
        ("Bash(sort:*)", "sort -o sorted.txt a.txt"),
        ("Bash(sed:*)", "sed -n 1p a.txt"),
    ):
        outcome: Any = await run_call(Bash(), {"command": command}, place.work, allow_rules=[rule])
        assert not outcome.asked, (rule, command, outcome.output)
    assert (place.work / "sorted.txt").read_text() == "changed\nx\n"


async def test_an_exact_rule_allows_what_its_words_show(place: Place) -> None:
    inside = "sort -o sorted.txt a.txt"
    outcome = await run_call(
        Bash(), {"command": inside}, place.work, allow_rules=[f"Bash({inside})"]
    )
    assert not outcome.asked
    # ... but never the config git reads, which the words do not show.
    outcome = await run_call(
        Bash(),
        {"command": "cd emb && git diff"},
        place.work,
        allow_rules=["Bash(cd emb)", "Bash(git diff)"],
    )
    assert outcome.asked and not place.marker.exists()
    outcome = await run_call(
        Bash(),
        {"command": "cd emb && git diff"},
        place.work,
        allow_rules=["Bash(cd emb && git diff)"],
    )
    assert outcome.asked and not place.marker.exists()
