#include "iotx/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace iotx {
namespace {

Expected<int> Half(int x) {
  if (x % 2 != 0) return Fail(ErrorCode::kInvalidArgument, "odd: " + std::to_string(x));
  return x / 2;
}

Expected<int> Quarter(int x) {
  IOTX_ASSIGN_OR_RETURN(int half, Half(x));
  IOTX_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckQuarter(int x) {
  IOTX_RETURN_IF_ERROR(Quarter(x));
  return Ok();
}

TEST(StatusTest, PropagatesTheFirstError) {
  EXPECT_EQ(Quarter(12).value(), 3);
  auto r = Quarter(6);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "odd: 3");
  EXPECT_TRUE(CheckQuarter(8));
  EXPECT_FALSE(CheckQuarter(5));
}

TEST(StatusTest, CodesAreStableAndUnique) {
  EXPECT_EQ(CodeName(ErrorCode::kDuplicateIoTranspose), "NCC_IIOT001");
  EXPECT_EQ(CodeName(ErrorCode::kForbiddenIoTranspose), "NCC_IIOT002");
  EXPECT_EQ(CodeName(ErrorCode::kNetlistRequired), "NCC_IHNW001");
  EXPECT_EQ(CodeName(ErrorCode::kReshapeSizeMismatch), "NCC_IHNW003");
  EXPECT_EQ(CodeName(ErrorCode::kJsonType), "IOTX_E103");
  std::set<std::string_view> names;
  for (ErrorCode c : AllErrorCodes()) {
    EXPECT_TRUE(names.insert(CodeName(c)).second) << CodeName(c) << " is used twice";
    EXPECT_FALSE(CodeSummary(c).empty());
  }
}

TEST(StatusTest, ToStringNamesFileElementAndKey) {
  Error e = Error(ErrorCode::kJsonType, "type must be number, but is string")
                .InFile("io_transposes.json")
                .AtElement(1)
                .AtKey("reshape");
  EXPECT_EQ(e.ToString(),
            "IOTX_E103 io_transposes.json: element 1, key \"reshape\": type must be number, "
            "but is string");
  EXPECT_EQ(Error(ErrorCode::kDuplicateIoTranspose, "Duplicate io_transpose found for input: p0")
                .ToString(),
            "NCC_IIOT001 Duplicate io_transpose found for input: p0");
  EXPECT_EQ(Error(ErrorCode::kIoOpen, "No such file").InFile("a.json").ToString(),
            "IOTX_E300 a.json: No such file");
}

}  // namespace
}  // namespace iotx
