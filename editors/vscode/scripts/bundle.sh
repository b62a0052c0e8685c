#!/usr/bin/env bash
# Builds the platform-specific .vsix: the extension with rag-lsp and its
# dependencies under bundled/libs, for one VS Code target and one Python version,
# as vscode-ruff ships its binary per platform. With `ragLsp.importStrategy:
# useBundled`, that copy serves when the environment has no rag-lsp, run by the
# selected interpreter (which must be that Python version).
#
#   scripts/bundle.sh [--target linux-x64] [--python 3.11] [--out rag-lsp-linux-x64.vsix]
#
# Run in editors/vscode after `npm ci`. It builds the wheel of this checkout and
# installs it with pip for the target's platform, then packages with vsce; bundled/libs
# is removed afterwards, so a plain `vsce package` stays universal and small.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
target=linux-x64
python_version="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --python) python_version="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: scripts/bundle.sh [--target T] [--python X.Y] [--out FILE]" >&2; exit 2 ;;
  esac
done
out="${out:-$here/rag-lsp-$target.vsix}"
case "$target" in
  linux-x64) arch=x86_64 ;;
  linux-arm64) arch=aarch64 ;;
  darwin-x64) platforms=(macosx_10_12_x86_64 macosx_10_9_x86_64 macosx_11_0_x86_64) ;;
  darwin-arm64) platforms=(macosx_11_0_arm64 macosx_12_0_arm64 macosx_14_0_arm64) ;;
  win32-x64) platforms=(win_amd64) ;;
  *) echo "unknown target $target (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64)" >&2; exit 2 ;;
esac
if [ -n "${arch:-}" ]; then
  platforms=()
  for glibc in 2_28 2_27 2_26 2_24 2_17 2_12 2_5; do
    platforms+=("manylinux_${glibc}_${arch}")
  done
  platforms+=("manylinux2014_${arch}" "manylinux2010_${arch}" "manylinux1_${arch}")
fi

libs="$here/bundled/libs"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch" "$libs"' EXIT
rm -rf "$libs"
python3 -m pip wheel --quiet --no-deps --wheel-dir "$scratch" "$repo"
platform_args=()
for platform in "${platforms[@]}"; do
  platform_args+=(--platform "$platform")
done
python3 -m pip install --quiet --disable-pip-version-check --target "$libs" --only-binary=:all: \
  --implementation cp --python-version "$python_version" "${platform_args[@]}" "$scratch"/rag_lsp-*.whl
# Console scripts name the build machine's interpreter; the launcher replaces them.
rm -rf "$libs/bin"
find "$libs" -name __pycache__ -prune -exec rm -rf {} +
# What rag-lsp never runs: the libraries' own test suites, and what building
# against them takes (C headers, static libraries, Cython sources, type stubs).
find "$libs" -path "$libs/rag_lsp" -prune -o -type d -name tests -prune -exec rm -rf {} +
find "$libs" -type f \( -name '*.h' -o -name '*.a' -o -name '*.pxd' -o -name '*.pyx' -o -name '*.pyi' \) -delete
# numpy's build tools (numpy.distutils, f2py: they write and compile extension
# modules, and numpy imports them only when asked for by name).
rm -rf "$libs/numpy/distutils" "$libs/numpy/f2py" "$libs/numpy/_pyinstaller" "$libs/numpy/random/_examples"
# numpy's extension modules that only its test suite imports (none of numpy's
# own modules does, numpy.testing's table printer aside).
rm -f "$libs"/numpy/_core/_simd.* "$libs"/numpy/_core/_multiarray_tests.* "$libs"/numpy/_core/_umath_tests.* \
  "$libs"/numpy/_core/_rational_tests.* "$libs"/numpy/_core/_struct_ufunc_tests.* "$libs"/numpy/_core/_operand_flag_tests.*
# The Linux builds' shared libraries without the symbols that only debuggers
# read (the dynamic ones the loader needs stay); not those that auditwheel
# rewrote with patchelf (in a *.libs folder, or given a search path), which
# strip can leave unloadable, nor one this strip cannot read (another
# processor's), which is left as it is.
case "$target" in
  linux-*)
    if command -v strip >/dev/null && command -v readelf >/dev/null; then
      find "$libs" -type f -name '*.so*' -not -path '*.libs/*' -exec sh -c '
        for f; do
          readelf -d "$f" 2>/dev/null | grep -qE "RPATH|RUNPATH" && continue
          strip --strip-unneeded "$f" 2>/dev/null || true
        done' sh {} +
    fi
    ;;
esac
version="$(cd "$libs" && python3 -c 'import importlib.metadata as m, sys; sys.path.insert(0, "."); print(m.version("rag-lsp"))')"
printf '{"python": "%s", "target": "%s", "version": "%s"}\n' "$python_version" "$target" "$version" > "$libs/rag_lsp_bundle.json"
cd "$here"
npx --no-install @vscode/vsce package --target "$target" --out "$out"
