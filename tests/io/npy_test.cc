// .npy header parsing and malformed files (no numpy needed): every bad file gets a clear error.
#include "io/npy.h"
#include "tensor_bytes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "io/py_literal.h"

namespace iotx::io {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace npy_test {

using ::testing::HasSubstr;

// A .npy file of the given version with `header` as dict text (not padded) and `data`.
std::string NpyBytes(const std::string& header, const std::string& data, int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) {
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  }
  return out + header + data;
}

Expected<Tensor> Parse(const std::string& file) {
  // The result views its input: a copy owned by the result keeps it valid.
  auto owner = std::make_shared<const std::string>(file);
  return ParseNpy(std::as_bytes(std::span<const char>(owner->data(), owner->size())), owner,
                  "t.npy");
}

void ExpectError(const std::string& file, ErrorCode code, const std::string& fragment) {
  auto r = Parse(file);
  ASSERT_FALSE(r) << "parsed: " << file;
  EXPECT_EQ(r.error().code, code) << r.error().ToString();
  EXPECT_THAT(r.error().ToString(), HasSubstr(fragment));
  EXPECT_EQ(r.error().file, "t.npy");
}

TEST(NpyTest, AcceptsAnyKeyOrderQuotingAndSpacing) {
  std::string data(24, '\x01');
  for (const std::string header : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
           "{\"shape\": (2,3), \"descr\": \"<f4\", \"fortran_order\": False}",
           "{ 'fortran_order' : False ,'shape':(2 , 3 ,),'descr':u'<f4' }\n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }          \n",
       }) {
    auto r = Parse(NpyBytes(header, data));
    ASSERT_TRUE(r) << header << ": " << r.error().ToString();
    EXPECT_EQ(r->descr, "<f4");
    EXPECT_EQ(r->element_size(), 4u);
    EXPECT_EQ(ToString(r->shape), "[2, 3]");
    EXPECT_EQ(r->byte_size(), 24u);
  }
}

TEST(NpyTest, ScalarAndOneDimensionalShapes) {
  auto scalar = Parse(
      NpyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': ()}", std::string(8, '\0')));
  ASSERT_TRUE(scalar);
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->byte_size(), 8u);
  auto vec = Parse(NpyBytes("{'descr': '|u1', 'fortran_order': True, 'shape': (5,)}", "abcde"));
  ASSERT_TRUE(vec);
  EXPECT_EQ(ToString(vec->shape), "[5]");
  EXPECT_EQ(test::COrderBytes(*vec), "abcde");
}

TEST(NpyTest, FortranOrderIsDescribedAndReachesCOrder) {
  // A 2x3 array of bytes stored column by column: a d b e c f -> rows "abc", "def".
  const std::string file =
      NpyBytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3)}", "adbecf");
  auto r = Parse(file);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->is_c_order());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->stored.data()), 6), "adbecf")
      << "reading converts nothing: the tensor views the file's bytes";
  EXPECT_EQ(test::COrderBytes(*r), "abcdef");
}

TEST(NpyTest, BigEndianIsRelabeledAndSwappedWhenConverted) {
  auto r = Parse(NpyBytes("{'descr': '>u2', 'fortran_order': False, 'shape': (2,)}",
                          std::string("\x01\x02\x03\x04", 4)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->descr, "<u2");
  EXPECT_EQ(r->layout.swap_unit, 2u);
  EXPECT_EQ(test::COrderBytes(*r), std::string("\x02\x01\x04\x03", 4));
}

TEST(NpyTest, VersionsTwoAndThreeUseAFourByteLength) {
  const std::string header = "{'descr': '<i2', 'fortran_order': False, 'shape': (1,)}";
  for (int major : {2, 3}) {
    auto r = Parse(NpyBytes(header, "xy", major));
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->byte_size(), 2u);
  }
  ExpectError(
      NpyBytes("{'descr': '<i2', 'fortran_order': False, 'shape': (1,), 'x\xff': 1}", "xy", 3),
      ErrorCode::kNpyFormat, "not valid UTF-8");
}

TEST(NpyTest, RejectsWrongMagicAndVersions) {
  ExpectError("", ErrorCode::kNpyFormat, "not a .npy file");
  ExpectError("\x93NUMPZ\x01\x00", ErrorCode::kNpyFormat, "not a .npy file");
  ExpectError("PK\x03\x04 zip file", ErrorCode::kNpyFormat, "not a .npy file");
  std::string v4 = NpyBytes("{}", "");
  v4[6] = 4;
  ExpectError(v4, ErrorCode::kNpyUnsupported, "format version 4.0");
  std::string v11 = NpyBytes("{}", "");
  v11[7] = 1;
  ExpectError(v11, ErrorCode::kNpyUnsupported, "format version 1.1");
}

TEST(NpyTest, RejectsTruncatedAndOversizedFiles) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}";
  ExpectError(NpyBytes(header, std::string(15, 'x')), ErrorCode::kNpyFormat,
              "truncated: shape [4] of '<f4' needs 16 data bytes, the file has 15");
  ExpectError(NpyBytes(header, std::string(17, 'x')), ErrorCode::kNpyFormat,
              "trailing bytes: shape [4] of '<f4' needs 16 data bytes, the file has 17");
  std::string cut = NpyBytes(header, "").substr(0, 40);
  ExpectError(cut, ErrorCode::kNpyFormat, "runs past the end of the file");
  ExpectError(std::string("\x93NUMPY\x02\x00\x01", 9), ErrorCode::kNpyFormat,
              "ends inside the header");
  // A lying 4-byte length (4 GiB) is refused before anything is read or allocated.
  std::string lying = NpyBytes(header, "", 2);
  lying[11] = '\xff';
  ExpectError(lying, ErrorCode::kNpyUnsupported, "at most 1 MiB");
}

TEST(NpyTest, RejectsShapesWhoseByteCountOverflows) {
  ExpectError(NpyBytes("{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (4611686018427387904, 4)}",
                       ""),
              ErrorCode::kDimOverflow, "overflows");
  ExpectError(NpyBytes("{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (2305843009213693952,)}",
                       ""),
              ErrorCode::kDimOverflow, "overflows");
  ExpectError(NpyBytes("{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (99999999999999999999,)}",
                       ""),
              ErrorCode::kNpyFormat, "does not fit in 64 bits");
}

TEST(NpyTest, RejectsBadHeaderDicts) {
  struct Case {
    std::string header;
    ErrorCode code;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"['descr', '<f4']", ErrorCode::kNpyFormat, "header is a list, expected a dict"},
      {"{'descr': '<f4', 'shape': ()}", ErrorCode::kNpyFormat,
       "t.npy: header lacks the key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", ErrorCode::kNpyFormat,
       "t.npy: header key \"extra\" is unexpected"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
       ErrorCode::kNpyFormat, "t.npy: header key \"descr\" is repeated"},
      {"{1: '<f4'}", ErrorCode::kNpyFormat, "key is an integer"},
      {"{'descr': 4, 'fortran_order': False, 'shape': ()}", ErrorCode::kNpyFormat,
       "t.npy: header key \"descr\" is an integer, expected a string"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': ()}", ErrorCode::kNpyUnsupported,
       "header key \"descr\" names type \"|O\", which is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", ErrorCode::kNpyUnsupported,
       "structured dtypes"},
      {"{'descr': '|V0', 'fortran_order': False, 'shape': ()}", ErrorCode::kNpyUnsupported,
       "nonzero size"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", ErrorCode::kNpyFormat,
       "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", ErrorCode::kNpyFormat,
       "t.npy: header key \"shape\" is a list, expected a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}", ErrorCode::kNpyFormat,
       "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}", ErrorCode::kNpyFormat,
       "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}", ErrorCode::kNpyFormat,
       "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", ErrorCode::kNpyFormat,
       "expected ',' or closing bracket"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", ErrorCode::kNpyFormat,
       "unexpected end of header"},
      {"{'descr': '<f4, 'fortran_order': False}", ErrorCode::kNpyFormat, "expected ','"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", ErrorCode::kNpyFormat,
       "unexpected text after the literal"},
      {"{'descr': __import__('os').system('true')}", ErrorCode::kNpyFormat,
       "unexpected character '_'"},
      {std::string(100, '(') + std::string(100, ')'), ErrorCode::kNpyFormat,
       "nested deeper than 32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    ExpectError(NpyBytes(c.header, ""), c.code, c.fragment);
  }
}

// Issue 18 item 13: a loader puts the tensor's name on the error as its key; the message
// still says which header key is wrong.
TEST(NpyTest, HeaderKeyErrorsNameTheHeaderKeyUnderTheCallersKey) {
  auto r = Parse(NpyBytes("{'descr': 4, 'fortran_order': False, 'shape': ()}", ""));
  ASSERT_FALSE(r);
  EXPECT_EQ(std::move(r).error().AtKey("weights").ToString(),
            "IOTX_E200 t.npy: key \"weights\": header key \"descr\" is an integer, expected a "
            "string");
}

TEST(NpyTest, RefusesTooManyDimensions) {
  std::string shape = "(";
  for (int i = 0; i < 65; ++i) shape += "1,";
  ExpectError(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ")}", "abcd"),
              ErrorCode::kNpyUnsupported, "65 dimensions, at most 64");
  std::vector<int64_t> dims(65, 1);
  auto header = MakeNpyHeader("<f4", dims);
  ASSERT_FALSE(header);
  EXPECT_EQ(header.error().code, ErrorCode::kNpyUnsupported);
}

TEST(NpyTest, WriterRefusesWhatNumpyCouldNotReadBack) {
  for (const char* descr : {"", "f", "<f", "|O8", "<f4'", "float32", "<V0", "[('a','<f4')]"}) {
    auto header = MakeNpyHeader(descr, std::vector<int64_t>{2});
    ASSERT_FALSE(header) << descr;
    EXPECT_EQ(header.error().code, ErrorCode::kNpyUnsupported);
  }
  auto negative = MakeNpyHeader("<f4", std::vector<int64_t>{2, -3});
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code, ErrorCode::kNegativeDim);
}

TEST(NpyTest, WriteNpyChecksTheDataSize) {
  std::string bytes(15, 'x');
  const Tensor tensor = test::ViewTensor("t", "<f4", 4, {2, 2}, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  auto status = WriteNpy("/nonexistent-dir/never-written.npy", tensor);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kBufferSize);
}

TEST(PyLiteralTest, ParsesPythonLiteralForms) {
  auto r = ParsePyLiteral(" ( 1 , -2, +3 ,) ");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->kind, PyLiteral::Kind::kTuple);
  ASSERT_EQ(r->items.size(), 3u);
  EXPECT_EQ(r->items[1].integer, -2);
  EXPECT_EQ(ParsePyLiteral("(7)")->kind, PyLiteral::Kind::kInt);  // parentheses, no tuple
  EXPECT_EQ(ParsePyLiteral("()")->items.size(), 0u);
  EXPECT_EQ(ParsePyLiteral("[7]")->kind, PyLiteral::Kind::kList);
  EXPECT_EQ(ParsePyLiteral("'a\\'b\\x41\\\\'")->str, "a'bA\\");
  EXPECT_EQ(ParsePyLiteral("\"it's\"")->str, "it's");
  EXPECT_EQ(ParsePyLiteral("None")->kind, PyLiteral::Kind::kNone);
  EXPECT_TRUE(ParsePyLiteral("True")->boolean);
  EXPECT_FALSE(ParsePyLiteral("False")->boolean);
  EXPECT_EQ(ParsePyLiteral("-9223372036854775808")->integer, INT64_MIN);
  EXPECT_FALSE(ParsePyLiteral("9223372036854775808"));
  EXPECT_FALSE(ParsePyLiteral("007"));
  EXPECT_EQ(ParsePyLiteral("000")->integer, 0);
  EXPECT_FALSE(ParsePyLiteral("Truex"));
  EXPECT_FALSE(ParsePyLiteral("'unterminated"));
  EXPECT_FALSE(ParsePyLiteral("'\\q'"));
  EXPECT_FALSE(ParsePyLiteral("(1,,)"));
  EXPECT_FALSE(ParsePyLiteral(""));
}

TEST(PyLiteralTest, BoundsTheNumberOfValues) {
  std::string many = "(";
  for (int i = 0; i < 5000; ++i) many += "0,";
  auto r = ParsePyLiteral(many + ")");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("more than 4096 values"));
}

}  // namespace npy_test
}  // namespace iotx::io
