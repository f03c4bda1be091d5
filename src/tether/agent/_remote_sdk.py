"""The `a2a-sdk` client, imported on first use, and its failures as `tether.errors`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from tether.errors import A2AAuthenticationError, A2AConnectionError, MissingDependencyError

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types import AgentCard

__all__ = ["connected", "translated"]


def _require() -> None:
    try:
        import a2a.client  # noqa: F401
        import httpx  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("a2a-sdk", "a2a", "A2AAgent") from exc


@contextlib.asynccontextmanager
async def connected(
    url: str, headers: dict[str, str], seconds: float, card: AgentCard | None
) -> AsyncIterator[tuple[Client, AgentCard]]:
    """An A2A client for the agent at `url` (its card fetched unless given), then closed."""
    _require()
    import httpx
    from a2a.client import ClientConfig, ClientFactory

    async with httpx.AsyncClient(headers=headers, timeout=seconds) as http:
        config = ClientConfig(
            httpx_client=http,
            streaming=True,
            supported_protocol_bindings=["JSONRPC", "HTTP+JSON"],  # the agent's order wins
        )
        factory = ClientFactory(config)
        with translated(url):
            if card is None:
                from a2a.client import A2ACardResolver

                card = await A2ACardResolver(http, url).get_agent_card()
            client = factory.create(card)
        try:
            yield client, card
        finally:
            await client.close()


@contextlib.contextmanager
def translated(url: str) -> Iterator[None]:
    """Turn the SDK's and httpx's failures into `A2AAuthenticationError`/`A2AConnectionError`."""
    try:
        yield
    except (A2AAuthenticationError, A2AConnectionError):
        raise
    except Exception as exc:
        error = _typed(url, exc)
        if error is None:
            raise
        raise error from exc


def _typed(url: str, exc: BaseException) -> Exception | None:
    import httpx
    from a2a.utils.errors import A2AError as SdkError

    status = _status(exc)
    if status in (401, 403):
        return A2AAuthenticationError(
            f"the A2A agent at {url} refused the request (HTTP {status}): pass its API key "
            "with `A2AAgent(url, credential=A2ACredential(api_key=...))` (or set "
            "TETHER_A2A_API_KEY), or the header it expects with `headers={...}`"
        )
    if status is not None or _reaches(exc, httpx.RequestError) or isinstance(exc, SdkError):
        what = f"HTTP {status}" if status is not None else f"{type(exc).__name__}: {exc}"
        return A2AConnectionError(
            f"cannot use the A2A agent at {url} ({what}); check the URL (its agent card is "
            f"at {url.rstrip('/')}/.well-known/agent-card.json) and that the agent is running"
        )
    return None


def _status(exc: BaseException) -> int | None:
    import httpx

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.HTTPStatusError):
            return seen.response.status_code
        code = getattr(seen, "status_code", None)
        if isinstance(code, int):
            return code
        seen = seen.__cause__ or seen.__context__
    return None


def _reaches(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
