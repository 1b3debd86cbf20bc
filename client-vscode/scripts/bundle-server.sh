#!/usr/bin/env bash
# Vendors the server and its dependencies into bundled/libs, with bundled/start_server.py to
# start it. Everything the server imports is pure Python (pygls, lsprotocol, attrs, cattrs),
# so one bundle serves any CPython 3.10+ on Linux, macOS and Windows, x64 and arm64; the
# script fails if a compiled module gets in. BUNDLE_DIR overrides the output folder.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
python="${PYTHON:-python3}"
bundle="${BUNDLE_DIR:-$here/bundled}"
libs="$bundle/libs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheel" "$root"
rm -rf "$bundle"
mkdir -p "$libs"
# --platform any: only wheels that run everywhere can satisfy it. pip evaluates environment
# markers against the running Python, so the backports only 3.10 needs are named here.
"$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-compile \
    --only-binary=:all: --implementation py --python-version 3.10 --platform any \
    --target "$libs" "$work"/wheel/*.whl "tomli>=2" "exceptiongroup>=1.1.1"
rm -rf "$libs/bin"
compiled="$(find "$libs" -name '*.so' -o -name '*.pyd' -o -name '*.dylib' -o -name '*.dll')"
if [[ -n $compiled ]]; then
    echo "error: the bundle must be pure Python, but has compiled modules:" >&2
    echo "$compiled" >&2
    exit 1
fi
cp "$here/scripts/start_server.py" "$bundle/start_server.py"
echo "bundled ascend-lsp (pure Python, CPython 3.10+ on any platform) into $bundle ($(du -sh "$libs" | cut -f1))"
