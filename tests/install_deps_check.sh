#!/usr/bin/env bash
# Usage: install_deps_check.sh SOURCE_DIR BUILD_DIR
# The guard behind `scripts/install-deps --check`, on BUILD_DIR's configure: green with the real
# package list, red when one package the configure needs is dropped from it.
set -euo pipefail
src=$1 build=$2
check="$src/scripts/check-deps.py"
mapfile -t packages < <("$src/scripts/install-deps" --list)

echo "-- the full list"
/usr/bin/python3 "$check" "$build" "${packages[@]}"

expect_offender() {  # expect_offender PACKAGE FILE_PATTERN: drop PACKAGE, the check must name it
  local drop=$1 pattern=$2 out kept=() p
  for p in "${packages[@]}"; do [ "$p" = "$drop" ] || kept+=("$p"); done
  echo "-- without $drop"
  if out=$(/usr/bin/python3 "$check" "$build" "${kept[@]}" 2>&1); then
    echo "$out"
    echo "FAIL: the check passed without $drop" >&2
    exit 1
  fi
  echo "$out"
  if ! grep -E "missing from install-deps: $drop .*$pattern" <<<"$out" >/dev/null; then
    echo "FAIL: the check did not name $drop with a file matching $pattern" >&2
    exit 1
  fi
}
expect_offender libcli11-dev 'CLI11Config\.cmake'
expect_offender libtbb-dev 'TBB'
# The package a clean machine lacked (oneDNN's CMake config needs OpenCL), when configure used it.
if grep -q '^OpenCL_LIBRARY:FILEPATH=/' "$build/CMakeCache.txt"; then
  expect_offender ocl-icd-opencl-dev 'libOpenCL'
fi
# --plot adds matplotlib (scripts/bench-plot) to the list and nothing else; a stray option is
# a usage error, not an install.
mapfile -t with_plot < <("$src/scripts/install-deps" --plot --list)
if [ "${with_plot[*]}" != "${packages[*]} python3-matplotlib" ]; then
  echo "FAIL: --plot --list gave: ${with_plot[*]}" >&2
  exit 1
fi
if "$src/scripts/install-deps" --no-such-option >/dev/null 2>&1; then
  echo "FAIL: install-deps accepted --no-such-option" >&2
  exit 1
else
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: --no-such-option exited $rc, expected 2" >&2; exit 1; }
fi
echo "install-deps guard: passes with the list, fails without each dropped package"
