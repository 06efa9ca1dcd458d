// safetensors header validation on hand-built files (no Python needed).
#include "io/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "support/temp_dir.h"
#include "tensor_bytes.h"

namespace iotx::io {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace safetensors_test {

using ::testing::HasSubstr;

// 8-byte little-endian length, the header as given (unpadded), then `data`.
std::string File(const std::string& header, const std::string& data) {
  std::string out;
  for (size_t i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

Expected<SafetensorsFile> Parse(const std::string& file) {
  // The result views its input: a copy owned by the result keeps it valid.
  auto owner = std::make_shared<const std::string>(file);
  return ParseSafetensors(std::as_bytes(std::span<const char>(owner->data(), owner->size())), owner,
                          "m.safetensors");
}

void ExpectError(const std::string& file, const std::string& fragment,
                 const std::string& key = "") {
  auto r = Parse(file);
  ASSERT_FALSE(r) << "parsed: " << file;
  EXPECT_EQ(r.error().code, ErrorCode::kSafetensorsFormat) << r.error().ToString();
  EXPECT_THAT(r.error().message, HasSubstr(fragment));
  EXPECT_EQ(r.error().key, key) << r.error().ToString();
  EXPECT_EQ(r.error().file, "m.safetensors");
}

std::string Tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

TEST(SafetensorsTest, ReadsTensorsInOffsetOrderWithMetadata) {
  std::string header = std::string("{") + Tensor("b", "U8", "[3]", 8, 11) +
                       ",\"__metadata__\":{\"z\":\"1\",\"a\":\"\"}," +
                       Tensor("a", "F32", "[2]", 0, 8) + "," +
                       Tensor("e", "F16", "[0, 4]", 11, 11) +
                       ", \"s\" : {\"shape\": [], \"data_offsets\": [11, 13], \"dtype\": \"BF16\", "
                       "\"extra\": {\"ignored\": [1, {\"x\": null}]}}}   ";
  std::string data = "AAAABBBBxyzQQ";
  auto r = Parse(File(header, data));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->tensors.size(), 4u);
  EXPECT_EQ(r->tensors[0].name, "a");
  EXPECT_EQ(r->tensors[0].dtype, "F32");
  EXPECT_EQ(ToString(r->tensors[0].shape), "[2]");
  EXPECT_EQ(test::COrderBytes(r->tensors[0]), "AAAABBBB");
  EXPECT_EQ(r->tensors[1].name, "b");
  EXPECT_EQ(test::COrderBytes(r->tensors[1]), "xyz");
  EXPECT_EQ(r->tensors[2].name, "e");
  EXPECT_TRUE(r->tensors[2].stored.empty());
  EXPECT_EQ(r->tensors[3].name, "s");
  EXPECT_TRUE(r->tensors[3].shape.empty());
  ASSERT_TRUE(r->metadata);
  ASSERT_EQ(r->metadata->size(), 2u);
  EXPECT_EQ((*r->metadata)[0], (std::pair<std::string, std::string>{"z", "1"}));
  EXPECT_EQ((*r->metadata)[1], (std::pair<std::string, std::string>{"a", ""}));
}

TEST(SafetensorsTest, EmptyHeaderAndNullMetadata) {
  auto empty = Parse(File("{}", ""));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->tensors.empty());
  EXPECT_FALSE(empty->metadata);
  auto null_metadata = Parse(File("{\"__metadata__\":null}", ""));
  ASSERT_TRUE(null_metadata);
  EXPECT_FALSE(null_metadata->metadata);
}

TEST(SafetensorsTest, RejectsBadLengthsAndEncodings) {
  ExpectError("", "too short for the 8-byte header length");
  ExpectError(std::string("\x02\0\0\0\0\0\0", 7), "too short");
  std::string huge = File("{}", "");
  huge[3] = 0x10;  // 268 MB
  ExpectError(huge, "exceeds the limit of 100000000 bytes");
  std::string past = File("{}", "");
  past[0] = 9;
  ExpectError(past, "header length 9 runs past the end of the 10-byte file");
  ExpectError(File("{\"\xff\":1}", ""), "header is not valid UTF-8");
  ExpectError(File("{\"a\":", ""), "not valid JSON");
  ExpectError(File("{} {}", ""), "not valid JSON");
  ExpectError(File("[]", ""), "header: is an array, expected a JSON object");
  ExpectError(File("7", ""), "is a number, expected a JSON object");
}

TEST(SafetensorsTest, RejectsDuplicateKeys) {
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[1]", 0, 1) + "," +
                       Tensor("a", "U8", "[1]", 1, 2) + "}",
                   "xy"),
              "key \"a\" appears twice", "a");
  ExpectError(File("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", ""), "key \"k\" appears twice",
              "__metadata__");
  // A field repeated within a tensor's entry names the tensor.
  ExpectError(
      File("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", "x"),
      "key \"dtype\" appears twice", "a");
}

TEST(SafetensorsTest, RejectsMalformedEntries) {
  ExpectError(File("{\"__metadata__\":{\"k\":1}}", ""), "__metadata__ value is a number", "k");
  ExpectError(File("{\"__metadata__\":[\"k\"]}", ""), "__metadata__ is an array");
  ExpectError(File("{\"t\":5}", ""), "tensor entry is a number, expected an object", "t");
  ExpectError(File("{\"t\":{\"shape\":[1],\"data_offsets\":[0,1]}}", "x"), "tensor lacks \"dtype\"",
              "t");
  ExpectError(File("{\"t\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", "x"),
              "tensor lacks \"shape\"", "t");
  ExpectError(File(std::string("{") + Tensor("t", "Q8", "[1]", 0, 1) + "}", "x"),
              "unknown dtype \"Q8\"; expected one of BOOL, F4", "t");
  ExpectError(File(std::string("{") + Tensor("t", "U8", "[-1]", 0, 1) + "}", "x"),
              "shape holds a negative number", "t");
  ExpectError(File(std::string("{") + Tensor("t", "U8", "[1.5]", 0, 1) + "}", "x"),
              "shape holds a non-integer number", "t");
  ExpectError(File(std::string("{") + Tensor("t", "U8", "[\"1\"]", 0, 1) + "}", "x"),
              "shape holds a string", "t");
  ExpectError(File("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", "x"),
              "data_offsets must be [begin, end]", "t");
  ExpectError(File("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", "x"),
              "data_offsets must be [begin, end]", "t");
  ExpectError(File("{\"t\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,1]}}", "x"),
              "\"dtype\" is a number, expected a string", "t");
  std::string shape = "[";
  for (int i = 0; i < 65; ++i) shape += i ? ",1" : "1";
  ExpectError(File(std::string("{") + Tensor("t", "U8", shape + "]", 0, 1) + "}", "x"),
              "shape has more than 64 dimensions", "t");
  ExpectError(File(std::string("{") + Tensor("t", "U8", "[18446744073709551615]", 0, 1) + "}", "x"),
              "shape dimension 18446744073709551615 exceeds 2^63 - 1", "t");
  std::string deep = std::string(70, '[') + std::string(70, ']');
  ExpectError(File("{\"t\":{\"extra\":" + deep + "}}", ""), "nested deeper than 64");
}

TEST(SafetensorsTest, RejectsOffsetsThatDoNotTileTheBuffer) {
  // A gap before the first tensor.
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[2]", 1, 3) + "}", "xyz"),
              "data_offsets [1, 3] should start at 0", "a");
  // Overlap.
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[2]", 0, 2) + "," +
                       Tensor("b", "U8", "[2]", 1, 3) + "}",
                   "xyz"),
              "data_offsets [1, 3] should start at 2", "b");
  // end < begin.
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[0]", 0, 0) + "," +
                       Tensor("b", "U8", "[2]", 2, 0) + "}",
                   "xy"),
              "should start at 0", "b");
  // Size not matching dtype x shape.
  ExpectError(File(std::string("{") + Tensor("a", "F32", "[2]", 0, 6) + "}", "xxxxxx"),
              "data_offsets [0, 6] hold 6 bytes, but shape [2] of F32 needs 8", "a");
  // Sub-byte dtypes must fill whole bytes.
  ExpectError(File(std::string("{") + Tensor("a", "F4", "[3]", 0, 2) + "}", "xx"),
              "not a whole number of bytes", "a");
  // Shape whose byte count overflows.
  ExpectError(File(std::string("{") + Tensor("a", "F64", "[4611686018427387904,4]", 0, 8) + "}",
                   "xxxxxxxx"),
              "overflows the byte count", "a");
  // Truncated data, and data left over.
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[4]", 0, 4) + "}", "xyz"), "truncated",
              "a");
  ExpectError(File(std::string("{") + Tensor("a", "U8", "[2]", 0, 2) + "}", "xyz"),
              "tensors end at data byte 2, but the file has 3 data bytes");
  // Offsets beyond 64 bits are not integers to the parser.
  ExpectError(File("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],"
                   "\"data_offsets\":[0,99999999999999999999]}}",
                   ""),
              "data_offsets holds a non-integer number", "a");
}

TEST(SafetensorsTest, AcceptsSubByteDtypesFillingWholeBytes) {
  auto r = Parse(File(std::string("{") + Tensor("f4", "F4", "[2,3]", 0, 3) + "," +
                          Tensor("f6", "F6_E2M3", "[4]", 3, 6) + "}",
                      "abcdef"));
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->tensors[0].stored.size(), 3u);
  EXPECT_EQ(r->tensors[1].stored.size(), 3u);
}

TEST(SafetensorsTest, DTypeTables) {
  EXPECT_EQ(SafetensorsDTypeBits("F4"), 4u);
  EXPECT_EQ(SafetensorsDTypeBits("BF16"), 16u);
  EXPECT_EQ(SafetensorsDTypeBits("f32"), std::nullopt);
  EXPECT_EQ(DTypeFromSafetensors("F8_E4M3").value(), DType::kF8E4M3FN);
  EXPECT_EQ(DTypeFromSafetensors("BOOL").value(), DType::kBool);
  EXPECT_FALSE(DTypeFromSafetensors("F4"));
  for (DType dtype : AllDTypes()) {
    auto name = SafetensorsDTypeName(dtype);
    if (dtype == DType::kC128) {
      EXPECT_FALSE(name);
      continue;
    }
    ASSERT_TRUE(name) << DTypeName(dtype);
    EXPECT_EQ(DTypeFromSafetensors(*name).value(), dtype);
    EXPECT_EQ(SafetensorsDTypeBits(*name).value(), ElementSize(dtype) * 8);
  }
}

TEST(SafetensorsTest, WriterRefusesBadInput) {
  test::TempDir dir;
  std::string bytes = "abcd";
  auto data = std::as_bytes(std::span<const char>(bytes.data(), bytes.size()));
  struct Case {
    std::vector<io::Tensor> tensors;
    ErrorCode code;
  };
  auto view = [&data](std::string name, std::string dtype, Dims shape) {
    return test::SafetensorsView(std::move(name), std::move(dtype), std::move(shape), data);
  };
  std::vector<Case> cases = {
      {{view("a", "U8", {4}), view("a", "U8", {4})}, ErrorCode::kInvalidArgument},
      {{view("__metadata__", "U8", {4})}, ErrorCode::kInvalidArgument},
      {{view("a", "u8", {4})}, ErrorCode::kInvalidArgument},
      {{view("\xff", "U8", {4})}, ErrorCode::kInvalidArgument},
      {{view("a", "F4", {3})}, ErrorCode::kInvalidArgument},
      {{view("a", "U8", {-4})}, ErrorCode::kNegativeDim},
      {{view("a", "U8", {5})}, ErrorCode::kBufferSize},
  };
  for (const Case& c : cases) {
    auto status = WriteSafetensors(dir / "out.safetensors", c.tensors, std::nullopt);
    ASSERT_FALSE(status) << c.tensors[0].name;
    EXPECT_EQ(status.error().code, c.code) << status.error().ToString();
  }
  auto bad_metadata =
      WriteSafetensors(dir / "out.safetensors", {}, SafetensorsMetadata{{"k", "\xc3"}});
  ASSERT_FALSE(bad_metadata);
  EXPECT_EQ(bad_metadata.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir / "out.safetensors"));
}

}  // namespace safetensors_test
}  // namespace iotx::io
