#!/usr/bin/env bash
# Install the protocols' own JS clients, pinned, under .ci/.protocols (used by
# tests/app_server/test_server_agui_client.py and test_server_a2a_client.py; .ci/run
# calls this).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.ci/.protocols
agui_version=1.0.0
a2a_version=1.3.0  # @a2a-js/sdk 1.x speaks A2A 1.0 (0.3.x speaks 0.3); this one is tested
if ! grep -qs "\"version\": \"$agui_version\"" "$dir/node_modules/@ag-ui/client/package.json"; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true, "type": "module"}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --silent "@ag-ui/client@$agui_version"
fi
if ! grep -qs "\"version\": \"$a2a_version\"" "$dir/node_modules/@a2a-js/sdk/package.json"; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true, "type": "module"}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --silent "@a2a-js/sdk@$a2a_version"
fi
