"""OAuth for streamable HTTP: the `mcp` SDK's providers over a tether token store."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tether.mcp._oauth_config import OAuthConfig
from tether.mcp._tokens import TokenStoreBase

if TYPE_CHECKING:
    import httpx2
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

__all__ = ["AuthorizeHandler", "IdentityAssertionHandler", "LoginNeeded", "build_auth"]

AuthorizeHandler = Callable[[str], Awaitable[str]]
"""The interactive step of a login: given the authorization URL (to open in a browser),
return the URL the browser was sent back to (the `redirect_uri` with `code` and `state`)."""


IdentityAssertionHandler = Callable[[str, str], Awaitable[str]]
"""Returns an identity assertion (ID-JAG) for `(audience, resource)`: the authorization
server's issuer and the MCP server's resource id (obtained from your identity provider)."""


class LoginNeeded(Exception):
    """The flow needs a user in a browser, and no `authorize` handler was given."""


class _StoreAdapter:
    """The SDK's `TokenStorage` over a `TokenStoreBase` entry (one per server URL)."""

    def __init__(self, store: TokenStoreBase, url: str, config: OAuthConfig) -> None:
        self._store = store
        self._url = url
        self._config = config

    async def _entry(self) -> dict[str, Any]:
        return await self._store.load(self._url) or {}

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        raw = (await self._entry()).get("tokens")
        return None if raw is None else OAuthToken.model_validate(raw)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        entry = await self._entry()
        entry["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        await self._store.save(self._url, entry)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = (await self._entry()).get("client_info")
        if raw is not None:
            return OAuthClientInformationFull.model_validate(raw)
        config = self._config
        if config.client_id is None:
            return None
        return OAuthClientInformationFull(
            client_id=config.client_id,
            client_secret=config.client_secret,
            redirect_uris=[config.redirect_uri],
            token_endpoint_auth_method=config.token_endpoint_auth_method
            or ("client_secret_basic" if config.client_secret else "none"),
        )

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        entry = await self._entry()
        entry["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        await self._store.save(self._url, entry)


class _Browser:
    """Joins the SDK's two callbacks (open the URL; wait for the redirect) into one handler."""

    def __init__(self, authorize: AuthorizeHandler | None) -> None:
        self._authorize = authorize
        self._landed: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        if self._authorize is None:
            raise LoginNeeded(authorization_url)
        self._landed = await self._authorize(authorization_url)

    async def callback(self) -> AuthorizationCodeResult:
        from mcp.shared.auth import AuthorizationCodeResult

        query = parse_qs(urlsplit(self._landed or "").query)
        self._landed = None

        def one(key: str) -> str | None:
            values = query.get(key)
            return values[0] if values else None

        if one("error") is not None:
            raise LoginNeeded(f"the authorization server refused: {one('error')}")
        return AuthorizationCodeResult(code=one("code") or "", state=one("state"), iss=one("iss"))


def build_auth(
    url: str,
    config: OAuthConfig,
    store: TokenStoreBase,
    authorize: AuthorizeHandler | None,
    assertion: IdentityAssertionHandler | None = None,
) -> httpx2.Auth:
    """The SDK's OAuth provider for `config` (an `httpx2.Auth` for the transport's client)."""
    storage: Any = _StoreAdapter(store, url, config)
    if config.grant == "client_credentials":
        return _machine_auth(url, config, storage)
    if config.grant == "identity_assertion":
        return _assertion_auth(url, config, storage, assertion)
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(
        client_name=config.client_name,
        redirect_uris=[config.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=config.scope,
        token_endpoint_auth_method=config.token_endpoint_auth_method,
    )
    browser = _Browser(authorize)
    return OAuthClientProvider(
        url,
        metadata,
        storage,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
        client_metadata_url=config.client_metadata_url,
    )


def _machine_auth(url: str, config: OAuthConfig, storage: Any) -> httpx2.Auth:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    assert config.client_id is not None  # the config's validator
    if config.private_key is not None:
        signer = SignedJWTParameters(
            issuer=config.client_id,
            subject=config.client_id,
            signing_key=config.private_key,
            signing_algorithm=config.signing_algorithm,
        )
        return PrivateKeyJWTOAuthProvider(
            url,
            storage,
            config.client_id,
            signer.create_assertion_provider(),
            scope=config.scope,
            issuer=config.issuer,
        )
    method = config.token_endpoint_auth_method
    return ClientCredentialsOAuthProvider(
        url,
        storage,
        config.client_id,
        config.client_secret or "",
        token_endpoint_auth_method="client_secret_post"
        if method == "client_secret_post"
        else "client_secret_basic",
        scope=config.scope,
        issuer=config.issuer,
    )


def _assertion_auth(
    url: str, config: OAuthConfig, storage: Any, assertion: IdentityAssertionHandler | None
) -> httpx2.Auth:
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    async def missing(audience: str, resource: str) -> str:
        raise LoginNeeded("no `identity_assertion` handler was given to the `MCPClient`")

    assert config.client_id and config.client_secret and config.issuer  # the validator
    method = config.token_endpoint_auth_method
    return IdentityAssertionOAuthProvider(
        url,
        storage,
        config.client_id,
        config.client_secret,
        config.issuer,
        assertion or missing,
        scope=config.scope,
        token_endpoint_auth_method="client_secret_basic"
        if method == "client_secret_basic"
        else "client_secret_post",
    )
