"""The web UI's static assets (served by `tether serve` at `/`).

The page is plain ES modules under `static/`: no build step, nothing fetched from the
internet. It speaks only the public HTTP API of `tether.app.server`.
"""

from pathlib import Path

__all__ = ["STATIC_DIR"]

STATIC_DIR = Path(__file__).parent / "static"
"""The folder to serve at `/` (holds `index.html`)."""
