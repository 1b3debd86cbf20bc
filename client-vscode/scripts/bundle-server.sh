#!/usr/bin/env bash
# Vendors the server and its dependencies into bundled/libs, so the .vsix works with any
# CPython 3.10+ on linux-x64 without a pip install. libcst and PyYAML have compiled
# modules per Python version; their file names carry the ABI tag, so installing once per
# version into the same folder gives one folder that serves all of them.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
python="${PYTHON:-python3}"
versions=(${BUNDLE_PYTHON_VERSIONS:-3.10 3.11 3.12 3.13})
libs="$here/bundled/libs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/wheel" "$root"
rm -rf "$libs"
mkdir -p "$libs"
for version in "${versions[@]}"; do
    # pip evaluates environment markers against the running Python, not --python-version,
    # so the backports that only 3.10 needs are named here.
    backports=()
    [[ $version == 3.10 ]] && backports=("tomli>=2" "exceptiongroup>=1.1.1")
    "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-compile --only-binary=:all: \
        --implementation cp --python-version "$version" \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --target "$work/$version" "$work"/wheel/*.whl "${backports[@]}"
    cp -rn "$work/$version/." "$libs/"
done
rm -rf "$libs/bin"
echo "bundled ascend-lsp for CPython ${versions[*]} into $libs ($(du -sh "$libs" | cut -f1))"
