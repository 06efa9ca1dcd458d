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
# The Python module, when the build has it: imported from the prefix, not the build tree.
module=$(find "$scratch/prefix" -name '_iotx*.so' | head -1)
if [[ -n $module ]]; then
  site=$(dirname "$(dirname "$module")")
  PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "${IOTX_PYTHON:-/usr/bin/python3}" - "$scratch/prefix" <<'PY'
import sys
import numpy as np
import iotx
assert iotx.__file__.startswith(sys.argv[1]), iotx.__file__
a = np.arange(12, dtype=np.float32).reshape(3, 4)
assert np.array_equal(iotx.apply(a, [3, 4], [1, 0]), a.T)
print("python module", iotx.__version__, "from the prefix:", iotx.simplify([6144, 256], [3, 16, 128, 2, 2, 64], [0, 4, 5, 3, 1, 2]))
PY
fi
