#!/usr/bin/env bash
# Configures tests/subdirectory_consumer (add_subdirectory(iotx)) and lists what its default
# build would compile, without compiling it: only the library's sources and the consumer's own.
# Usage: run.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch"
cmake -S "$src/tests/subdirectory_consumer" -B "$scratch" -G Ninja \
  -DIOTX_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release >"$scratch.log" 2>&1 ||
  { cat "$scratch.log"; exit 1; }
# Every source file the default target would compile, relative to the iotx tree.
ninja -C "$scratch" -n all | sed -n 's/.*Building C\(XX\)\? object //p' >"$scratch.objects"
echo "the default build compiles $(wc -l <"$scratch.objects") files"
if grep -E '^iotx/(tools|tests|bench|fuzz|examples)/' "$scratch.objects"; then
  echo "FAIL: add_subdirectory(iotx) builds more than the library (above)" >&2
  exit 1
fi
# libiotx.so is core + files + kernels + schema + runtime: no file formats, HLO or producer code.
if grep -vE '^(CMakeFiles/consumer\.dir/|iotx/src/CMakeFiles/iotx\.dir/|iotx/src/(core|files|kernels|schema|runtime)/)' "$scratch.objects"; then
  echo "FAIL: add_subdirectory(iotx) compiles more than the runtime library's layers (above)" >&2
  exit 1
fi
grep -q 'CMakeFiles/consumer.dir/' "$scratch.objects" || { echo "FAIL: consumer not built" >&2; exit 1; }
grep -q 'iotx' "$scratch.objects" || { echo "FAIL: library not built" >&2; exit 1; }
for target in iotx_cli iotx_bench iotx_test_support; do
  if ninja -C "$scratch" -t targets all | grep -q "^$target:"; then
    echo "FAIL: target $target exists in a subdirectory build" >&2
    exit 1
  fi
done
echo "subdirectory consumer: library only"
