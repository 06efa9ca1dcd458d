// `iotx simplify` and `iotx validate` as a user runs them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SimplifyCliTest, SourceExample) {
  const auto r = RunTool({"simplify", "--shape", "6144,256", "--reshape", "3,16,128,2,2,64",
                          "--transpose", "0,4,5,3,1,2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"reshape\": [3, 2048, 2, 128], \"transpose\": [0, 3, 2, 1]}\n");
  EXPECT_EQ(r.err, "");
}

TEST(SimplifyCliTest, PythonStyleListsAndScalars) {
  auto r =
      RunTool({"simplify", "--shape", "[4, 6]", "--reshape", "[4, 6]", "--transpose", "[0, 1]"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"reshape\": [4, 6], \"transpose\": [0, 1]}\n");
  r = RunTool({"simplify", "--shape", "", "--reshape", "", "--transpose", ""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"reshape\": [], \"transpose\": []}\n");
}

TEST(SimplifyCliTest, InvalidSpecsExitOneWithTheDiagnostic) {
  auto r = RunTool({"simplify", "--shape", "6144,256", "--reshape", "3,16,128,2,2,63",
                    "--transpose", "0,4,5,3,1,2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("iotx: error: NCC_IHNW003 Reshape size mismatch: illegal static "
                               "io reshape from "
                               "[6144, 256] to [3, 16, 128, 2, 2, 63]"));
  r = RunTool({"simplify", "--shape", "6", "--reshape", "2,3", "--transpose", "0,0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E110"));
  r = RunTool({"simplify", "--shape=-6", "--reshape", "6", "--transpose", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E111"));
}

TEST(SimplifyCliTest, MalformedOptionsAreUsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"simplify", "--shape", "6144,x", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--shape", "6144,,256", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--shape", "[6144", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--shape", "1.5", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--shape", "99999999999999999999", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--reshape", "1", "--transpose", "0"},
           {"simplify", "--shape", "1", "--reshape", "1", "--transpose", "0", "extra"}}) {
    const auto r = RunTool(args);
    EXPECT_EQ(r.exit_code, 2) << args[2];
    EXPECT_FALSE(r.err.empty());
    EXPECT_EQ(r.out, "");
  }
}

TEST(SimplifyCliTest, HelpExplainsWithAnExample) {
  const auto r = RunTool({"simplify", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--shape"));
  EXPECT_THAT(r.out, HasSubstr("iotx simplify --shape 6144,256"));
}

class ValidateCliTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    WriteFile(dir_ / name, text);
    return dir_ / name;
  }
  TempDir dir_;
};

TEST_F(ValidateCliTest, TheBundledExampleIsValid) {
  const auto r =
      RunTool({"validate", std::string(IOTX_SOURCE_DIR) + "/examples/io_transposes.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok, 2 io_transposes"));
  EXPECT_EQ(r.err, "");
}

TEST_F(ValidateCliTest, ReportsEveryProblemAndExitsOne) {
  const std::string bad = Write("bad.json", R"([
    {"input_name": "a", "reshape": [2, 3], "transpose": [1, 0]},
    {"reshape": ["x"], "transpose": [0]},
    {"input_name": "../a", "reshape": [6], "transpose": [0]},
    {"input_name": "a", "reshape": [6], "transpose": [0, 1]},
    {"input_name": "b", "reshape": [2.0], "transpose": [0]}])");
  const auto r = RunTool({"validate", bad});
  EXPECT_EQ(r.exit_code, 1);
  for (const char* expected : {"element 1, key \"input_name\": input_name not found in json",
                               "element 1, key \"reshape\": type must be number, but is string",
                               "IOTX_E115", "element 3, key \"transpose\"", "IOTX_E110",
                               "element 4, key \"reshape\": type must be number"}) {
    EXPECT_THAT(r.err, HasSubstr(expected));
  }
  EXPECT_THAT(r.err,
              HasSubstr("element 3, key \"input_name\": input_name \"a\" repeats element 0"));
  // 2 in element 1, 1 in element 2, 2 in element 3, 1 in element 4.
  EXPECT_THAT(r.out, HasSubstr("6 errors"));
}

TEST_F(ValidateCliTest, RepeatedNameIsAnError) {
  const auto r = RunTool({"validate", Write("dup.json", R"([
    {"input_name": "a", "reshape": [6], "transpose": [0]},
    {"input_name": "a", "reshape": [6], "transpose": [0]}])")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("iotx: error: IOTX_E116"));
  EXPECT_THAT(r.err, HasSubstr("element 1"));
}

TEST_F(ValidateCliTest, JsonOutputIsReadableByPython) {
  const std::string bad = Write("bad.json", R"([{"reshape": [1]}, 3])");
  const auto r = RunTool({"validate", "--json", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "");
  const auto py = RunPython(
      "import json, sys\n"
      "d = json.load(sys.stdin)\n"
      "print(' '.join('%s/%s/%s/%s' % (x['severity'], x['code'], x.get('element'), x.get('key')) "
      "for x in d))",
      {}, r.out);
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out,
            "error/IOTX_E102/0/input_name error/IOTX_E102/0/transpose error/IOTX_E103/1/None\n");
}

TEST_F(ValidateCliTest, ModularSetIsCombinedAcrossFiles) {
  const std::string sg0 =
      Write("sg00.json", R"([{"input_name": "a", "reshape": [6], "transpose": [0]}])");
  const std::string sg1 =
      Write("sg01.json", R"([{"input_name": "a", "reshape": [6], "transpose": [0]},
                                                 {"input_name": "edge", "reshape": [6], "transpose": [0]},
                                                 {"input_name": "c", "reshape": [6], "transpose": [0]}])");
  const std::string net = Write("net.json", R"({"PartMap": [{"PartIOs": {"Inputs": ["a"]}}],
                                               "IntermediateIOs": ["edge"]})");
  auto r = RunTool({"validate", "--netlist", net, "--modular", sg0, sg1});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("NCC_IIOT001 " + sg1 + ": Duplicate io_transpose found for input: a"));
  EXPECT_THAT(r.err,
              HasSubstr("NCC_IIOT002 " + sg1 + ": Forbidden io_transpose found for input: edge"));
  EXPECT_THAT(r.err, HasSubstr("iotx: warning: IOTX_E117"));  // "c" is in no partition
  EXPECT_THAT(r.err, Not(HasSubstr("NCC_IHNW001")));

  r = RunTool({"validate", "--modular", sg0, sg1});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NCC_IHNW001"));

  const std::string sg2 =
      Write("sg02.json", R"([{"input_name": "b", "reshape": [6], "transpose": [0]}])");
  r = RunTool({"validate", "--netlist",
               Write("n2.json", R"({"PartMap": {"x": {"PartIOs": {"Inputs": ["a", "b"]}}}})"),
               "--modular", sg0, sg2});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("2 io_transposes combined"));
}

TEST_F(ValidateCliTest, NetlistProblemsAndUnreadableFiles) {
  auto r = RunTool({"validate", "--netlist",
                    Write("net.json", R"({"PartMap": [{"PartIOs": {"Inputs": [1, 2]}}]})")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(
      r.err, HasSubstr("key \"PartMap[0].PartIOs.Inputs[0]\": type must be string, but is number"));
  EXPECT_THAT(r.err, HasSubstr("PartMap[0].PartIOs.Inputs[1]"));

  r = RunTool({"validate", dir_ / "missing.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E300"));

  r = RunTool({"validate", Write("syntax.json", "[\n{\"input_name\": }\n]")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E100"));
  EXPECT_THAT(r.err, HasSubstr("line 2, column"));
}

TEST_F(ValidateCliTest, NothingToCheckIsAUsageError) {
  const auto r = RunTool({"validate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nothing to check"));
  EXPECT_EQ(RunTool({"validate", "--bogus"}).exit_code, 2);
}

TEST_F(ValidateCliTest, HelpShowsExamples) {
  const auto r = RunTool({"validate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--modular"));
  EXPECT_THAT(r.out, HasSubstr("--json"));
  EXPECT_THAT(r.out, HasSubstr("iotx validate examples/io_transposes.json"));
}

}  // namespace
}  // namespace iotx::test
