"""The HTTP service: sessions, replies as SSE that never loses an event, leases, API keys.

Needs the `server` extra (`pip install 'tether[server]'`); run it with `tether serve`.

It may import these private modules of other packages (and no others; the layering test
checks it):

- tether.mcp._relay
"""

from tether.app.server._app import STATIC_DIR, create_app, event_log_for, events_path
from tether.app.server._auth import LOCAL_USER, keys_from_env, keys_from_file
from tether.app.server._origins import parse_allowed_hosts

__all__ = [
    "LOCAL_USER",
    "STATIC_DIR",
    "create_app",
    "event_log_for",
    "events_path",
    "keys_from_env",
    "keys_from_file",
    "parse_allowed_hosts",
]
