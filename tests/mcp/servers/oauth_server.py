"""An MCP server behind its own OAuth 2.1 authorization server (the SDK's), for the tests.

Dynamic client registration, authorization code + PKCE, refresh. The authorize step needs
no person: it redirects straight back with a code, so a "browser" is any HTTP client that
follows the redirect. The first access token is reported as expiring at once
(`expires_in: 0`), so the client's next request refreshes it; refreshed ones last an hour.
Every grant is appended to `--grants FILE` (one word a line). Prints `PORT <n>` when ready.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import time
from pathlib import Path

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

GRANTS: Path | None = None


def _grant(kind: str) -> None:
    if GRANTS is not None:
        with GRANTS.open("a") as f:
            f.write(kind + "\n")


class Provider:
    """Everything in memory; every authorization is granted at once."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], expires_in: int) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=expires_in,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        _grant("authorization_code")
        return self._issue(str(client.client_id), authorization_code.scopes, 0)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        _grant("refresh_token")
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, 3600)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def main() -> None:
    global GRANTS
    parser = argparse.ArgumentParser()
    parser.add_argument("--grants")
    args = parser.parse_args()
    GRANTS = Path(args.grants) if args.grants else None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    auth = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True),
    )
    server = MCPServer("locked", auth_server_provider=Provider(), auth=auth, log_level="WARNING")

    @server.tool(description="Say who is there.")
    def whoami() -> str:
        return "a logged-in client"

    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
