// The valid_inputs / required_transpose / neff_input_names strings (SPEC section 5): the
// examples SPEC gives, round trips, and malformed strings.
#include "iotx/attributes.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace iotx {
namespace {

TransposeSpec Spec(std::initializer_list<int64_t> reshape, std::initializer_list<int64_t> perm) {
  return TransposeSpec{Dims(reshape), Dims(perm)};
}

TEST(AttributesTest, FormatsSpecExamples) {
  EXPECT_EQ(FormatValidInputs({true, true, false, true}), "1,1,0,1");
  EXPECT_EQ(FormatValidInputs({}), "");
  std::vector<std::optional<TransposeSpec>> specs = {Spec({3, 2048, 2, 128}, {0, 3, 2, 1}),
                                                     std::nullopt, Spec({768, 768}, {1, 0})};
  EXPECT_EQ(FormatRequiredTranspose(specs), "3,2048,2,128|0,3,2,1;;768,768|1,0");
  std::vector<std::string> names = {"input0", "input1", "input2"};
  EXPECT_EQ(FormatNeffInputNames(names), "input0,input1,input2");
}

TEST(AttributesTest, ParsesSpecExamples) {
  auto valid = ParseValidInputs("1,1,0,1", 4);
  ASSERT_TRUE(valid) << valid.error().ToString();
  EXPECT_EQ(*valid, (std::vector<bool>{true, true, false, true}));

  auto specs = ParseRequiredTranspose("3,2048,2,128|0,3,2,1;;768,768|1,0", 3);
  ASSERT_TRUE(specs) << specs.error().ToString();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0], Spec({3, 2048, 2, 128}, {0, 3, 2, 1}));
  EXPECT_FALSE((*specs)[1]);
  EXPECT_EQ((*specs)[2], Spec({768, 768}, {1, 0}));

  auto names = ParseNeffInputNames("input0,input1", 2);
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"input0", "input1"}));
}

TEST(AttributesTest, CountDisambiguatesEmptyStrings) {
  EXPECT_TRUE(ParseValidInputs("", 0)->empty());
  EXPECT_TRUE(ParseRequiredTranspose("", 0)->empty());
  EXPECT_TRUE(ParseNeffInputNames("", 0)->empty());
  // One parameter without a transpose is "" too.
  auto one = ParseRequiredTranspose("", 1);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_FALSE((*one)[0]);
  auto none = ParseRequiredTranspose(";;", 3);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->size(), 3u);
  // A rank-0 spec is "|", not "".
  auto scalar = ParseRequiredTranspose("|", 1);
  ASSERT_TRUE(scalar) << scalar.error().ToString();
  ASSERT_TRUE((*scalar)[0]);
  EXPECT_TRUE((*scalar)[0]->reshape.empty());
}

// Random specs (including rank 0, zero dims and rank > 6) survive format + parse.
TEST(AttributesTest, RoundTripsRandomSpecs) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 6;
    std::vector<std::optional<TransposeSpec>> specs(n);
    std::vector<bool> valid(n);
    std::vector<std::string> names(n);
    for (size_t i = 0; i < n; ++i) {
      valid[i] = rng() % 2;
      names[i] = "Arg_" + std::to_string(i) + "." + std::to_string(rng() % 100);
      if (rng() % 3 == 0) continue;
      const size_t rank = rng() % 9;
      TransposeSpec spec;
      std::vector<int64_t> perm(rank);
      for (size_t d = 0; d < rank; ++d) {
        spec.reshape.push_back(static_cast<int64_t>(rng() % 5));
        perm[d] = static_cast<int64_t>(d);
      }
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int64_t p : perm) spec.transpose.push_back(p);
      specs[i] = spec;
    }
    auto parsed_specs = ParseRequiredTranspose(FormatRequiredTranspose(specs), n);
    ASSERT_TRUE(parsed_specs) << parsed_specs.error().ToString();
    EXPECT_EQ(*parsed_specs, specs);
    auto parsed_valid = ParseValidInputs(FormatValidInputs(valid), n);
    ASSERT_TRUE(parsed_valid);
    EXPECT_EQ(*parsed_valid, valid);
    auto parsed_names = ParseNeffInputNames(FormatNeffInputNames(names), n);
    ASSERT_TRUE(parsed_names);
    EXPECT_EQ(*parsed_names, names);
  }
}

struct Malformed {
  const char* text;
  size_t num_parameters;
  const char* message_part;
};

TEST(AttributesTest, RejectsMalformedValidInputs) {
  for (const Malformed& m :
       {Malformed{"1,1", 3, "expected one per parameter: 3"},
        Malformed{"1,2,1", 3, "\"2\"; expected 0 or 1"},
        Malformed{"1,,1", 3, "\"\"; expected 0 or 1"},
        Malformed{"1, 1", 2, "\" 1\"; expected 0 or 1"}, Malformed{"1", 0, "no parameters"},
        Malformed{"", 1, "\"\"; expected 0 or 1"}, Malformed{"true", 1, "expected 0 or 1"}}) {
    auto r = ParseValidInputs(m.text, m.num_parameters);
    ASSERT_FALSE(r) << m.text;
    EXPECT_EQ(r.error().code, ErrorCode::kAttributeSyntax) << m.text;
    EXPECT_EQ(r.error().key, "valid_inputs");
    EXPECT_NE(r.error().message.find(m.message_part), std::string::npos) << r.error().message;
  }
}

TEST(AttributesTest, RejectsMalformedRequiredTranspose) {
  for (const Malformed& m :
       {Malformed{"4,4|1,0", 2, "has 1 entries separated by ';'"},
        Malformed{"4,4|1,0;;", 2, "has 3 entries"}, Malformed{"4,4", 1, "needs exactly one '|'"},
        Malformed{"4,4|1,0|1", 1, "needs exactly one '|'"},
        Malformed{"4,x|1,0", 1, "\"x\" is not a non-negative integer"},
        Malformed{"4,,4|1,0", 1, "\"\" is not a non-negative integer"},
        Malformed{"4,4|1,", 1, "\"\" is not a non-negative integer"},
        Malformed{"-4,4|1,0", 1, "\"-4\" is not a non-negative integer"},
        Malformed{"+4,4|1,0", 1, "\"+4\" is not a non-negative integer"},
        Malformed{" 4,4|1,0", 1, "\" 4\" is not a non-negative integer"},
        Malformed{"99999999999999999999|0", 1, "out of range for int64"},
        Malformed{"'4,4|1,0'", 1, "is not a non-negative integer"}}) {
    auto r = ParseRequiredTranspose(m.text, m.num_parameters);
    ASSERT_FALSE(r) << m.text;
    EXPECT_EQ(r.error().code, ErrorCode::kAttributeSyntax) << m.text;
    EXPECT_EQ(r.error().key, "required_transpose");
    EXPECT_NE(r.error().message.find(m.message_part), std::string::npos) << r.error().message;
  }
}

TEST(AttributesTest, RequiredTransposeEntriesMustBeValidSpecs) {
  // Well-formed text whose spec is not a permutation: ValidateSpec's code, our key and entry.
  auto r = ParseRequiredTranspose(";4,4|0,0", 2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotPermutation);
  EXPECT_EQ(r.error().key, "required_transpose");
  EXPECT_NE(r.error().message.find("entry 1 \"4,4|0,0\""), std::string::npos) << r.error().message;
  auto rank = ParseRequiredTranspose("4,4|1,0,2", 1);
  ASSERT_FALSE(rank);
  EXPECT_EQ(rank.error().code, ErrorCode::kNotPermutation);
}

TEST(AttributesTest, RejectsMalformedNeffInputNames) {
  for (const Malformed& m : {Malformed{"input0", 2, "expected one per parameter: 2"},
                             Malformed{"input0,,input2", 3, "entry 1"}, Malformed{"", 1, "entry 0"},
                             Malformed{"a", 0, "no parameters"}}) {
    auto r = ParseNeffInputNames(m.text, m.num_parameters);
    ASSERT_FALSE(r) << m.text;
    EXPECT_EQ(r.error().code, ErrorCode::kAttributeSyntax);
    EXPECT_EQ(r.error().key, "neff_input_names");
    EXPECT_NE(r.error().message.find(m.message_part), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace iotx
