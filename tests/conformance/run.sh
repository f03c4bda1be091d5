#!/usr/bin/env bash
# Run the MCP client conformance suite against tests/conformance/driver.py.
# Installs the pinned suite, a Node 22 (the suite needs >= 22) and the reference
# everything-server (for tests/mcp/test_mcp_everything.py) under .ci/.mcp-conformance.
# Usage: tests/conformance/run.sh [PYTHON]   (exit status: non-zero on an unexpected result)
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${1:-.venv/bin/python}"
suite_version=0.1.16
node_version=22.23.3
everything_version=2026.8.31
dir=.ci/.mcp-conformance
if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/.bin/mcp-server-everything" ] ||
  ! grep -q "\"version\": \"$suite_version\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --silent \
    "node@$node_version" "@modelcontextprotocol/conformance@$suite_version" \
    "@modelcontextprotocol/server-everything@$everything_version"
fi
export PATH="$PWD/$dir/node_modules/.bin:$PATH"
node --version | grep -q '^v22\.' || { echo "conformance needs node 22, got $(node --version)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
conformance client --suite all --timeout 60000 \
  --command "$python $PWD/tests/conformance/driver.py" \
  --expected-failures tests/conformance/expected-failures.yml -o "$out"
