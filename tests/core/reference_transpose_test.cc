// The reference itself is checked against numpy so every other test can trust it.
#include "support/reference_transpose.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "support/process.h"

namespace iotx::test {
namespace {

TEST(ReferenceTransposeTest, HandWorked2D) {
  const int32_t src[6] = {0, 1, 2, 3, 4, 5};  // [[0,1,2],[3,4,5]]
  const int64_t shape[2] = {2, 3};
  const int64_t perm[2] = {1, 0};
  auto out = ReferenceTranspose(src, shape, perm, sizeof(int32_t));
  int32_t got[6];
  std::memcpy(got, out.data(), sizeof(got));
  const int32_t want[6] = {0, 3, 1, 4, 2, 5};
  EXPECT_EQ(std::memcmp(got, want, sizeof(want)), 0);
}

TEST(ReferenceTransposeTest, MatchesNumpyOn4D) {
  if (!PythonHasNumpy()) GTEST_SKIP() << "numpy not available";
  const int64_t shape[4] = {2, 3, 4, 5};
  const int64_t perm[4] = {2, 0, 3, 1};
  std::vector<uint16_t> src(120);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 7 + 1);
  auto out = ReferenceTranspose(src.data(), shape, perm, sizeof(uint16_t));
  auto py = RunPython(
      "import sys, numpy as np\n"
      "a = (np.arange(120, dtype=np.uint16) * 7 + 1).reshape(2, 3, 4, 5)\n"
      "sys.stdout.buffer.write(np.ascontiguousarray(a.transpose(2, 0, 3, 1)).tobytes())\n");
  ASSERT_EQ(py.exit_code, 0) << py.err;
  ASSERT_EQ(py.out.size(), out.size());
  EXPECT_EQ(std::memcmp(py.out.data(), out.data(), out.size()), 0);
}

}  // namespace
}  // namespace iotx::test
