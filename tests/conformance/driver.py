"""The MCP conformance suite's client: tether's public API only (it never imports `mcp`).

Run by `@modelcontextprotocol/conformance client --command "python driver.py"`: the
suite appends the server URL and names the scenario in `MCP_CONFORMANCE_SCENARIO` (with
credentials in `MCP_CONFORMANCE_CONTEXT` where the scenario has them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from tether.mcp import (
    ElicitationRequest,
    ElicitationResponse,
    FileTokenStore,
    HttpMCPConfig,
    MCPClient,
    OAuthConfig,
    loopback_authorize,
)
from tether.permission import PermissionContext
from tether.tool import ToolContext, validate_arguments

CIMD_URL = "https://conformance-test.local/client-metadata.json"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


async def browser(authorization_url: str) -> str:
    """The user in a browser: open the URL, return where the server sends us back."""

    def visit() -> str:
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(authorization_url) as response:
                return str(response.headers.get("Location", ""))
        except urllib.error.HTTPError as exc:  # a 302 surfaces as an "error"
            return str(exc.headers.get("Location", ""))

    return await asyncio.to_thread(visit)


async def accept_defaults(request: ElicitationRequest) -> ElicitationResponse:
    """Accept with no fields of our own: tether fills in the schema's defaults."""
    return ElicitationResponse(action="accept", content={})


def _fetch_json(url: str, form: dict[str, str] | None = None) -> dict[str, Any]:
    data = None if form is None else urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(url, data=data) as response:
        found: dict[str, Any] = json.loads(response.read())
        return found


def issuer_of(url: str) -> str:
    """The MCP server's authorization server, from its protected-resource metadata."""
    parts = urllib.parse.urlsplit(url)
    well_known = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    return str(_fetch_json(well_known)["authorization_servers"][0])


def id_jag_from(context: dict[str, Any]) -> Any:
    """Leg 1 of cross-app access: trade the IdP's ID token for an ID-JAG (RFC 8693)."""

    async def fetch(audience: str, resource: str) -> str:
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": context["idp_id_token"],
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "audience": audience,
            "resource": resource,
            "client_id": context["idp_client_id"],
        }
        answer = await asyncio.to_thread(_fetch_json, context["idp_token_endpoint"], form)
        return str(answer["access_token"])

    return fetch


def oauth_for(scenario: str, context: dict[str, Any], url: str) -> OAuthConfig | None:
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/cross-app-access-complete-flow":
        return OAuthConfig(
            grant="identity_assertion",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            issuer=issuer_of(url),
            token_endpoint_auth_method="client_secret_basic",  # how this client was registered
        )
    if scenario == "auth/client-credentials-jwt":
        return OAuthConfig(
            grant="client_credentials",
            client_id=context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
    if scenario == "auth/client-credentials-basic":
        return OAuthConfig(
            grant="client_credentials",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
        )
    if "client_id" in context:  # pre-registration
        return OAuthConfig(
            client_id=context["client_id"], client_secret=context.get("client_secret")
        )
    return OAuthConfig(client_metadata_url=CIMD_URL)


async def call(client: MCPClient, name: str, **arguments: Any) -> Any:
    tools = {t.name: t for t in await client.list_tools(None)}
    tool = tools[f"mcp__{client.name}__{name}"]
    context = ToolContext(
        tool_call_id="call-1", reply_id="reply-1", permission_context=PermissionContext()
    )
    return await tool.call(validate_arguments(tool.input_model, arguments), context)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def login_flow(url: str, tokens: str | None) -> int:
    """`/mcp login` as `tether chat` does it: status first, then a loopback login."""
    redirect = f"http://127.0.0.1:{_free_port()}/callback"
    auth = OAuthConfig(client_metadata_url=CIMD_URL, redirect_uri=redirect)
    store = FileTokenStore(tokens) if tokens else None
    client = MCPClient(
        "conformance", True, HttpMCPConfig(url=url, auth=auth), is_optional=True, token_store=store
    )

    async def follow(authorization_url: str) -> None:  # the browser, following redirects
        def visit() -> None:
            with urllib.request.urlopen(authorization_url) as response:
                response.read()

        await asyncio.to_thread(visit)

    try:
        assert await client.list_tools(None) == []
        print("status:", client.status, file=sys.stderr)
        assert client.status == "needs login", client.status
        await client.login(loopback_authorize(redirect, follow, timeout=30))
        print("status:", client.status, file=sys.stderr)
        assert client.status == "connected", client.status
        await agent_reply(client)
    finally:
        await client.aclose()
    return 0


async def agent_reply(client: MCPClient) -> None:
    """An agent calls the server's first tool; its state and events go to stdout (a test
    checks that no token is in them)."""
    from tether.agent import Agent
    from tether.message import AssistantMsg, UserMsg
    from tether.model import ScriptedChatModel
    from tether.permission import PermissionContext, PermissionMode
    from tether.tool import Toolkit

    first = (await client.list_tools(None))[0].name
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call(first, {}, id="t")]),
            AssistantMsg("a", "ok"),
        ]
    )
    toolkit = Toolkit(mcps=[client])
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
    agent.state.permission_context = PermissionContext(mode=PermissionMode.BYPASS)
    async for event in agent.reply_stream(UserMsg("user", "go")):
        print("EVENT", event.model_dump_json())
    print("STATE", agent.state.model_dump_json())


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    # The suite runs its 26 scenarios in parallel (each a Python process): on a loaded
    # runner the handshake may take longer than the default 30 s; the suite waits 60 s.
    config = HttpMCPConfig(url=url, auth=oauth_for(scenario, context, url), timeout=55)
    # Tests: keep tokens in files (to check their mode) and log everything (to check
    # that no token reaches a log).
    tokens = os.environ.get("TETHER_CONFORMANCE_TOKENS")
    if os.environ.get("TETHER_CONFORMANCE_DEBUG"):
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    if os.environ.get("TETHER_CONFORMANCE_LOGIN"):
        return await login_flow(url, tokens)
    client = MCPClient(
        "conformance",
        True,
        config,
        on_elicitation=accept_defaults,
        authorize=browser,
        execution_timeout=None,
        token_store=FileTokenStore(tokens) if tokens else None,
        identity_assertion=id_jag_from(context) if "idp_id_token" in context else None,
    )
    async with client:
        tools = [t.name for t in await client.list_tools(None)]
        print("tools:", tools, file=sys.stderr)
        if scenario == "tools_call":
            print(await call(client, "add_numbers", a=5, b=3), file=sys.stderr)
        elif scenario == "elicitation-sep1034-client-defaults":
            print(await call(client, "test_client_elicitation_defaults"), file=sys.stderr)
        elif scenario == "sse-retry":
            print(await call(client, "test_reconnection"), file=sys.stderr)
        elif scenario.startswith("auth/") and tools:
            first = tools[0].removeprefix("mcp__conformance__")
            print(await call(client, first), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
