#!/usr/bin/env bash
# The end-to-end test in a real VS Code (code-server + Debian chromium): installs the
# tools (first run only, about 4 minutes), packages the .vsix, then drives the workbench.
# Screenshots land in client-vscode/test-output/. E2E_SKIP_PACKAGE=1 reuses ascend-lsp.vsix.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"
export E2E_TOOLS="${E2E_TOOLS:-$HOME/.cache/ascend-lsp-e2e}"

t0=$SECONDS
bash e2e/install-tools.sh
t1=$SECONDS
[[ -d node_modules ]] || npm ci --no-audit --no-fund
if [[ ${E2E_SKIP_PACKAGE:-0} != 1 || ! -f ascend-lsp.vsix ]]; then
    npm run --silent package
fi
npx esbuild e2e/driver.ts --bundle --platform=node --format=cjs --target=node20 \
    --external:playwright-core --outfile=dist/e2e/driver.js --log-level=warning
t2=$SECONDS

# "Run on NPU" needs a Python with torch; the repository's test venv has one.
runner_python="${E2E_RUNNER_PYTHON:-}"
[[ -z $runner_python && -x $root/.venv/bin/python ]] && runner_python="$root/.venv/bin/python"
status=0
E2E_VSIX="$here/ascend-lsp.vsix" E2E_OUTPUT="$here/test-output" E2E_REPO="$root" \
    E2E_RUNNER_PYTHON="$runner_python" node dist/e2e/driver.js || status=$?
t3=$SECONDS
echo "e2e timings: tools $((t1 - t0)) s, build+package $((t2 - t1)) s, run $((t3 - t2)) s"
exit $status
