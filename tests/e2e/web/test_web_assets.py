"""The web UI's static files: shipped in the package, small, local, and free of raw HTML sinks."""

from __future__ import annotations

import gzip
import hashlib
import re

from tether.app.web import STATIC_DIR

ASSETS = sorted(p for p in STATIC_DIR.rglob("*") if p.is_file())


def test_assets_are_in_the_package_and_small() -> None:
    names = {p.relative_to(STATIC_DIR).as_posix() for p in ASSETS}
    assert {"index.html", "app.css", "js/main.js"} <= names
    raw = sum(p.stat().st_size for p in ASSETS)
    packed = sum(len(gzip.compress(p.read_bytes(), 9)) for p in ASSETS)
    print(f"web assets: {len(ASSETS)} files, {raw} bytes, {packed} bytes gzipped")
    assert packed <= 300_000


def test_nothing_is_fetched_from_elsewhere() -> None:
    for path in ASSETS:
        text = path.read_text()
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), path
        assert not re.search(r"""(import|from)\s*["']https?:""", text), path
        assert "@import" not in text, path


def test_no_html_is_ever_injected() -> None:
    sinks = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function"
    )
    for path in STATIC_DIR.joinpath("js").glob("*.js"):
        assert not sinks.search(path.read_text()), path


def test_vendored_code_is_recorded_with_its_licence() -> None:
    vendor = STATIC_DIR / "vendor"
    record = (vendor / "THIRD-PARTY.md").read_text()
    bundle = vendor / "markdown-it" / "markdown-it.esm.min.js"
    assert hashlib.sha256(bundle.read_bytes()).hexdigest() in record  # byte for byte from npm
    assert "markdown-it 15.0.3" in bundle.read_text()[:200]
    assert "| 15.0.3 | MIT |" in record
    licences = (vendor / "markdown-it" / "LICENSES.txt").read_text()
    for name in ["markdown-it", "entities", "linkify-it", "mdurl", "punycode.js", "uc.micro"]:
        assert f"==== {name} " in licences, name
