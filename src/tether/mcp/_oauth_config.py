"""How tether logs in to an OAuth-protected MCP server (the flows are the `mcp` SDK's)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["OAuthConfig"]


class OAuthConfig(BaseModel):
    """OAuth 2.1 for an `HttpMCPConfig`: discovery, registration, PKCE, refresh, step-up.

    With no client id, tether registers itself (a client ID metadata document when
    `client_metadata_url` is set and the server supports it, else dynamic registration).
    The tokens go to the `MCPClient`'s token store, never into state, events or logs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    grant: Literal["authorization_code", "client_credentials", "identity_assertion"] = (
        "authorization_code"
    )
    """`authorization_code`: a user logs in in a browser (the `MCPClient`'s `authorize`
    handler); `client_credentials`: a machine client with a secret or a signing key;
    `identity_assertion`: an enterprise identity provider's assertion (ID-JAG, from the
    `MCPClient`'s `identity_assertion` handler) for a confidential client of `issuer`."""
    client_id: str | None = None
    """A pre-registered client id (required for `client_credentials`)."""
    client_secret: str | None = Field(default=None, repr=False)
    """The pre-registered client's secret."""
    private_key: str | None = Field(default=None, repr=False)
    """A PEM private key: `client_credentials` authenticates with a signed JWT instead
    of a secret."""
    signing_algorithm: str = "RS256"
    """The JWT algorithm for `private_key` (e.g. `RS256`, `ES256`)."""
    scope: str | None = None
    """Scopes to ask for; by default those the server names in its challenge or metadata."""
    client_metadata_url: str | None = None
    """An HTTPS URL of this client's metadata document, used as its client id where the
    authorization server supports that."""
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    """Where the authorization server sends the browser back (a loopback address)."""
    client_name: str = "tether"
    """The name tether registers under."""
    token_endpoint_auth_method: (
        Literal["client_secret_basic", "client_secret_post", "none"] | None
    ) = None
    """How to authenticate at the token endpoint; chosen from the server's metadata if None."""
    issuer: str | None = None
    """The authorization server that issued `client_id` (machine clients): credentials are
    then only sent there."""

    @model_validator(mode="after")
    def _consistent(self) -> OAuthConfig:
        if self.grant == "client_credentials":
            if self.client_id is None:
                raise ValueError("`client_credentials` needs `client_id`")
            if (self.client_secret is None) == (self.private_key is None):
                raise ValueError(
                    "`client_credentials` needs exactly one of `client_secret` or `private_key`"
                )
        if self.grant == "identity_assertion" and None in (
            self.client_id,
            self.client_secret,
            self.issuer,
        ):
            raise ValueError("`identity_assertion` needs `client_id`, `client_secret` and `issuer`")
        if not self.redirect_uri.startswith(("http://", "https://")):
            raise ValueError(f"`redirect_uri` must be an http(s) URL, got {self.redirect_uri!r}")
        return self
