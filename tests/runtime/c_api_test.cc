// The C API: every function with good, NULL and hostile arguments, the error objects, the
// options structs' ABI rules, and ranges against whole outputs (its happy path is also
// exercised by the C programs examples/feed_inputs.c and tests/install_consumer/consumer_c.c).
#include "iotx/iotx.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "iotx/status.h"
#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

// Asserts `e` is an error with `code`, then frees it.
void ExpectError(iotx_error* e, const char* code) {
  ASSERT_NE(e, nullptr) << "expected " << code;
  EXPECT_STREQ(iotx_error_code(e), code) << iotx_error_message(e);
  const std::string message = iotx_error_message(e);
  EXPECT_FALSE(message.empty());
  EXPECT_LE(message.size(), size_t{IOTX_MAX_MESSAGE_BYTES});
  // The message never repeats the code (callers print "%s: %s").
  EXPECT_EQ(message.find(code), std::string::npos) << message;
  // The value and the string agree: IOTX_Ennn = nnn, NCC_IIOTnnn = 1000+, NCC_IHNWnnn = 1100+.
  const int value = iotx_error_enum(e);
  char expected[32];
  if (value >= 1100) {
    std::snprintf(expected, sizeof expected, "NCC_IHNW%03d", value - 1100);
  } else if (value >= 1000) {
    std::snprintf(expected, sizeof expected, "NCC_IIOT%03d", value - 1000);
  } else {
    std::snprintf(expected, sizeof expected, "IOTX_E%03d", value);
  }
  EXPECT_STREQ(iotx_error_code(e), expected);
  iotx_error_free(e);
}

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
  const char* name = nullptr;
  ASSERT_EQ(iotx_transformer_input_name(t_, 1, &name), nullptr);
  EXPECT_STREQ(name, "b");
  int flag = -1;
  ASSERT_EQ(iotx_transformer_is_fed(t_, 0, &flag), nullptr);
  EXPECT_EQ(flag, 1);
  ASSERT_EQ(iotx_transformer_has_transpose(t_, 0, &flag), nullptr);
  EXPECT_EQ(flag, 1);
  ASSERT_EQ(iotx_transformer_has_transpose(t_, 1, &flag), nullptr);
  EXPECT_EQ(flag, 0);
  ASSERT_EQ(iotx_transformer_changes_layout(t_, 0, &flag), nullptr);
  EXPECT_EQ(flag, 1);
  ASSERT_EQ(iotx_transformer_changes_layout(t_, 1, &flag), nullptr);
  EXPECT_EQ(flag, 0);
  size_t bytes = 0;
  ASSERT_EQ(iotx_transformer_output_bytes(t_, 0, &bytes), nullptr);
  EXPECT_EQ(bytes, 96u);
  size_t rank = 0;
  ASSERT_EQ(iotx_transformer_output_rank(t_, 0, &rank), nullptr);
  EXPECT_EQ(rank, 2u);
  int64_t dims[4];
  ASSERT_EQ(iotx_transformer_output_shape(t_, 0, dims, 4, &rank), nullptr);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 4);
  EXPECT_EQ(dims[1], 6);
  // Asking for the rank first with capacity 0 reports it with the error.
  rank = 0;
  ExpectError(iotx_transformer_output_shape(t_, 0, nullptr, 0, &rank), "IOTX_E401");
  EXPECT_EQ(rank, 2u);
  size_t granule = 0;
  ASSERT_EQ(iotx_transformer_range_granule(t_, 0, &granule), nullptr);
  EXPECT_GE(granule, 1u);
  size_t ignored = 9;
  ASSERT_EQ(iotx_transformer_num_ignored_specs(t_, &ignored), nullptr);
  EXPECT_EQ(ignored, 0u);
}

TEST_F(CApiTest, DescribeIsSnprintfShaped) {
  size_t length = 0;
  ASSERT_EQ(iotx_transformer_describe(t_, nullptr, 0, &length), nullptr);
  ASSERT_GT(length, 0u);
  std::vector<char> text(length + 1, 'x');
  size_t again = 0;
  ASSERT_EQ(iotx_transformer_describe(t_, text.data(), text.size(), &again), nullptr);
  EXPECT_EQ(again, length);
  EXPECT_EQ(std::strlen(text.data()), length);
  EXPECT_NE(std::string(text.data()).find("input 0 \"w\": [4, 6] x 4 B -> reshape [6, 4]"),
            std::string::npos)
      << text.data();
  EXPECT_NE(std::string(text.data()).find("strategy:"), std::string::npos);
  // A short buffer gets a NUL-terminated prefix and the full length.
  char small[8];
  ASSERT_EQ(iotx_transformer_describe(t_, small, sizeof small, &again), nullptr);
  EXPECT_EQ(again, length);
  EXPECT_EQ(std::string(small), std::string(text.data(), 7));
  char one[1] = {'x'};
  ASSERT_EQ(iotx_transformer_describe(t_, one, 1, &again), nullptr);
  EXPECT_EQ(one[0], '\0');
}

TEST_F(CApiTest, ApplyMatchesTheReference) {
  std::vector<std::byte> src = RandomBytes(96, 1), dst(96);
  ASSERT_EQ(iotx_transformer_apply(t_, 0, src.data(), 96, dst.data(), 96), nullptr);
  const int64_t shape[] = {6, 4}, perm[] = {1, 0};
  const std::vector<std::byte> want = ReferenceTranspose(src.data(), shape, perm, 4);
  EXPECT_EQ(dst, want);

  std::vector<std::byte> bsrc = RandomBytes(10, 2), bdst(10);
  const void* srcs[2] = {src.data(), bsrc.data()};
  void* dsts[2] = {dst.data(), bdst.data()};
  size_t sizes[2] = {96, 10};
  ASSERT_EQ(iotx_transformer_apply_all(t_, srcs, sizes, dsts, sizes, 2), nullptr);
  EXPECT_EQ(bdst, bsrc);

  // The calling thread only, and a cap.
  iotx_apply_options options = IOTX_APPLY_OPTIONS_INIT;
  options.max_threads = 1;
  std::fill(dst.begin(), dst.end(), std::byte{0});
  ASSERT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 96, &options), nullptr);
  EXPECT_EQ(dst, want);
  options.max_threads = 2;
  ASSERT_EQ(iotx_transformer_apply_all_ex(t_, srcs, sizes, dsts, sizes, 2, &options), nullptr);
  EXPECT_EQ(dst, want);
  ASSERT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 96, nullptr), nullptr);
}

TEST_F(CApiTest, RangesEqualTheWholeOutput) {
  std::vector<std::byte> src = RandomBytes(96, 3), whole(96);
  ASSERT_EQ(iotx_transformer_apply(t_, 0, src.data(), 96, whole.data(), 96), nullptr);
  // Every split of the 96 bytes into two ranges, and every 5-byte window.
  for (size_t cut = 0; cut <= 96; ++cut) {
    std::vector<std::byte> a(cut + 1), b(96 - cut + 1);
    iotx_apply_options o = IOTX_APPLY_OPTIONS_INIT;
    o.flags = IOTX_APPLY_RANGE;
    o.range_offset = 0;
    o.range_length = cut;
    ASSERT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, a.data(), cut, &o), nullptr);
    o.range_offset = cut;
    o.range_length = 96 - cut;
    ASSERT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, b.data(), 96 - cut, &o), nullptr);
    EXPECT_TRUE(std::equal(whole.begin(), whole.begin() + cut, a.begin())) << cut;
    EXPECT_TRUE(std::equal(whole.begin() + cut, whole.end(), b.begin())) << cut;
  }
  for (size_t off = 0; off + 5 <= 96; ++off) {
    std::vector<std::byte> w(5);
    iotx_apply_options o = IOTX_APPLY_OPTIONS_INIT;
    o.flags = IOTX_APPLY_RANGE;
    o.range_offset = off;
    o.range_length = 5;
    o.max_threads = 1;
    ASSERT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, w.data(), 5, &o), nullptr);
    EXPECT_TRUE(std::equal(w.begin(), w.end(), whole.begin() + off)) << off;
  }
}

TEST_F(CApiTest, EveryFunctionRefusesBadArguments) {
  size_t n = 0;
  int flag = 0;
  size_t rank = 0;
  int64_t dims[4];
  const char* name = nullptr;
  std::vector<std::byte> buf(96), out(96);
  for (size_t bad : {size_t{2}, size_t{1000}, SIZE_MAX}) {
    ExpectError(iotx_transformer_input_name(t_, bad, &name), "IOTX_E402");
    ExpectError(iotx_transformer_is_fed(t_, bad, &flag), "IOTX_E402");
    ExpectError(iotx_transformer_has_transpose(t_, bad, &flag), "IOTX_E402");
    ExpectError(iotx_transformer_changes_layout(t_, bad, &flag), "IOTX_E402");
    ExpectError(iotx_transformer_output_bytes(t_, bad, &n), "IOTX_E402");
    ExpectError(iotx_transformer_output_rank(t_, bad, &n), "IOTX_E402");
    ExpectError(iotx_transformer_output_shape(t_, bad, dims, 4, &rank), "IOTX_E402");
    ExpectError(iotx_transformer_range_granule(t_, bad, &n), "IOTX_E402");
    ExpectError(iotx_transformer_ignored_spec(t_, bad, &name), "IOTX_E402");
    ExpectError(iotx_transformer_apply(t_, bad, buf.data(), 96, out.data(), 96), "IOTX_E402");
  }
  ExpectError(iotx_transformer_num_inputs(nullptr, &n), "IOTX_E400");
  ExpectError(iotx_transformer_num_inputs(t_, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_input_name(nullptr, 0, &name), "IOTX_E400");
  ExpectError(iotx_transformer_input_name(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_is_fed(nullptr, 0, &flag), "IOTX_E400");
  ExpectError(iotx_transformer_is_fed(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_has_transpose(nullptr, 0, &flag), "IOTX_E400");
  ExpectError(iotx_transformer_has_transpose(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_changes_layout(nullptr, 0, &flag), "IOTX_E400");
  ExpectError(iotx_transformer_changes_layout(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_output_bytes(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_output_bytes(nullptr, 0, &n), "IOTX_E400");
  ExpectError(iotx_transformer_output_rank(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_output_rank(nullptr, 0, &n), "IOTX_E400");
  ExpectError(iotx_transformer_output_shape(t_, 0, dims, 4, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_output_shape(t_, 0, nullptr, 4, &rank), "IOTX_E400");
  ExpectError(iotx_transformer_output_shape(nullptr, 0, dims, 4, &rank), "IOTX_E400");
  ExpectError(iotx_transformer_range_granule(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_range_granule(nullptr, 0, &n), "IOTX_E400");
  ExpectError(iotx_transformer_num_ignored_specs(nullptr, &n), "IOTX_E400");
  ExpectError(iotx_transformer_num_ignored_specs(t_, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_ignored_spec(nullptr, 0, &name), "IOTX_E400");
  ExpectError(iotx_transformer_ignored_spec(t_, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_ignored_spec(t_, 0, &name), "IOTX_E402");  // none ignored
  ExpectError(iotx_transformer_describe(nullptr, nullptr, 0, &n), "IOTX_E400");
  ExpectError(iotx_transformer_describe(t_, nullptr, 0, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_describe(t_, nullptr, 5, &n), "IOTX_E400");
  ExpectError(iotx_transformer_apply(t_, 0, buf.data(), 95, out.data(), 96), "IOTX_E401");
  ExpectError(iotx_transformer_apply(t_, 0, nullptr, 96, out.data(), 96), "IOTX_E400");
  ExpectError(iotx_transformer_apply(nullptr, 0, buf.data(), 96, out.data(), 96), "IOTX_E400");
  const void* srcs[2] = {buf.data(), buf.data()};
  void* dsts[2] = {out.data(), out.data()};
  size_t sizes[2] = {96, 10};
  ExpectError(iotx_transformer_apply_all(t_, srcs, sizes, dsts, sizes, 1), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all(t_, nullptr, sizes, dsts, sizes, 2), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all(t_, srcs, nullptr, dsts, sizes, 2), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all(t_, srcs, sizes, nullptr, sizes, 2), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all(t_, srcs, sizes, dsts, nullptr, 2), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all(nullptr, srcs, sizes, dsts, sizes, 2), "IOTX_E400");
  // dsts[0] == dsts[1] (sizes 96 and 10): refused although each input alone is fine.
  ExpectError(iotx_transformer_apply_all(t_, srcs, sizes, dsts, sizes, 2), "IOTX_E400");
  ExpectError(iotx_transformer_apply_all_ex(nullptr, srcs, sizes, dsts, sizes, 2, nullptr),
              "IOTX_E400");
  // Null error objects read as empty strings and IOTX_OK; freeing null is a no-op.
  EXPECT_STREQ(iotx_error_code(nullptr), "");
  EXPECT_STREQ(iotx_error_message(nullptr), "");
  EXPECT_EQ(iotx_error_enum(nullptr), IOTX_OK);
  iotx_error_free(nullptr);
  iotx_transformer_free(nullptr);
}

TEST_F(CApiTest, OptionsStructsFollowTheirAbiRules) {
  std::vector<std::byte> src = RandomBytes(96, 1), dst(96);
  iotx_apply_options o = IOTX_APPLY_OPTIONS_INIT;
  auto apply = [&](const iotx_apply_options* options) {
    return iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 96, options);
  };
  o.struct_size = 0;  // not initialized
  ExpectError(apply(&o), "IOTX_E400");
  o.struct_size = sizeof(size_t);  // shorter than any version of the struct
  ExpectError(apply(&o), "IOTX_E400");
  o.struct_size = 1 << 20;  // garbage
  ExpectError(apply(&o), "IOTX_E400");
  // A newer caller's larger struct: fine while the fields this version does not know are 0.
  struct Newer {
    iotx_apply_options known;
    uint64_t future_field;
  } newer = {IOTX_APPLY_OPTIONS_INIT, 0};
  newer.known.struct_size = sizeof(Newer);
  EXPECT_EQ(apply(&newer.known), nullptr);
  newer.future_field = 1;
  ExpectError(apply(&newer.known), "IOTX_E403");
  o = IOTX_APPLY_OPTIONS_INIT;
  o.flags = 0x80;  // unknown flag
  ExpectError(apply(&o), "IOTX_E400");
  // Ranges: the destination must be the range's size, the range inside the output.
  o = IOTX_APPLY_OPTIONS_INIT;
  o.flags = IOTX_APPLY_RANGE;
  o.range_offset = 10;
  o.range_length = 20;
  ExpectError(apply(&o), "IOTX_E401");  // dst_size 96 != 20
  EXPECT_EQ(iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 20, &o), nullptr);
  o.range_offset = 90;
  ExpectError(iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 20, &o), "IOTX_E401");
  o.range_offset = SIZE_MAX;
  ExpectError(iotx_transformer_apply_ex(t_, 0, src.data(), 96, dst.data(), 20, &o), "IOTX_E401");
  o.range_offset = 0;
  ExpectError(iotx_transformer_apply_ex(t_, 0, src.data(), 96, src.data() + 10, 20, &o),
              "IOTX_E400");  // inside the source
  const void* srcs[2] = {src.data(), src.data()};
  void* dsts[2] = {dst.data(), dst.data() + 96 - 10};
  size_t sizes[2] = {96, 10};
  std::vector<std::byte> b(10);
  dsts[1] = b.data();
  ExpectError(iotx_transformer_apply_all_ex(t_, srcs, sizes, dsts, sizes, 2, &o), "IOTX_E400");
  o.flags = 0;
  EXPECT_EQ(iotx_transformer_apply_all_ex(t_, srcs, sizes, dsts, sizes, 2, &o), nullptr);

  iotx_build_options bo = IOTX_BUILD_OPTIONS_INIT;
  iotx_transformer* t = nullptr;
  int64_t d[1] = {3};
  iotx_parameter p = {"x", d, 1, 4};
  bo.struct_size = 3;
  ExpectError(iotx_transformer_from_json_ex("[]", 2, &p, 1, &bo, &t), "IOTX_E400");
  bo = IOTX_BUILD_OPTIONS_INIT;
  bo.flags = 0x10;
  ExpectError(iotx_transformer_from_json_ex("[]", 2, &p, 1, &bo, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes_ex("1", "", "", &p, 1, &bo, &t), "IOTX_E400");
  bo.struct_size = 0;
  bo.flags = 0;
  ExpectError(iotx_transformer_from_attributes_ex("1", "", "", &p, 1, &bo, &t), "IOTX_E400");
  EXPECT_EQ(t, nullptr);
  // The runtime's own threads: the transformer works the same (built without starting any).
  bo = IOTX_BUILD_OPTIONS_INIT;
  bo.flags = IOTX_BUILD_CALLER_THREADS | IOTX_BUILD_IGNORE_UNMATCHED_SPECS;
  ASSERT_EQ(iotx_transformer_from_attributes_ex("1", "3|0", "x", &p, 1, &bo, &t), nullptr);
  std::vector<std::byte> x = RandomBytes(12, 4), y(12);
  ASSERT_EQ(iotx_transformer_apply(t, 0, x.data(), 12, y.data(), 12), nullptr);
  EXPECT_EQ(x, y);
  iotx_transformer_free(t);
}

TEST(CApiBuildTest, ConstructorsRefuseBadArguments) {
  iotx_transformer* t = reinterpret_cast<iotx_transformer*>(0x1);
  int64_t dims[2] = {4, 6};
  iotx_parameter p = {"w", dims, 2, 4};
  ExpectError(iotx_transformer_from_json("[]", 2, &p, 1, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_from_json(nullptr, 0, &p, 1, &t), "IOTX_E400");
  EXPECT_EQ(t, nullptr);  // *out is cleared on failure
  ExpectError(iotx_transformer_from_json("[]", 2, nullptr, 1, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_json("{", 1, &p, 1, &t), "IOTX_E100");
  const char* mismatch = R"([{"input_name": "w", "reshape": [5, 5], "transpose": [1, 0]}])";
  ExpectError(iotx_transformer_from_json(mismatch, std::strlen(mismatch), &p, 1, &t),
              "NCC_IHNW003");
  iotx_parameter bad_dims = {"w", nullptr, 2, 4};
  ExpectError(iotx_transformer_from_json("[]", 2, &bad_dims, 1, &t), "IOTX_E400");
  // A hostile rank is refused before its dims are read.
  iotx_parameter deep = {"w", dims, SIZE_MAX, 4};
  ExpectError(iotx_transformer_from_json("[]", 2, &deep, 1, &t), "IOTX_E403");
  ExpectError(iotx_transformer_from_attributes("1", "", "", &deep, 1, &t), "IOTX_E403");
  int64_t negative[2] = {4, -6};
  iotx_parameter neg = {"w", negative, 2, 4};
  ExpectError(iotx_transformer_from_json("[]", 2, &neg, 1, &t), "IOTX_E111");
  iotx_parameter no_elem = {"w", dims, 2, 0};
  ExpectError(iotx_transformer_from_json("[]", 2, &no_elem, 1, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes(nullptr, "", "", &p, 1, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes("1", nullptr, "", &p, 1, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes("1", "", "", &p, 1, nullptr), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes("1", "", "", nullptr, 1, &t), "IOTX_E400");
  ExpectError(iotx_transformer_from_attributes("1", "4,6|1", "w", &p, 1, &t), "IOTX_E110");
  ExpectError(iotx_transformer_from_attributes("1", "4,6|1,0;", "w", &p, 1, &t), "IOTX_E121");

  ASSERT_EQ(iotx_transformer_from_attributes("1", "4,6|1,0", nullptr, &p, 1, &t), nullptr);
  size_t n = 0;
  ASSERT_EQ(iotx_transformer_num_inputs(t, &n), nullptr);
  EXPECT_EQ(n, 1u);
  iotx_transformer_free(t);
}

TEST(CApiBuildTest, ZeroSizedParametersAreNotFed) {
  int64_t zero[2] = {0, 5};
  iotx_parameter p = {"z", zero, 2, 4};
  iotx_transformer* t = nullptr;
  ExpectError(iotx_transformer_from_attributes("1", "", "", &p, 1, &t), "IOTX_E400");
  ASSERT_EQ(iotx_transformer_from_attributes("0", "", "", &p, 1, &t), nullptr);
  int fed = 1;
  ASSERT_EQ(iotx_transformer_is_fed(t, 0, &fed), nullptr);
  EXPECT_EQ(fed, 0);
  iotx_transformer_free(t);
}

TEST(CApiBuildTest, JsonSizeIsTheDocument) {
  int64_t dims[2] = {4, 6};
  iotx_parameter p = {"w", dims, 2, 4};
  iotx_transformer* t = nullptr;
  const std::string good = R"([{"input_name": "w", "reshape": [6, 4], "transpose": [1, 0]}])";
  ASSERT_EQ(iotx_transformer_from_json(good.data(), good.size(), &p, 1, &t), nullptr);
  iotx_transformer_free(t);
  t = nullptr;
  // A NUL and more bytes after the document, within json_size.
  std::string nul_then_more = good + std::string(1, '\0') + "garbage";
  ExpectError(iotx_transformer_from_json(nul_then_more.data(), nul_then_more.size(), &p, 1, &t),
              "IOTX_E100");
  // The terminating NUL counted in json_size (strlen + 1).
  ExpectError(iotx_transformer_from_json(good.c_str(), good.size() + 1, &p, 1, &t), "IOTX_E100");
  // Trailing garbage, and a second document.
  std::string trailing = good + " x";
  ExpectError(iotx_transformer_from_json(trailing.data(), trailing.size(), &p, 1, &t),
              "IOTX_E100");
  std::string two = good + good;
  ExpectError(iotx_transformer_from_json(two.data(), two.size(), &p, 1, &t), "IOTX_E100");
  // A NUL inside a string is refused the same way.
  std::string in_string = R"([{"input_name": "w)";
  in_string.push_back('\0');
  in_string += R"(", "reshape": [6, 4], "transpose": [1, 0]}])";
  ExpectError(iotx_transformer_from_json(in_string.data(), in_string.size(), &p, 1, &t),
              "IOTX_E100");
  EXPECT_EQ(t, nullptr);
}

TEST(CApiBuildTest, UnmatchedSpecNamesAreAnErrorUnlessIgnored) {
  const std::string json =
      R"([{"input_name": "w", "reshape": [6, 4], "transpose": [1, 0]},)"
      R"( {"input_name": "ghost", "reshape": [2], "transpose": [0]}])";
  int64_t dims[2] = {4, 6};
  iotx_parameter p = {"w", dims, 2, 4};
  iotx_transformer* t = nullptr;
  iotx_error* e = iotx_transformer_from_json(json.data(), json.size(), &p, 1, &t);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(iotx_error_enum(e), IOTX_E117);
  EXPECT_NE(std::string(iotx_error_message(e)).find("\"ghost\""), std::string::npos);
  iotx_error_free(e);
  EXPECT_EQ(t, nullptr);

  iotx_build_options options = IOTX_BUILD_OPTIONS_INIT;
  options.flags = IOTX_BUILD_IGNORE_UNMATCHED_SPECS;
  ASSERT_EQ(iotx_transformer_from_json_ex(json.data(), json.size(), &p, 1, &options, &t),
            nullptr);
  size_t ignored = 0;
  ASSERT_EQ(iotx_transformer_num_ignored_specs(t, &ignored), nullptr);
  ASSERT_EQ(ignored, 1u);
  const char* name = nullptr;
  ASSERT_EQ(iotx_transformer_ignored_spec(t, 0, &name), nullptr);
  EXPECT_STREQ(name, "ghost");
  ExpectError(iotx_transformer_ignored_spec(t, 1, &name), "IOTX_E402");
  iotx_transformer_free(t);
}

TEST(CApiErrorTest, MessagesDoNotRepeatTheCodeAndAreBounded) {
  int64_t dims[1] = {4};
  iotx_parameter p = {nullptr, dims, 1, 4};
  iotx_transformer* t = nullptr;
  // The documented pattern prints the code once.
  iotx_error* e = iotx_transformer_from_attributes("1", "4|0;", "", &p, 1, &t);
  ASSERT_NE(e, nullptr);
  char line[2048];
  std::snprintf(line, sizeof line, "%s: %s", iotx_error_code(e), iotx_error_message(e));
  EXPECT_EQ(std::string(line).find("IOTX_E121"), 0u);
  EXPECT_EQ(std::string(line).find("IOTX_E121", 1), std::string::npos) << line;
  EXPECT_NE(std::string(line).find("key \"required_transpose\""), std::string::npos) << line;
  iotx_error_free(e);
  // A 1 MiB required_transpose is not echoed whole.
  std::string huge(1 << 20, '1');
  e = iotx_transformer_from_attributes("1", (huge + "|0").c_str(), "", &p, 1, &t);
  ASSERT_NE(e, nullptr);
  EXPECT_LE(std::strlen(iotx_error_message(e)), size_t{IOTX_MAX_MESSAGE_BYTES});
  iotx_error_free(e);
  // Nor a 1 MiB name.
  std::string long_name(1 << 20, 'n');
  iotx_parameter named = {long_name.c_str(), dims, 1, 0};
  ExpectError(iotx_transformer_from_json("[]", 2, &named, 1, &t), "IOTX_E400");
}

TEST(CApiErrorTest, CodesAsValues) {
  static_assert(IOTX_OK == 0);
  static_assert(IOTX_E100 == 100 && IOTX_E400 == 400 && IOTX_E901 == 901);
  static_assert(NCC_IIOT001 == 1001 && NCC_IHNW003 == 1103);
  for (ErrorCode code : AllErrorCodes()) {
    // Every C++ code's value is what its string says (the C enum is the same list).
    const std::string_view name = CodeName(code);
    const int value = static_cast<int>(code);
    const int digits = std::stoi(std::string(name.substr(name.size() - 3)));
    const int base = name.starts_with("NCC_IHNW") ? 1100 : name.starts_with("NCC_IIOT") ? 1000 : 0;
    EXPECT_EQ(value, base + digits) << name;
  }
}

TEST(CApiVersionTest, HeaderAndLibraryAgree) {
  EXPECT_EQ(iotx_version(), unsigned{IOTX_VERSION_NUMBER});
  EXPECT_STREQ(iotx_version_string(), IOTX_VERSION_STRING);
  EXPECT_EQ(IOTX_VERSION_NUMBER,
            IOTX_VERSION_MAJOR * 10000 + IOTX_VERSION_MINOR * 100 + IOTX_VERSION_PATCH);
}

}  // namespace
}  // namespace iotx::test
