// SpecMap, ValidateSpec, CheckElementCount, CheckInputName (SPEC section 1).
#include "iotx/spec.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace iotx {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace spec_test {

TransposeSpec Spec(Dims reshape, Dims transpose) {
  return {std::move(reshape), std::move(transpose)};
}

TEST(SpecMapTest, KeepsInsertionOrderAndTheFirstSpecOfAName) {
  SpecMap map;
  EXPECT_TRUE(map.TryEmplace("z", Spec({2, 3}, {1, 0})));
  EXPECT_TRUE(map.TryEmplace("a", Spec({6}, {0})));
  EXPECT_FALSE(map.TryEmplace("z", Spec({6}, {0})));
  ASSERT_EQ(map.size(), 2u);
  EXPECT_EQ(map.entries()[0].input_name, "z");
  EXPECT_EQ(map.entries()[1].input_name, "a");
  ASSERT_NE(map.Find("z"), nullptr);
  EXPECT_EQ(*map.Find("z"), Spec({2, 3}, {1, 0}));
  EXPECT_EQ(map.Find("missing"), nullptr);
  EXPECT_TRUE(map.Contains("a"));
}

TEST(SpecMapTest, ReplaceKeepsThePosition) {
  SpecMap map;
  map.TryEmplace("x", Spec({2, 3}, {1, 0}));
  map.TryEmplace("y", Spec({4}, {0}));
  EXPECT_TRUE(map.Replace("x", Spec({6}, {0})));
  EXPECT_FALSE(map.Replace("nope", Spec({6}, {0})));
  EXPECT_EQ(map.entries()[0].input_name, "x");
  EXPECT_EQ(*map.Find("x"), Spec({6}, {0}));
}

TEST(ValidateSpecTest, AcceptsPermutationsOfAnyRank) {
  EXPECT_TRUE(ValidateSpec(Spec({}, {})));
  EXPECT_TRUE(ValidateSpec(Spec({3, 2048, 2, 128}, {0, 3, 2, 1})));
  EXPECT_TRUE(ValidateSpec(Spec({0, 5}, {1, 0})));
  // Rank 8 spills out of the inline slots and is still a valid spec.
  EXPECT_TRUE(ValidateSpec(Spec({1, 2, 1, 2, 1, 2, 1, 2}, {7, 6, 5, 4, 3, 2, 1, 0})));
}

TEST(ValidateSpecTest, RejectsNonPermutations) {
  for (const TransposeSpec& bad :
       {Spec({2, 3}, {0, 0}), Spec({2, 3}, {0, 2}), Spec({2, 3}, {-1, 0}), Spec({2, 3}, {0}),
        Spec({2, 3}, {0, 1, 2}), Spec({}, {0})}) {
    const Status s = ValidateSpec(bad);
    ASSERT_FALSE(s) << ToString(bad.transpose);
    EXPECT_EQ(s.error().code, ErrorCode::kNotPermutation);
    EXPECT_NE(s.error().message.find(ToString(bad.transpose)), std::string::npos);
  }
}

TEST(ValidateSpecTest, RejectsNegativeDimsAndOverflow) {
  Status s = ValidateSpec(Spec({4, -1}, {0, 1}));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kNegativeDim);
  EXPECT_NE(s.error().message.find("-1"), std::string::npos);

  s = ValidateSpec(Spec({int64_t{1} << 32, int64_t{1} << 32}, {0, 1}));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kDimOverflow);

  s = ValidateSpec(Spec({std::numeric_limits<int64_t>::max(), 1}, {1, 0}));
  EXPECT_TRUE(s);
}

TEST(CheckSpecFitsTest, ComparesTheProductAndNamesBothShapes) {
  const int64_t example[] = {6144, 256};
  EXPECT_TRUE(CheckSpecFits(Spec({3, 2048, 2, 128}, {0, 3, 2, 1}), example, "p0"));
  const int64_t thirteen[] = {13};
  const Status s = CheckSpecFits(Spec({3, 4}, {1, 0}), thirteen, "w");
  ASSERT_FALSE(s);
  EXPECT_EQ(CodeName(s.error().code), "NCC_IHNW003");
  EXPECT_EQ(s.error().key, "w");
  EXPECT_EQ(s.error().message,
            "Reshape size mismatch for input: w: illegal static io reshape from [13] to [3, 4] "
            "(the tensor holds 13 elements, the reshape 12)");
  const int64_t empty[] = {0, 5};
  EXPECT_TRUE(CheckSpecFits(Spec({0, 7}, {0, 1}), empty, ""));
  // An invalid spec keeps ValidateSpec's code.
  EXPECT_EQ(CheckSpecFits(Spec({2, 3}, {0, 0}), example, "").error().code,
            ErrorCode::kNotPermutation);
}

TEST(CheckInputNameTest, RejectsNamesThatCouldEscapeAFileName) {
  for (const std::string& bad :
       {std::string(""), std::string("."), std::string(".."), std::string("a/b"),
        std::string("/abs"), std::string("a\\b"), std::string("nul\0x", 5), std::string("../up")}) {
    const Status s = CheckInputName(bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::kUnsafeName);
  }
}

TEST(CheckInputNameTest, AcceptsOtherOddNames) {
  for (const char* ok :
       {"p0", "weight_7", "...", ".hidden", "a b", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "tab\there",
        "line\nbreak", "quote\"", "ctl\x01", "-dash", "a:b*c?"}) {
    EXPECT_TRUE(CheckInputName(ok)) << ok;
  }
}

}  // namespace spec_test
}  // namespace iotx
