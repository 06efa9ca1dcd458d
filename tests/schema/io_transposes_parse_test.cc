// ParseIoTransposes / ValidateIoTransposes: every check and message of SPEC section 1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "iotx/io_transposes.h"
#include "schema/netlist.h"

namespace iotx {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace io_transposes_parse_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kFile = "sg00/io_transposes.json";

Error ParseError(const std::string& text) {
  const Expected<IoTransposes> parsed = ParseIoTransposes(text, kFile);
  EXPECT_FALSE(parsed) << text;
  return parsed ? Error() : parsed.error();
}

TEST(ParseIoTransposesTest, ReadsTheSourceExampleInOrder) {
  const auto parsed = ParseIoTransposes(
      R"([ { "input_name": "p0", "reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1] },
           { "input_name": "weight_7", "reshape": [768, 768], "transpose": [1, 0],
             "extra": {"ignored": true} } ])",
      kFile);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  ASSERT_EQ(parsed->specs.size(), 2u);
  EXPECT_EQ(parsed->specs.entries()[0].input_name, "p0");
  EXPECT_EQ(parsed->specs.entries()[0].spec.reshape, (Dims{3, 2048, 2, 128}));
  EXPECT_EQ(parsed->specs.entries()[0].spec.transpose, (Dims{0, 3, 2, 1}));
  EXPECT_EQ(parsed->specs.entries()[1].input_name, "weight_7");
  EXPECT_EQ(parsed->specs.entries()[1].spec.transpose, (Dims{1, 0}));
  EXPECT_TRUE(parsed->warnings.empty());
}

TEST(ParseIoTransposesTest, EmptyArrayIsAnEmptyMap) {
  const auto parsed = ParseIoTransposes("[]", kFile);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->specs.empty());
}

TEST(ParseIoTransposesTest, MissingKeysNameTheKeyElementAndFile) {
  struct Case {
    const char* text;
    const char* message;
    const char* key;
  };
  for (const Case& c : {
           Case{R"([{"reshape": [1], "transpose": [0]}])", "input_name not found in json",
                "input_name"},
           Case{R"([{"input_name": "a", "transpose": [0]}])", "reshape not found in json",
                "reshape"},
           Case{R"([{"input_name": "a", "reshape": [1]}])", "transpose not found in json",
                "transpose"},
       }) {
    const Error e = ParseError(
        std::string(R"([{"input_name": "ok", "reshape": [], "transpose": []},)") + (c.text + 1));
    EXPECT_EQ(e.code, ErrorCode::kJsonMissingKey);
    EXPECT_EQ(e.message, c.message);
    EXPECT_EQ(e.key, c.key);
    EXPECT_EQ(e.element, 1);
    EXPECT_EQ(e.file, kFile);
  }
}

TEST(ParseIoTransposesTest, NonIntegersAreTypeErrorsEvenWhenNlohmannWouldConvert) {
  struct Case {
    const char* value;
    const char* type;
  };
  for (const Case& c : {Case{"\"3\"", "string"}, Case{"true", "boolean"}, Case{"null", "null"},
                        Case{"2.0", "float"}, Case{"2.5", "float"}, Case{"1e3", "float"},
                        Case{"[3]", "array"}, Case{"{}", "object"}}) {
    const Error e = ParseError(std::string(R"([{"input_name": "a", "reshape": [2, )") + c.value +
                               R"(], "transpose": [0, 1]}])");
    EXPECT_EQ(e.code, ErrorCode::kJsonType) << c.value;
    EXPECT_THAT(e.message, HasSubstr(std::string("type must be number, but is ") + c.type));
    EXPECT_EQ(e.key, "reshape");
    EXPECT_EQ(e.element, 0);
  }
  const Error string_dim =
      ParseError(R"([{"input_name": "a", "reshape": ["3"], "transpose": [0]}])");
  EXPECT_EQ(string_dim.message, "type must be number, but is string");
  EXPECT_EQ(string_dim.ToString(),
            "IOTX_E103 sg00/io_transposes.json: element 0, key \"reshape\": "
            "type must be number, but is string");
}

TEST(ParseIoTransposesTest, WrongContainerTypes) {
  Error e = ParseError(R"([{"input_name": 7, "reshape": [1], "transpose": [0]}])");
  EXPECT_EQ(e.code, ErrorCode::kJsonType);
  EXPECT_EQ(e.message, "type must be string, but is number");
  EXPECT_EQ(e.key, "input_name");

  e = ParseError(R"([{"input_name": "a", "reshape": "3,4", "transpose": [1, 0]}])");
  EXPECT_EQ(e.message, "type must be array, but is string");
  EXPECT_EQ(e.key, "reshape");

  e = ParseError(R"([{"input_name": "a", "reshape": [1], "transpose": null}])");
  EXPECT_EQ(e.message, "type must be array, but is null");
  EXPECT_EQ(e.key, "transpose");

  e = ParseError(R"([{"input_name": "a", "reshape": [1], "transpose": [0]}, 5])");
  EXPECT_EQ(e.code, ErrorCode::kJsonType);
  EXPECT_THAT(e.message, HasSubstr("type must be object, but is number"));
  EXPECT_EQ(e.element, 1);
}

TEST(ParseIoTransposesTest, TopLevelObjectSaysItMustBeAnArray) {
  Error e = ParseError(R"({"p0": {"reshape": [3, 4], "transpose": [1, 0]}})");
  EXPECT_EQ(e.code, ErrorCode::kJsonTopLevel);
  EXPECT_THAT(e.message, HasSubstr("must be a JSON array"));
  EXPECT_THAT(e.message, HasSubstr("keyed by input name"));
  EXPECT_THAT(e.message, HasSubstr("most common mistake"));
  EXPECT_THAT(e.message, HasSubstr(R"("input_name": "p0")"));
  EXPECT_EQ(e.element, -1);

  e = ParseError(R"({"input_name": "p0", "reshape": [3, 4], "transpose": [1, 0]})");
  EXPECT_THAT(e.message, HasSubstr("must be a JSON array"));
  EXPECT_THAT(e.message, HasSubstr("single element"));
  EXPECT_THAT(e.message, Not(HasSubstr("keyed by input name")));

  for (const char* other : {"\"text\"", "42", "null", "true", "{}"}) {
    e = ParseError(other);
    EXPECT_EQ(e.code, ErrorCode::kJsonTopLevel) << other;
    EXPECT_THAT(e.message, HasSubstr("must be a JSON array"));
  }
}

TEST(ParseIoTransposesTest, MalformedJsonGivesLineAndColumn) {
  const Error e = ParseError("[\n  {\"input_name\": \"a\",\n   \"reshape\": [1,, 2]}\n]");
  EXPECT_EQ(e.code, ErrorCode::kJsonSyntax);
  EXPECT_THAT(e.message, HasSubstr("line 3, column "));
  EXPECT_EQ(e.file, kFile);
  for (const char* bad :
       {"", "[", "[1,]", "[{\"a\" 1}]", "[] []", "[\"\xff\"]", "[NaN]", "[1e400]"}) {
    const Error syntax = ParseError(bad);
    EXPECT_EQ(syntax.code, ErrorCode::kJsonSyntax) << bad;
    EXPECT_THAT(syntax.message, HasSubstr("line ")) << bad;
  }
}

TEST(ParseIoTransposesTest, HugeAndNegativeNumbers) {
  Error e =
      ParseError(R"([{"input_name": "a", "reshape": [99999999999999999999], "transpose": [0]}])");
  EXPECT_EQ(e.code, ErrorCode::kJsonTooLarge);
  EXPECT_THAT(e.message, HasSubstr("does not fit in int64"));
  EXPECT_EQ(e.key, "reshape");

  e = ParseError(R"([{"input_name": "a", "reshape": [9223372036854775808], "transpose": [0]}])");
  EXPECT_EQ(e.code, ErrorCode::kJsonTooLarge);
  e = ParseError(R"([{"input_name": "a", "reshape": [-9223372036854775809], "transpose": [0]}])");
  EXPECT_EQ(e.code, ErrorCode::kJsonTooLarge);

  e = ParseError(R"([{"input_name": "a", "reshape": [4, -3], "transpose": [1, 0]}])");
  EXPECT_EQ(e.code, ErrorCode::kNegativeDim);
  EXPECT_EQ(e.key, "reshape");

  e = ParseError(
      R"([{"input_name": "a", "reshape": [4294967296, 4294967296], "transpose": [1, 0]}])");
  EXPECT_EQ(e.code, ErrorCode::kDimOverflow);
  EXPECT_EQ(e.key, "reshape");

  // The largest int64 itself is a fine dim.
  EXPECT_TRUE(ParseIoTransposes(
      R"([{"input_name": "a", "reshape": [9223372036854775807], "transpose": [0]}])", kFile));
}

TEST(ParseIoTransposesTest, TransposeMustBeAPermutation) {
  for (const char* t : {"[0, 0]", "[0, 2]", "[1]", "[0, 1, 2]", "[-1, 0]"}) {
    const Error e = ParseError(
        std::string(R"([{"input_name": "a", "reshape": [2, 3], "transpose": )") + t + "}]");
    EXPECT_EQ(e.code, ErrorCode::kNotPermutation) << t;
    EXPECT_EQ(e.key, "transpose");
  }
}

TEST(ParseIoTransposesTest, UnsafeNamesAreRejected) {
  for (const char* name : {"", ".", "..", "a/b", "a\\\\b", "x\\u0000y"}) {
    const Error e = ParseError(std::string(R"([{"input_name": ")") + name +
                               R"(", "reshape": [1], "transpose": [0]}])");
    EXPECT_EQ(e.code, ErrorCode::kUnsafeName) << name;
    EXPECT_EQ(e.key, "input_name");
  }
  const auto odd = ParseIoTransposes(
      R"([{"input_name": "caf\u00e9 \ud83d\ude00\t\"q\"", "reshape": [1], "transpose": [0]}])",
      kFile);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->specs.entries()[0].input_name, "caf\xc3\xa9 \xf0\x9f\x98\x80\t\"q\"");
}

TEST(ParseIoTransposesTest, DeepNestingIsRefusedWithoutRecursing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Error e = ParseError(deep);
  EXPECT_EQ(e.code, ErrorCode::kJsonTooDeep);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on `literal + std::string`.
  std::string nested = R"([{"input_name": "a", "reshape": )";
  nested.append(70, '[').append(70, ']').append(R"(, "transpose": []}])");
  e = ParseError(nested);
  EXPECT_EQ(e.code, ErrorCode::kJsonTooDeep);
  // Unclosed deep nesting is refused as soon as it passes the bound.
  EXPECT_EQ(ParseError(std::string(500000, '[')).code, ErrorCode::kJsonTooDeep);
  // 64 levels are fine for the JSON layer (the element check then refuses the content).
  EXPECT_EQ(ParseError(std::string(64, '[') + std::string(64, ']')).code, ErrorCode::kJsonType);
}

TEST(ParseIoTransposesTest, RepeatedNameKeepsTheFirstAndWarns) {
  const std::string text = R"([{"input_name": "a", "reshape": [2, 3], "transpose": [1, 0]},
                               {"input_name": "b", "reshape": [6], "transpose": [0]},
                               {"input_name": "a", "reshape": [6], "transpose": [0]}])";
  const auto parsed = ParseIoTransposes(text, kFile);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->specs.size(), 2u);
  EXPECT_EQ(parsed->specs.Find("a")->reshape, (Dims{2, 3}));
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_EQ(parsed->warnings[0].code, ErrorCode::kDuplicateInputName);
  EXPECT_EQ(parsed->warnings[0].element, 2);
  EXPECT_THAT(parsed->warnings[0].message, HasSubstr("repeats element 0"));

  ParseOptions strict;
  strict.duplicate_name_is_error = true;
  const auto refused = ParseIoTransposes(text, kFile, strict);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kDuplicateInputName);
  EXPECT_EQ(refused.error().element, 2);
}

TEST(ValidateIoTransposesTest, ReportsEveryProblem) {
  const std::vector<Error> errors = ValidateIoTransposes(
      R"([{"input_name": "a", "reshape": [2, 3], "transpose": [1, 0]},
          {"reshape": ["x"], "transpose": [0]},
          {"input_name": "b/c", "reshape": [6], "transpose": [1]},
          {"input_name": "a", "reshape": [6], "transpose": [0]},
          {"input_name": "d", "reshape": [-1], "transpose": [0]}])",
      kFile);
  ASSERT_EQ(errors.size(), 6u);
  EXPECT_EQ(errors[0].element, 1);
  EXPECT_EQ(errors[0].message, "input_name not found in json");
  EXPECT_EQ(errors[1].element, 1);
  EXPECT_EQ(errors[1].message, "type must be number, but is string");
  EXPECT_EQ(errors[2].element, 2);
  EXPECT_EQ(errors[2].code, ErrorCode::kUnsafeName);
  EXPECT_EQ(errors[3].element, 2);
  EXPECT_EQ(errors[3].code, ErrorCode::kNotPermutation);
  EXPECT_EQ(errors[4].element, 3);
  EXPECT_EQ(errors[4].code, ErrorCode::kDuplicateInputName);
  EXPECT_EQ(errors[5].element, 4);
  EXPECT_EQ(errors[5].code, ErrorCode::kNegativeDim);
  for (const Error& e : errors) EXPECT_EQ(e.file, kFile);

  EXPECT_TRUE(
      ValidateIoTransposes(R"([{"input_name": "a", "reshape": [6], "transpose": [0]}])", kFile)
          .empty());
}

TEST(ValidateIoTransposesTest, AnUnsafeNameRepeatedIsReportedRepeated) {
  // The name check stopped before the repeat check: two IOTX_E115 and no IOTX_E116.
  const std::vector<Error> errors = ValidateIoTransposes(
      R"([{"input_name": "a/b", "reshape": [2], "transpose": [0]},
          {"input_name": "a/b", "reshape": [2], "transpose": [0]}])",
      kFile);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].code, ErrorCode::kUnsafeName);
  EXPECT_EQ(errors[1].code, ErrorCode::kUnsafeName);
  EXPECT_EQ(errors[1].element, 1);
  EXPECT_EQ(errors[2].code, ErrorCode::kDuplicateInputName);
  EXPECT_EQ(errors[2].element, 1);
  // Where a repeat is a warning, an unsafe name is still an error and nothing is kept.
  EXPECT_EQ(ParseIoTransposes(R"([{"input_name": "a/b", "reshape": [2], "transpose": [0]}])", kFile)
                .error()
                .code,
            ErrorCode::kUnsafeName);
}

// Issue 18, item 7: nlohmann stops at a NUL as if the text ended there; JSON has none, and
// Python's json says "Extra data" for "[]\0garbage".
TEST(ParseIoTransposesTest, ANulByteAnywhereOutsideAStringIsMalformed) {
  for (const std::string& text :
       {std::string("[]\0garbage", 10), std::string("[]\0", 3), std::string("[\0]", 3),
        std::string("[{\"input_name\": \"a\", \"reshape\": [1], \"transpose\": [0]}]\0x", 57)}) {
    SCOPED_TRACE(::testing::PrintToString(text));
    const Error e = ParseError(text);
    EXPECT_EQ(e.code, ErrorCode::kJsonSyntax);
    EXPECT_THAT(e.message, HasSubstr("NUL byte"));
    EXPECT_EQ(ValidateIoTransposes(text, kFile).size(), 1u);
    EXPECT_FALSE(ParseNetlist(text, kFile));
  }
}

// Issue 18, item 6: what no command could apply is refused where validate sees it.
TEST(ParseIoTransposesTest, MoreThanKMaxRankDimsAndNamesTooLongForAFileAreRefused) {
  // Built with += only: GCC 12 warns (-Wstringop-overflow) on chains of + here.
  std::string text = R"([{"input_name": "a", "reshape": [)";
  for (size_t i = 0; i <= kMaxRank; ++i) text += i == 0 ? "1" : ",1";
  text += R"(], "transpose": [)";
  for (size_t i = 0; i <= kMaxRank; ++i) {
    if (i != 0) text += ',';
    text += std::to_string(i);
  }
  text += "]}]";
  Error e = ParseError(text);
  EXPECT_EQ(e.code, ErrorCode::kTooManyDims);
  EXPECT_EQ(e.key, "reshape");
  EXPECT_THAT(e.message, HasSubstr("65 dims; at most 64"));

  // 181 bytes fit (value_<name>.npy and its temporary within NAME_MAX), 182 do not.
  const auto spec = [](const std::string& name) {
    std::string out = R"([{"input_name": ")";
    out += name;
    out += R"(", "reshape": [1], "transpose": [0]}])";
    return out;
  };
  EXPECT_TRUE(ParseIoTransposes(spec(std::string(181, 'n')), kFile));
  e = ParseError(spec(std::string(182, 'n')));
  EXPECT_EQ(e.code, ErrorCode::kUnsafeName);
  EXPECT_THAT(e.message, HasSubstr("182 bytes"));
  EXPECT_LT(e.message.size(), 600u);
}

// Issue 18, item 8: a file of a million bad elements lists 1000 problems and counts the rest,
// in memory that does not grow with the file.
TEST(ValidateIoTransposesTest, ListsAThousandProblemsOfAMillion) {
  std::string text = "[";
  for (int i = 0; i < 1'000'000; ++i) text += i == 0 ? "{}" : ",{}";
  text += "]";
  const std::vector<Error> errors = ValidateIoTransposes(text, kFile);
  ASSERT_FALSE(errors.empty());
  EXPECT_LE(errors.size(), 1001u);
}

}  // namespace io_transposes_parse_test
}  // namespace iotx
