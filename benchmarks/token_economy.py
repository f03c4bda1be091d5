"""Token economy: billed input cost of a 30-turn session, scheduling x prompt caching.

The session (`_economy_session.py`) runs through the real agent loop twice: all 40
plugins awake, and scheduled (plugins sleep until woken). Every request the loop sent is
rendered by tether's own provider formatters (`build_params` of the Anthropic, OpenAI and
DashScope models) with prompt caching on and off, laid out in each provider's cache order
(tools, system, messages), with cache markers left out of the text (they are not prompt
content), and counted with a real tokenizer: Qwen's BPE shipped in the `dashscope` package
(the same counts serve all three providers; the table compares strategies, not vendors).

Billing, per request: Anthropic and DashScope (explicit markers) read the longest prefix
that ends at a block boundary within 20 blocks before one of the request's markers and was
written by an earlier request's marker, and write up to the last marker; OpenAI reads the
longest prefix shared with an earlier request, in 128-token steps from 1,024, and writes
nothing. The rest is plain input. No caching: every token is plain input.

    python benchmarks/token_economy.py

Targets (Anthropic prices): scheduled + caching <= 35% of all awake + caching and <= 5%
of all awake without caching; with scheduled + caching, for each of the three providers,
every request after turn 1 starts with a byte-identical prefix of the previous request of
>= 90% of its tokens, except on the compression turn. The script prints, per provider,
the requests under 90% and how many of their tokens are new.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from dataclasses import dataclass
from typing import Any

from _economy_session import COMPRESS_AT, PLAN, run_session

from context import qwen_counter
from tether.credential import AnthropicCredential, DashScopeCredential, OpenAICredential
from tether.model import AnthropicChatModel, ChatRequest, DashScopeChatModel, OpenAIChatModel

# Published prices, USD per million input tokens, and cache multipliers of that price.
PRICES: dict[str, dict[str, Any]] = {
    "anthropic": {
        "model": "claude-sonnet-4-6",
        "input": 3.00,
        "read": 0.10,
        "write": 1.25,
        "source": "docs.claude.com/en/docs/build-with-claude/prompt-caching#pricing "
        "(5-minute writes 1.25x, reads 0.1x), checked 2026-02",
    },
    "openai": {
        "model": "gpt-4o",
        "input": 2.50,
        "read": 0.50,
        "write": 1.00,
        "source": "platform.openai.com/docs/pricing (gpt-4o cached input $1.25 of $2.50; "
        "no write premium), checked 2026-02",
    },
    "dashscope": {
        "model": "qwen3-max",
        "input": 1.20,
        "read": 0.10,
        "write": 1.25,
        "source": "alibabacloud.com/help/en/model-studio/context-cache (explicit cache: "
        "creation 1.25x, hits 0.1x); qwen3-max 0-32K tier price, checked 2026-02",
    },
}
LOOKBACK = 20
"""Blocks before a marker that Anthropic (and DashScope) check for an earlier cache entry."""
STRATEGIES = [
    ("all awake, no cache", False, False),
    ("all awake + cache", False, True),
    ("scheduled, no cache", True, False),
    ("scheduled + cache", True, True),
]

count = qwen_counter()
_memo: dict[str, int] = {}


def tokens(text: str) -> int:
    """Qwen tokens of `text` (memoised: most segments repeat from request to request)."""
    found = _memo.get(text)
    if found is None:
        found = _memo[text] = count(text)
    return found


def _model(provider: str, cache: bool) -> Any:
    name = PRICES[provider]["model"]
    if provider == "anthropic":
        return AnthropicChatModel(AnthropicCredential(api_key="x"), name, prompt_cache=cache)
    if provider == "openai":
        return OpenAIChatModel(OpenAICredential(api_key="x"), name, prompt_cache=cache)
    return DashScopeChatModel(DashScopeCredential(api_key="x"), name, prompt_cache=cache)


def _clean(value: Any) -> tuple[Any, bool]:
    """`value` without `cache_control` keys, and whether it had one."""
    if isinstance(value, dict):
        marked = "cache_control" in value
        out = {}
        for k, v in value.items():
            if k != "cache_control":
                out[k], inner = _clean(v)
                marked = marked or inner
        return out, marked
    if isinstance(value, list):
        items = [_clean(v) for v in value]
        return [i[0] for i in items], any(i[1] for i in items)
    return value, False


@dataclass
class Rendered:
    """A request body as segments in cache order, and the segments that end at a marker."""

    segments: list[str]
    markers: list[int]


def render(provider: str, model: Any, request: ChatRequest) -> Rendered:
    """The provider's own request body, cut into segments in cache order."""
    body = model.build_params(request)
    tools = body.get("tools", [])
    # Deferred definitions are not in the prefix: the API loads each where a
    # `tool_reference` names it, so it is counted there.
    pieces: list[Any] = [t for t in tools if not t.get("defer_loading")]
    if provider == "anthropic":
        system = body.get("system") or []
        pieces += system if isinstance(system, list) else [{"type": "text", "text": system}]
        defined = {t["name"]: t for t in tools}
        for message in body["messages"]:
            for i, block in enumerate(message["content"]):
                pieces.append({"role": message["role"], **block} if i == 0 else block)
                for part in block.get("content", []) if block["type"] == "tool_result" else []:
                    if isinstance(part, dict) and part.get("type") == "tool_reference":
                        pieces.append({**defined[part["tool_name"]], "defer_loading": False})
    else:
        pieces += body["messages"]
    segments, markers = [], []
    for i, piece in enumerate(pieces):
        clean, marked = _clean(piece)
        segments.append(json.dumps(clean, ensure_ascii=False))
        if marked:
            markers.append(i)
    return Rendered(segments, markers)


def _boundaries(segments: list[str]) -> tuple[list[int], list[str]]:
    """Tokens and prefix digests at the end of each segment."""
    total, digest = 0, hashlib.sha256()
    counts, hashes = [], []
    for segment in segments:
        total += tokens(segment)
        digest.update(segment.encode())
        counts.append(total)
        hashes.append(digest.copy().hexdigest())
    return counts, hashes


def common_tokens(a: list[str], b: list[str]) -> int:
    """Tokens of the longest byte-identical prefix of two renderings (b's tokens)."""
    total = 0
    for x, y in zip(a, b, strict=False):
        if x == y:
            total += tokens(y)
            continue
        n = 0
        while n < min(len(x), len(y)) and x[n] == y[n]:
            n += 1
        return total + (count(y[:n]) if n else 0)
    return total


@dataclass
class Bill:
    """One request's input: total tokens, cache reads and writes, and the cost units."""

    total: int
    read: int
    write: int

    def units(self, price: dict[str, Any], cache: bool) -> float:
        if not cache:
            return float(self.total)
        plain = self.total - self.read - self.write
        return plain + self.read * price["read"] + self.write * price["write"]


class Cache:
    """The provider's cache over one session."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.entries: set[str] = set()
        self.seen: list[list[str]] = []

    def bill(self, rendered: Rendered) -> Bill:
        counts, hashes = _boundaries(rendered.segments)
        total = counts[-1] if counts else 0
        if self.provider == "openai":
            shared = max((common_tokens(old, rendered.segments) for old in self.seen), default=0)
            self.seen = [*self.seen[-4:], rendered.segments]
            read = shared // 128 * 128 if shared >= 1024 else 0
            return Bill(total, read, 0)
        hit = 0
        for marker in rendered.markers:
            for i in range(marker, max(marker - LOOKBACK, -1), -1):
                if hashes[i] in self.entries:
                    hit = max(hit, counts[i])
                    break
        last = counts[rendered.markers[-1]] if rendered.markers else 0
        self.entries.update(hashes[m] for m in rendered.markers)
        return Bill(total, hit, max(last - hit, 0))


def below_n(shares: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The requests whose byte-identical prefix is under 90% of their tokens."""
    return [s for s in shares if s[1] < 0.90]


def _bar(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


async def main() -> int:
    sessions = {
        False: await run_session(scheduled=False),
        True: await run_session(scheduled=True),
    }
    events = sessions[True].events
    print(
        f"30 turns, 40 plugins x 5 tools, 2 skills, compression before turn {COMPRESS_AT}; "
        f"scheduled: {events['woken']} wakes, {events['extended']} extensions, "
        f"{events['expired']} expiries; requests: all awake {len(sessions[False].requests)}, "
        f"scheduled {len(sessions[True].requests)}. Tokens: Qwen BPE (dashscope).\n"
    )
    totals: dict[tuple[str, str], tuple[int, float]] = {}
    per_turn: dict[str, list[tuple[int, float]]] = {}
    shares: dict[str, list[tuple[int, float]]] = {p: [] for p in PRICES}
    reuses: dict[str, list[tuple[int, float]]] = {p: [] for p in PRICES}
    appended: dict[str, list[tuple[int, int, int]]] = {p: [] for p in PRICES}
    for provider, price in PRICES.items():
        for label, scheduled, cache in STRATEGIES:
            model = _model(provider, cache)
            ledger = Cache(provider)
            turns: dict[int, list[int | float]] = {}
            previous: list[str] | None = None
            total_tokens, units = 0, 0.0
            for turn, request in sessions[scheduled].requests:
                rendered = render(provider, model, request)
                bill = ledger.bill(rendered)
                share, reuse = 1.0, 1.0
                if previous is not None:
                    common = common_tokens(previous, rendered.segments)
                    share = common / max(bill.total, 1)
                    reuse = common / max(sum(tokens(s) for s in previous), 1)
                previous = rendered.segments
                row = turns.setdefault(turn, [0, 1.0])
                row[0] += bill.total
                row[1] = min(row[1], share)
                total_tokens += bill.total
                units += bill.units(price, cache)
                if scheduled and cache and turn not in (1, COMPRESS_AT):
                    shares[provider].append((turn, share))
                    reuses[provider].append((turn, reuse))
                    if share < 0.90:
                        appended[provider].append((turn, bill.total - common, bill.total))
            totals[(provider, label)] = (total_tokens, units * price["input"] / 1e6)
            if provider == "anthropic":
                per_turn[label] = [(int(v[0]), float(v[1])) for _, v in sorted(turns.items())]
    _print_turns(per_turn)
    _print_totals(totals)
    return _verdict(totals, shares, reuses, appended)


def _print_turns(per_turn: dict[str, list[tuple[int, float]]]) -> None:
    labels = list(per_turn)
    print("Anthropic request bodies, per turn: input tokens (all requests of the turn) and")
    print("the smallest byte-identical prefix share of the previous request\n")
    head = "| turn | need               | " + " | ".join(f"{lab:>24}" for lab in labels) + " |"
    print(head)
    print("|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|")
    for t in range(len(PLAN)):
        cells = " | ".join(
            f"{per_turn[lab][t][0]:>14,} {100 * per_turn[lab][t][1]:>8.1f}%" for lab in labels
        )
        print(f"| {t + 1:>4} | {PLAN[t]:<18} | {cells} |")
    print()


def _print_totals(totals: dict[tuple[str, str], tuple[int, float]]) -> None:
    print("Whole session: input tokens and billed input cost (USD)\n")
    head = "| provider  | strategy              |     tokens | billed USD | vs awake, no cache | vs awake + cache |"
    print(head)
    print("|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|")
    for provider in PRICES:
        base = totals[(provider, "all awake, no cache")][1]
        cached = totals[(provider, "all awake + cache")][1]
        for label, _, _ in STRATEGIES:
            n, usd = totals[(provider, label)]
            print(
                f"| {provider:<9} | {label:<21} | {n:>10,} | {usd:>10.4f} | "
                f"{100 * usd / base:>17.1f}% | {100 * usd / cached:>15.1f}% |"
            )
    print()
    for provider, price in PRICES.items():
        print(f"{provider}: {price['model']} ${price['input']}/M input; {price['source']}")
    print()


def _verdict(
    totals: dict[tuple[str, str], tuple[int, float]],
    shares: dict[str, list[tuple[int, float]]],
    reuses: dict[str, list[tuple[int, float]]],
    appended: dict[str, list[tuple[int, int, int]]],
) -> int:
    best = totals[("anthropic", "scheduled + cache")][1]
    awake_cache = totals[("anthropic", "all awake + cache")][1]
    awake = totals[("anthropic", "all awake, no cache")][1]
    checks = [
        (f"scheduled + cache = {100 * best / awake_cache:.1f}% of all awake + cache (<= 35%)",
         best <= 0.35 * awake_cache),
        (f"scheduled + cache = {100 * best / awake:.1f}% of all awake, no cache (<= 5%)",
         best <= 0.05 * awake),
    ]  # fmt: skip
    for provider in PRICES:
        own = shares[provider]
        worst = min(own, key=lambda s: s[1])
        below = sorted({t for t, share in own if share < 0.90})
        kept = min(reuses[provider], key=lambda s: s[1])
        print(
            f"(info) {provider}: every request starts with >= {100 * kept[1]:.1f}% of the previous "
            f"one (turn {kept[0]}); below 90%: "
            + ", ".join(
                f"turn {t}: {n:,} of {total:,} tokens new" for t, n, total in appended[provider]
            )
        )
        checks.append(
            (
                f"{provider}: byte-identical prefix >= 90% after turn 1 but the compression "
                f"turn: worst {100 * worst[1]:.1f}% (turn {worst[0]}); "
                f"{len(own) - len(below_n(own))} of {len(own)} requests pass, turns below: "
                f"{below}",
                worst[1] >= 0.90,
            )
        )
    for text, ok in checks:
        print(f"{_bar(ok)}  {text}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
