// The C API's argument checking and error objects (its happy path is also exercised by the
// C example, examples/feed_inputs.c).
#include "iotx/iotx.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

struct ErrorChecker {
  // Asserts `e` is an error with `code`, then frees it.
  static void Expect(iotx_error* e, const char* code) {
    ASSERT_NE(e, nullptr) << "expected " << code;
    EXPECT_STREQ(iotx_error_code(e), code) << iotx_error_message(e);
    EXPECT_GT(std::strlen(iotx_error_message(e)), 0u);
    iotx_error_free(e);
  }
};

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* json =
        R"([{"input_name": "w", "reshape": [6, 4], "transpose": [1, 0]}])";
    iotx_parameter params[2] = {{"w", w_dims_, 2, 4}, {"b", b_dims_, 1, 2}};
    iotx_error* e = iotx_transformer_from_json(json, std::strlen(json), params, 2, &t_);
    ASSERT_EQ(e, nullptr) << iotx_error_message(e);
  }
  void TearDown() override { iotx_transformer_free(t_); }

  int64_t w_dims_[2] = {4, 6};
  int64_t b_dims_[1] = {5};
  iotx_transformer* t_ = nullptr;
};

TEST_F(CApiTest, QueriesDescribeTheModel) {
  size_t n = 0;
  ASSERT_EQ(iotx_transformer_num_inputs(t_, &n), nullptr);
  EXPECT_EQ(n, 2u);
  int fed = 0;
  ASSERT_EQ(iotx_transformer_is_fed(t_, 0, &fed), nullptr);
  EXPECT_EQ(fed, 1);
  size_t bytes = 0;
  ASSERT_EQ(iotx_transformer_output_bytes(t_, 0, &bytes), nullptr);
  EXPECT_EQ(bytes, 96u);
  int64_t dims[4];
  size_t rank = 0;
  ASSERT_EQ(iotx_transformer_output_shape(t_, 0, dims, 4, &rank), nullptr);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 4);
  EXPECT_EQ(dims[1], 6);
  // Asking for the rank first with capacity 0 reports it with the error.
  rank = 0;
  ErrorChecker::Expect(iotx_transformer_output_shape(t_, 0, nullptr, 0, &rank), "IOTX_E401");
  EXPECT_EQ(rank, 2u);
}

TEST_F(CApiTest, ApplyMatchesTheReference) {
  std::vector<std::byte> src = RandomBytes(96, 1), dst(96);
  ASSERT_EQ(iotx_transformer_apply(t_, 0, src.data(), 96, dst.data(), 96), nullptr);
  const int64_t shape[] = {6, 4}, perm[] = {1, 0};
  EXPECT_EQ(dst, ReferenceTranspose(src.data(), shape, perm, 4));

  std::vector<std::byte> bsrc = RandomBytes(10, 2), bdst(10);
  const void* srcs[2] = {src.data(), bsrc.data()};
  void* dsts[2] = {dst.data(), bdst.data()};
  size_t sizes[2] = {96, 10};
  ASSERT_EQ(iotx_transformer_apply_all(t_, srcs, sizes, dsts, sizes, 2), nullptr);
  EXPECT_EQ(bdst, bsrc);
}

TEST_F(CApiTest, EveryFunctionRefusesBadArguments) {
  size_t n = 0;
  int fed = 0;
  size_t rank = 0;
  int64_t dims[4];
  std::vector<std::byte> buf(96), out(96);
  ErrorChecker::Expect(iotx_transformer_num_inputs(nullptr, &n), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_num_inputs(t_, nullptr), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_is_fed(t_, 2, &fed), "IOTX_E402");
  ErrorChecker::Expect(iotx_transformer_is_fed(nullptr, 0, &fed), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_is_fed(t_, 0, nullptr), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_output_bytes(t_, 9, &n), "IOTX_E402");
  ErrorChecker::Expect(iotx_transformer_output_bytes(t_, 0, nullptr), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_output_shape(t_, 0, dims, 4, nullptr), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_output_shape(t_, 0, nullptr, 4, &rank), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_apply(t_, 0, buf.data(), 95, out.data(), 96),
                       "IOTX_E401");
  ErrorChecker::Expect(iotx_transformer_apply(t_, 0, nullptr, 96, out.data(), 96), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_apply(t_, 7, buf.data(), 96, out.data(), 96),
                       "IOTX_E402");
  ErrorChecker::Expect(iotx_transformer_apply(nullptr, 0, buf.data(), 96, out.data(), 96),
                       "IOTX_E400");
  const void* srcs[2] = {buf.data(), buf.data()};
  void* dsts[2] = {out.data(), out.data()};
  size_t sizes[2] = {96, 10};
  ErrorChecker::Expect(iotx_transformer_apply_all(t_, srcs, sizes, dsts, sizes, 1), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_apply_all(t_, nullptr, sizes, dsts, sizes, 2),
                       "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_apply_all(t_, srcs, nullptr, dsts, sizes, 2),
                       "IOTX_E400");
  // Null error objects read as empty strings; freeing null is a no-op.
  EXPECT_STREQ(iotx_error_code(nullptr), "");
  EXPECT_STREQ(iotx_error_message(nullptr), "");
  iotx_error_free(nullptr);
  iotx_transformer_free(nullptr);
}

TEST(CApiBuildTest, ConstructorsRefuseBadArguments) {
  iotx_transformer* t = reinterpret_cast<iotx_transformer*>(0x1);
  int64_t dims[2] = {4, 6};
  iotx_parameter p = {"w", dims, 2, 4};
  ErrorChecker::Expect(iotx_transformer_from_json("[]", 2, &p, 1, nullptr), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_from_json(nullptr, 0, &p, 1, &t), "IOTX_E400");
  EXPECT_EQ(t, nullptr);  // *out is cleared on failure
  ErrorChecker::Expect(iotx_transformer_from_json("[]", 2, nullptr, 1, &t), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_from_json("{", 1, &p, 1, &t), "IOTX_E100");
  const char* mismatch = R"([{"input_name": "w", "reshape": [5, 5], "transpose": [1, 0]}])";
  ErrorChecker::Expect(iotx_transformer_from_json(mismatch, std::strlen(mismatch), &p, 1, &t),
                       "NCC_IHNW003");
  iotx_parameter bad_dims = {"w", nullptr, 2, 4};
  ErrorChecker::Expect(iotx_transformer_from_json("[]", 2, &bad_dims, 1, &t), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_from_attributes(nullptr, "", "", &p, 1, &t), "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_from_attributes("1", nullptr, "", &p, 1, &t),
                       "IOTX_E400");
  ErrorChecker::Expect(iotx_transformer_from_attributes("1", "4,6|1", "w", &p, 1, &t),
                       "IOTX_E110");

  ASSERT_EQ(iotx_transformer_from_attributes("1", "4,6|1,0", nullptr, &p, 1, &t), nullptr);
  size_t n = 0;
  ASSERT_EQ(iotx_transformer_num_inputs(t, &n), nullptr);
  EXPECT_EQ(n, 1u);
  iotx_transformer_free(t);
}

}  // namespace
}  // namespace iotx::test
