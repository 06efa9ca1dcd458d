#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs a separate project against it
# with find_package(iotx). Usage: run.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
if find "$scratch/prefix" -name '*.in' | grep .; then
  echo "FAIL: the install ships a template (above)" >&2
  exit 1
fi
cmake -S "$src/tests/install_consumer" -B "$scratch/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu"
"$scratch/build/consumer"
"$scratch/build/consumer_c"
"$scratch/prefix/bin/iotx" --version
