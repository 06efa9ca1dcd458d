#include "iotx/dtype.h"

#include <gtest/gtest.h>

namespace iotx {
namespace {

TEST(DTypeTest, SizesAndNames) {
  EXPECT_EQ(ElementSize(DType::kF32), 4u);
  EXPECT_EQ(ElementSize(DType::kBF16), 2u);
  EXPECT_EQ(ElementSize(DType::kI8), 1u);
  EXPECT_EQ(ElementSize(DType::kF64), 8u);
  EXPECT_EQ(ElementSize(DType::kC128), 16u);
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
}

TEST(DTypeTest, ParsesShortLongAndXlaSpellings) {
  EXPECT_EQ(ParseDType("f32").value(), DType::kF32);
  EXPECT_EQ(ParseDType("float32").value(), DType::kF32);
  EXPECT_EQ(ParseDType("BF16").value(), DType::kBF16);
  EXPECT_EQ(ParseDType("bfloat16").value(), DType::kBF16);
  EXPECT_EQ(ParseDType("s8").value(), DType::kI8);
  EXPECT_EQ(ParseDType("pred").value(), DType::kBool);
  for (DType d : AllDTypes()) EXPECT_EQ(ParseDType(DTypeName(d)).value(), d);
}

TEST(DTypeTest, UnknownNameListsTheKnownOnes) {
  auto r = ParseDType("f33");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnknownDType);
  EXPECT_NE(r.error().message.find("'f33'"), std::string::npos);
  EXPECT_NE(r.error().message.find("bf16"), std::string::npos);
}

}  // namespace
}  // namespace iotx
