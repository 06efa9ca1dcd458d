// hlo_netlist.json, the forbidden set, Combine and PropagateAliases (SPEC sections 3 and 4).
#include "schema/netlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace iotx {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace netlist_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kFile = "hlo_netlist.json";

Netlist ParseOk(const std::string& text) {
  auto parsed = ParseNetlist(text, kFile);
  EXPECT_TRUE(parsed) << parsed.error().ToString();
  return parsed ? *parsed : Netlist();
}

TEST(ParseNetlistTest, ReadsTheSourceExample) {
  const Netlist n = ParseOk(R"({
    "PartMap": [ { "PartIOs": { "Inputs": ["p0", "p1"], "IntermediateIOs": ["edge_3_to_5"] } } ],
    "IntermediateIOs": ["edge_3_to_5"] })");
  ASSERT_EQ(n.partitions.size(), 1u);
  EXPECT_EQ(n.partitions[0].id, "0");
  EXPECT_THAT(n.partitions[0].inputs, ElementsAre("p0", "p1"));
  EXPECT_THAT(n.partitions[0].intermediate_ios, ElementsAre("edge_3_to_5"));
  EXPECT_THAT(n.intermediate_ios, ElementsAre("edge_3_to_5"));
}

TEST(ParseNetlistTest, PartMapAsObjectIsReadInKeyOrder) {
  const Netlist n = ParseOk(R"({"PartMap": {
      "sg01": {"PartIOs": {"Inputs": ["b"]}, "neff": "x.neff"},
      "sg00": {"PartIOs": {"Inputs": ["a"]}, "id": 0}}})");
  ASSERT_EQ(n.partitions.size(), 2u);
  EXPECT_EQ(n.partitions[0].id, "sg00");
  EXPECT_THAT(n.partitions[0].inputs, ElementsAre("a"));
  EXPECT_EQ(n.partitions[1].id, "sg01");
  EXPECT_THAT(n.partitions[1].inputs, ElementsAre("b"));
}

TEST(ParseNetlistTest, MissingListsAreEmpty) {
  const Netlist n =
      ParseOk(R"({"PartMap": [{"PartIOs": {}}, {"other": 1}, {"PartIOs": {"Inputs": []}}]})");
  ASSERT_EQ(n.partitions.size(), 3u);
  for (const Partition& p : n.partitions) {
    EXPECT_TRUE(p.inputs.empty());
    EXPECT_TRUE(p.intermediate_ios.empty());
  }
  EXPECT_TRUE(n.intermediate_ios.empty());
  EXPECT_TRUE(ParseOk("{}").partitions.empty());
}

TEST(ParseNetlistTest, TypeErrorsNameThePath) {
  struct Case {
    const char* text;
    const char* message;
    const char* key;
  };
  for (const Case& c : {
           Case{R"({"PartMap": [{"PartIOs": {"Inputs": ["a", 3]}}]})",
                "type must be string, but is number", "PartMap[0].PartIOs.Inputs[1]"},
           Case{R"({"PartMap": {"sg0": {"PartIOs": {"IntermediateIOs": [null]}}}})",
                "type must be string, but is null", "PartMap[\"sg0\"].PartIOs.IntermediateIOs[0]"},
           Case{R"({"IntermediateIOs": [true]})", "type must be string, but is boolean",
                "IntermediateIOs[0]"},
           Case{R"({"IntermediateIOs": "edge"})", "type must be array, but is string",
                "IntermediateIOs"},
           Case{R"({"PartMap": 3})", "type must be array or object, but is number", "PartMap"},
           Case{R"({"PartMap": [{"PartIOs": []}]})", "type must be object, but is array",
                "PartMap[0].PartIOs"},
       }) {
    const auto parsed = ParseNetlist(c.text, kFile);
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kJsonType);
    EXPECT_EQ(parsed.error().message, c.message);
    EXPECT_EQ(parsed.error().key, c.key);
    EXPECT_EQ(parsed.error().file, kFile);
  }
  const auto partition = ParseNetlist(R"({"PartMap": ["sg00"]})", kFile);
  ASSERT_FALSE(partition);
  EXPECT_THAT(partition.error().message, HasSubstr("type must be object, but is string"));
}

TEST(ParseNetlistTest, WrongTopLevelMalformedAndDeep) {
  auto parsed = ParseNetlist("[]", kFile);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, ErrorCode::kJsonTopLevel);
  EXPECT_THAT(parsed.error().message, HasSubstr("must be a JSON object"));

  parsed = ParseNetlist("{\"PartMap\": [\n}", kFile);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, ErrorCode::kJsonSyntax);
  EXPECT_THAT(parsed.error().message, HasSubstr("line 2, column"));

  std::string deep = R"({"x": )";
  deep.append(1000, '[').append(1000, ']') += "}";
  parsed = ParseNetlist(deep, kFile);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, ErrorCode::kJsonTooDeep);
}

TEST(ValidateNetlistTest, ReportsEveryProblem) {
  const auto errors = ValidateNetlist(
      R"({"PartMap": [{"PartIOs": {"Inputs": [1, "a", 2]}}, 7], "IntermediateIOs": [false]})",
      kFile);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].key, "PartMap[0].PartIOs.Inputs[0]");
  EXPECT_EQ(errors[1].key, "PartMap[0].PartIOs.Inputs[2]");
  EXPECT_EQ(errors[2].key, "PartMap[1]");
  EXPECT_EQ(errors[3].key, "IntermediateIOs[0]");
  EXPECT_TRUE(ValidateNetlist(R"({"PartMap": []})", kFile).empty());
}

TEST(ForbiddenSetTest, IsTheRootIntermediateIos) {
  const Netlist n = ParseOk(R"({"PartMap": [{"PartIOs": {"IntermediateIOs": ["inner"]}}],
                                "IntermediateIOs": ["e1", "e2"]})");
  const auto forbidden = ForbiddenSet(n);
  EXPECT_THAT(forbidden, ElementsAre("e1", "e2"));
}

SpecMap Specs(std::initializer_list<const char*> names) {
  SpecMap map;
  int64_t n = 2;
  for (const char* name : names) map.TryEmplace(name, {{n++}, {0}});
  return map;
}

TEST(CombineTest, AddsInOrder) {
  SpecMap acc = Specs({"a"});
  ASSERT_TRUE(Combine(acc, Specs({"b", "c"}), {}));
  ASSERT_EQ(acc.size(), 3u);
  EXPECT_EQ(acc.entries()[1].input_name, "b");
  EXPECT_EQ(acc.entries()[2].input_name, "c");
}

TEST(CombineTest, DuplicateIsIiot001AndLeavesAccUnchanged) {
  SpecMap acc = Specs({"a", "b"});
  const SpecMap before = acc;
  const Status s = Combine(acc, Specs({"z", "b"}), {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kDuplicateIoTranspose);
  EXPECT_EQ(CodeName(s.error().code), "NCC_IIOT001");
  EXPECT_EQ(s.error().message, "Duplicate io_transpose found for input: b");
  EXPECT_EQ(acc.size(), 2u);
  EXPECT_FALSE(acc.Contains("z"));
  EXPECT_EQ(acc.entries()[1].spec, before.entries()[1].spec);
}

TEST(CombineTest, ForbiddenIsIiot002AndLeavesAccUnchanged) {
  SpecMap acc = Specs({"a"});
  const Status s = Combine(acc, Specs({"ok", "edge_3_to_5"}), {"edge_3_to_5"});
  ASSERT_FALSE(s);
  EXPECT_EQ(CodeName(s.error().code), "NCC_IIOT002");
  EXPECT_EQ(s.error().message, "Forbidden io_transpose found for input: edge_3_to_5");
  EXPECT_EQ(acc.size(), 1u);
}

TEST(PropagateAliasesTest, IdentityAliasingWarnsForNamesInNoPartition) {
  const Netlist n = ParseOk(R"({"PartMap": [{"PartIOs": {"Inputs": ["p0"]}},
                                            {"PartIOs": {"Inputs": ["p1"]}}]})");
  SpecMap specs = Specs({"p1", "orphan", "p0"});
  const SpecMap before = specs;
  std::vector<Warning> warnings;
  PropagateAliases(n, specs, &warnings);
  ASSERT_EQ(specs.size(), before.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs.entries()[i].input_name, before.entries()[i].input_name);
    EXPECT_EQ(specs.entries()[i].spec, before.entries()[i].spec);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].message, HasSubstr("\"orphan\""));
  PropagateAliases(n, specs, nullptr);  // no sink: no warnings, no crash
}

}  // namespace netlist_test
}  // namespace iotx
