// Runs the C example (examples/feed_inputs.c) and checks each printed output hash against
// numpy computing the same layout from the same byte pattern.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

// Recomputes the example's output lines with numpy: params are (name, shape, itemsize, spec).
const char* kNumpyModel = R"PY(
import json, sys
import numpy as np
params = json.loads(sys.argv[1])
for k, (name, shape, itemsize, spec) in enumerate(params):
    n = int(np.prod(shape, dtype=np.int64)) * itemsize
    raw = ((np.arange(n, dtype=np.uint64) * 31 + 7 * k) % 256).astype(np.uint8)
    a = raw.view(np.dtype(('V', itemsize))).reshape(shape)
    if spec is not None:
        a = np.ascontiguousarray(np.transpose(a.reshape(spec[0]), spec[1]))
    h = 0xcbf29ce484222325
    for b in a.tobytes():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    fed = 0 if n == 0 else 1
    dims = ",".join(str(d) for d in a.shape)
    print(f"{k} {name} fed={fed} shape=[{dims}] bytes={n} fnv1a={h:016x}")
)PY";

TEST(FeedInputsExampleTest, JsonAndAttributeModesMatchNumpy) {
  if (!PythonHasNumpy()) GTEST_SKIP() << "numpy not available";
  TempDir dir;
  WriteFile(dir / "io_transposes.json",
            R"([{"input_name": "p0", "reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]},)"
            R"( {"input_name": "w", "reshape": [24, 32], "transpose": [1, 0]}])");
  auto py = RunPython(kNumpyModel,
                      {R"([["p0", [6144, 256], 2, [[3, 2048, 2, 128], [0, 3, 2, 1]]],)"
                       R"( ["w", [24, 32], 4, [[24, 32], [1, 0]]],)"
                       R"( ["z", [0, 5], 4, null], ["bias", [7], 8, null]])"});
  ASSERT_EQ(py.exit_code, 0) << py.err;

  auto json_run = RunProcess({IOTX_FEED_INPUTS_PATH, "json", dir / "io_transposes.json",
                              "p0:6144x256:2", "w:24x32:4", "z:0x5:4", "bias:7:8"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  EXPECT_EQ(json_run.out, py.out);

  auto attrs_run = RunProcess({IOTX_FEED_INPUTS_PATH, "attrs", "1,1,0,1",
                               "3,2048,2,128|0,3,2,1;24,32|1,0;;", "p0,w,z,bias",
                               "p0:6144x256:2", "w:24x32:4", "z:0x5:4", "bias:7:8"});
  ASSERT_EQ(attrs_run.exit_code, 0) << attrs_run.err;
  EXPECT_EQ(attrs_run.out, py.out);

  // Fed in ranges of an odd size (inside elements, across rows): the same bytes.
  auto chunked_run = RunProcess({IOTX_FEED_INPUTS_PATH, "--chunk", "1001", "attrs", "1,1,0,1",
                                 "3,2048,2,128|0,3,2,1;24,32|1,0;;", "p0,w,z,bias",
                                 "p0:6144x256:2", "w:24x32:4", "z:0x5:4", "bias:7:8"});
  ASSERT_EQ(chunked_run.exit_code, 0) << chunked_run.err;
  EXPECT_EQ(chunked_run.out, py.out);
}

TEST(FeedInputsExampleTest, ReportsErrorsWithTheirCode) {
  auto run = RunProcess({IOTX_FEED_INPUTS_PATH, "attrs", "1", "5,5|1,0", "w", "w:4x6:4"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("NCC_IHNW003"), std::string::npos) << run.err;
  // The code is printed once: the message does not repeat it.
  EXPECT_EQ(run.err.find("NCC_IHNW003", run.err.find("NCC_IHNW003") + 1), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace iotx::test
