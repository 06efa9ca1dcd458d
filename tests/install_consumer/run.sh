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
# The runtime library exports the C API and the iotx namespace, nothing of the compiler side.
lib=$(find "$scratch/prefix" -name 'libiotx.so' | head -1)
exports=$(nm -D --defined-only -C "$lib" | awk '{ $1 = ""; $2 = ""; print }')
if grep -iE 'producer|pickle|npy|safetensors|protobuf|google::|hlo' <<<"$exports"; then
  echo "FAIL: $lib exports compiler-side symbols (above)" >&2
  exit 1
fi
if grep -vE '^ +(iotx::|iotx_|typeinfo( name)? for iotx::|vtable for iotx::)' <<<"$exports"; then
  echo "FAIL: $lib exports symbols outside the iotx namespace and C API (above)" >&2
  exit 1
fi
echo "libiotx.so exports $(wc -l <<<"$exports") symbols, all iotx:: or iotx_"
cmake -S "$src/tests/install_consumer" -B "$scratch/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
export LD_LIBRARY_PATH="$scratch/prefix/lib:$scratch/prefix/lib/x86_64-linux-gnu"
"$scratch/build/consumer"
"$scratch/build/consumer_c"
"$scratch/prefix/bin/iotx" --version
