"""Plugin scheduling: prompt + tool-schema tokens per request, all awake vs scheduled.

Workload: 40 plugins × 5 tools, each tool with a realistic pydantic input schema (typed,
described fields, enums, optional filters) and each plugin with a prompt block of a few
sentences and a sleep brief. We measure what one model request carries from the plugins:
the system prompt (agent prompt + plugin text, as `Toolkit.view` builds it) plus the JSON
of the tool schemas, counted with `tether.context.estimate_text_tokens`.

    python benchmarks/plugin_tokens.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from tether.context import estimate_text_tokens
from tether.plugin import Plugin
from tether.state import AgentState
from tether.tool import ToolBase, ToolContext, Toolkit

SYSTEM = "You are a helpful assistant for a small company. Answer briefly and precisely."

DOMAINS = [
    ("note", "notes", "Personal notes"),
    ("calendar", "calendar events", "The user's calendar"),
    ("weather", "weather reports", "Weather forecasts and observations"),
    ("email", "email messages", "The user's mailbox"),
    ("github", "GitHub issues", "Issues and pull requests on GitHub"),
    ("jira", "Jira tickets", "Project tracking in Jira"),
    ("slack", "Slack messages", "Team chat on Slack"),
    ("drive", "documents", "Files in the shared drive"),
    ("crm", "customer records", "Customers and leads in the CRM"),
    ("invoice", "invoices", "Billing and invoices"),
    ("expense", "expense reports", "Employee expenses"),
    ("hr", "employee profiles", "Human resources records"),
    ("recruit", "job candidates", "Hiring pipeline"),
    ("inventory", "stock items", "Warehouse inventory"),
    ("shipping", "shipments", "Parcel shipping and tracking"),
    ("travel", "trip bookings", "Business travel"),
    ("maps", "places", "Maps, places and routes"),
    ("translate", "translations", "Machine translation memory"),
    ("news", "news articles", "Curated news feeds"),
    ("stocks", "stock quotes", "Market data"),
    ("crypto", "crypto wallets", "Crypto wallet balances"),
    ("reminder", "reminders", "Timed reminders"),
    ("todo", "tasks", "The user's to-do list"),
    ("music", "playlists", "Music playback and playlists"),
    ("smarthome", "devices", "Smart home devices"),
    ("fitness", "workouts", "Workout and health logs"),
    ("recipe", "recipes", "Recipes and meal plans"),
    ("bookmark", "bookmarks", "Saved web bookmarks"),
    ("wiki", "wiki pages", "The internal wiki"),
    ("database", "SQL tables", "Read access to the analytics database"),
    ("monitor", "alerts", "Service monitoring alerts"),
    ("deploy", "deployments", "Application deployments"),
    ("dns", "DNS records", "Domain name records"),
    ("support", "support tickets", "Customer support desk"),
    ("survey", "survey responses", "Customer surveys"),
    ("contract", "contracts", "Legal contracts"),
    ("meeting", "meeting notes", "Meeting transcripts and notes"),
    ("forum", "forum threads", "The community forum"),
    ("image", "images", "Image generation and editing"),
    ("podcast", "podcast episodes", "Podcast search and transcripts"),
]
assert len(DOMAINS) == 40

Sort = Literal["newest", "oldest", "relevance"]


def _fields(verb: str, thing: str) -> dict[str, Any]:
    """Realistic arguments for one verb on one kind of record."""
    ident = (str, Field(description=f"The id of the {thing[:-1]} (as returned by search)."))
    if verb == "search":
        return {
            "query": (str, Field(description=f"Free-text query over {thing}.")),
            "limit": (int, Field(10, ge=1, le=100, description="Maximum results to return.")),
            "sort": (Sort, Field("relevance", description="Order of the results.")),
            "since": (str | None, Field(None, description="Only items after this ISO date.")),
            "tags": (list[str], Field(default_factory=list, description="Required tags.")),
        }
    if verb == "get":
        return {
            "id": ident,
            "include_history": (bool, Field(False, description="Also return past revisions.")),
        }
    if verb == "create":
        return {
            "title": (str, Field(description="A short title.")),
            "body": (str, Field(description="The full content, markdown allowed.")),
            "tags": (list[str], Field(default_factory=list, description="Labels to attach.")),
            "visibility": (
                Literal["private", "team", "public"],
                Field("private", description="Who can see it."),
            ),
        }
    if verb == "update":
        return {
            "id": ident,
            "title": (str | None, Field(None, description="New title, if changing.")),
            "body": (str | None, Field(None, description="New content, if changing.")),
            "add_tags": (list[str], Field(default_factory=list, description="Tags to add.")),
            "remove_tags": (list[str], Field(default_factory=list, description="Tags to drop.")),
        }
    return {
        "id": ident,
        "reason": (str, Field(description="Why it is deleted (kept in the audit log).")),
        "permanent": (bool, Field(False, description="Skip the trash; cannot be undone.")),
    }


class BenchTool(ToolBase):
    """A tool with a realistic schema; never called by the benchmark."""

    def __init__(self, name: str, description: str, model: type[BaseModel]) -> None:
        self.name = name
        self.description = description
        self.input_model = model

    async def call(self, tool_input: BaseModel, context: ToolContext) -> str:
        return "ok"


def make_plugin(
    module: str, thing: str, title: str, *, sleeps: bool, tool_class: type[BenchTool] = BenchTool
) -> Plugin:
    """One domain's plugin: five tools with realistic schemas, a block and a sleep brief."""
    tools: list[ToolBase] = []
    for verb in ("search", "get", "create", "update", "delete"):
        model = create_model(
            f"{module.title()}{verb.title()}Input",
            __config__=ConfigDict(extra="forbid"),
            **_fields(verb, thing),
        )
        desc = (
            f"{verb.title()} {thing} in {title.lower()}. Use it when the user asks to "
            f"{verb} {thing}; results include ids you can pass to the other {module} tools."
        )
        tools.append(tool_class(f"{module}_{verb}", desc, model))
    prompt = (
        f"You can work with {thing} in {title.lower()}. Always search before you create, "
        f"to avoid duplicates. Quote ids exactly as returned. Ask before deleting {thing}, "
        "and never delete permanently unless the user says so explicitly. Summarise long "
        "results in a short list, newest first, and mention how many more there are."
    )
    return Plugin(
        name=title,
        module_name=module,
        description=f"{title}: search, read, create, update and delete {thing}.",
        tools=tools,
        prompt=prompt,
        allow_sleep=True if sleeps else None,
        sleep_brief=(
            f"{title}: search, read, create, update and delete {thing}. Activate when the "
            f"user mentions {thing} or asks to look up or change them."
        ),
    )


async def measure(toolkit: Toolkit, state: AgentState) -> tuple[int, int, int]:
    view = await toolkit.view(state)
    prompt = SYSTEM + ("\n\n" + view.prompt if view.prompt else "")
    p = estimate_text_tokens(prompt)
    s = estimate_text_tokens(json.dumps(view.schemas, ensure_ascii=False))
    return p, s, len(view.schemas)


async def per_plugin_costs() -> tuple[float, float, int]:
    """What one plugin adds asleep (its brief line) and awake, and scheduling's fixed cost.

    Returns (tokens per sleeping plugin, tokens per awake plugin, fixed cost): the fixed
    cost is the catalogue's intro plus the two activation tools' schemas, paid once.
    """
    n = len(DOMAINS)
    bare = estimate_text_tokens(SYSTEM)

    async def total(plugins: list[Plugin], state: AgentState) -> int:
        p, s, _ = await measure(Toolkit(plugins=plugins), state)
        return p + s

    asleep_1 = await total([make_plugin(*DOMAINS[0], sleeps=True)], AgentState())
    asleep_n = await total([make_plugin(*d, sleeps=True) for d in DOMAINS], AgentState())
    awake_n = await total([make_plugin(*d, sleeps=False) for d in DOMAINS], AgentState())
    per_brief = (asleep_n - asleep_1) / (n - 1)
    fixed = round(asleep_1 - bare - per_brief)
    return per_brief, (awake_n - bare) / n, fixed


async def main() -> None:
    awake = Toolkit(plugins=[make_plugin(*d, sleeps=False) for d in DOMAINS])
    scheduled = Toolkit(plugins=[make_plugin(*d, sleeps=True) for d in DOMAINS])
    rows = [
        ("all awake (no scheduling)", await measure(awake, AgentState())),
        ("scheduled, 0 active", await measure(scheduled, AgentState())),
        (
            "scheduled, 2 active",
            await measure(scheduled, AgentState(plugins={"note": 3, "calendar": 2})),
        ),
    ]
    base = rows[0][1][0] + rows[0][1][1]
    print("40 plugins x 5 tools; tokens per request (estimate_text_tokens)\n")
    header = f"| {'configuration':<27} | tools | prompt | schemas |  total | cut vs all awake |"
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    for label, (p, s, n) in rows:
        total = p + s
        cut = 100 * (1 - total / base)
        print(f"| {label:<27} | {n:>5} | {p:>6} | {s:>7} | {total:>6} | {cut:>15.1f}% |")
    scheduled_2 = rows[2][1][0] + rows[2][1][1]
    cut = 100 * (1 - scheduled_2 / base)
    verdict = "PASS" if cut >= 85 else "FAIL"
    print(f"\nscheduled (2 active) cuts {cut:.1f}% of the tokens (target >= 85%): {verdict}")

    brief, full, fixed = await per_plugin_costs()
    print("\nper plugin (tokens per request):")
    print(f"  asleep (its sleep_brief line in the catalogue): {brief:.1f}")
    print(f"  awake (full block + 5 tool schemas):            {full:.1f}")
    print(f"  saved per sleeping plugin:                      {full - brief:.1f}")
    print(f"  fixed cost of scheduling (catalogue intro + activation tools): {fixed}")
    print(f"  worth it from {fixed / (full - brief):.2f} sleeping plugin(s) of this size on")


if __name__ == "__main__":
    asyncio.run(main())
