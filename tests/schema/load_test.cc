// LoadIoTransposes: the single and modular paths with real files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "iotx/io_transposes.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "schema/load.h"

namespace iotx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LoadTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ / name;
    test::WriteFile(path, text);
    return path;
  }
  // "[e0, e1, ...]", built by appending (GCC 12 warns falsely on chains of operator+).
  static std::string Array(std::initializer_list<std::string> elements) {
    std::string out = "[";
    for (const std::string& e : elements) {
      if (out.size() > 1) out += ", ";
      out += e;
    }
    out += ']';
    return out;
  }
  static std::string Element(const std::string& name, const std::string& reshape,
                             const std::string& transpose) {
    std::string out = R"({"input_name": ")";
    out += name;
    out += R"(", "reshape": )";
    out += reshape;
    out += R"(, "transpose": )";
    out += transpose;
    out += '}';
    return out;
  }

  test::TempDir dir_;
};

TEST_F(LoadTest, SingleFileWithoutNetlist) {
  LoadRequest request;
  request.single_file = Write("io.json", Array({Element("p0", "[2, 3]", "[1, 0]")}));
  const auto loaded = LoadIoTransposes(request);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(loaded->specs.size(), 1u);
  EXPECT_THAT(loaded->files_read, ElementsAre(*request.single_file));
  EXPECT_TRUE(loaded->warnings.empty());
}

TEST_F(LoadTest, SingleFileWithNetlistPropagatesAndWarns) {
  LoadRequest request;
  request.single_file =
      Write("io.json", Array({Element("p0", "[6]", "[0]"), Element("stray", "[6]", "[0]")}));
  request.netlist_file = Write("net.json", R"({"PartMap": [{"PartIOs": {"Inputs": ["p0"]}}]})");
  const auto loaded = LoadIoTransposes(request);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(loaded->specs.size(), 2u);
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_THAT(loaded->warnings[0].message, HasSubstr("stray"));
}

TEST_F(LoadTest, ModularFilesCombineInOrder) {
  LoadRequest request;
  request.modular_files = {Write("sg00.json", Array({Element("a", "[6]", "[0]")})),
                           Write("sg01.json", Array({Element("b", "[2, 3]", "[1, 0]")}))};
  request.netlist_file = Write("net.json", R"({"PartMap": [{"PartIOs": {"Inputs": ["a"]}},
                                                           {"PartIOs": {"Inputs": ["b"]}}],
                                              "IntermediateIOs": ["edge"]})");
  const auto loaded = LoadIoTransposes(request);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  ASSERT_EQ(loaded->specs.size(), 2u);
  EXPECT_EQ(loaded->specs.entries()[0].input_name, "a");
  EXPECT_EQ(loaded->specs.entries()[1].input_name, "b");
  EXPECT_EQ(loaded->files_read, request.modular_files);
  EXPECT_TRUE(loaded->warnings.empty());
}

TEST_F(LoadTest, TwoModularFilesWithoutNetlistIsIhnw001) {
  LoadRequest request;
  request.modular_files = {Write("sg00.json", "[]"), Write("sg01.json", "[]")};
  const auto loaded = LoadIoTransposes(request);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(CodeName(loaded.error().code), "NCC_IHNW001");

  request.modular_files.pop_back();  // one modular file needs no netlist
  EXPECT_TRUE(LoadIoTransposes(request));
}

TEST_F(LoadTest, UnopenableFileIsIhnw002) {
  LoadRequest single;
  single.single_file = dir_ / "missing.json";
  auto loaded = LoadIoTransposes(single);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(CodeName(loaded.error().code), "NCC_IHNW002");
  EXPECT_EQ(loaded.error().file, *single.single_file);

  LoadRequest modular;
  modular.modular_files = {Write("sg00.json", "[]"), dir_ / "sg01.json"};
  modular.netlist_file = Write("net.json", "{}");
  loaded = LoadIoTransposes(modular);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(CodeName(loaded.error().code), "NCC_IHNW002");

  LoadRequest directory;
  directory.single_file = dir_.path();
  EXPECT_EQ(CodeName(LoadIoTransposes(directory).error().code), "NCC_IHNW002");
}

TEST_F(LoadTest, DuplicateAcrossPartitionsIsIiot001InTheSecondFile) {
  LoadRequest request;
  request.modular_files = {Write("sg00.json", Array({Element("a", "[6]", "[0]")})),
                           Write("sg01.json", Array({Element("a", "[6]", "[0]")}))};
  request.netlist_file = Write("net.json", "{}");
  const auto loaded = LoadIoTransposes(request);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(CodeName(loaded.error().code), "NCC_IIOT001");
  EXPECT_EQ(loaded.error().file, request.modular_files[1]);
}

TEST_F(LoadTest, ForbiddenIntermediateIsIiot002) {
  LoadRequest request;
  request.modular_files = {Write("sg00.json", Array({Element("edge", "[6]", "[0]")}))};
  request.netlist_file = Write("net.json", R"({"IntermediateIOs": ["edge"]})");
  const auto loaded = LoadIoTransposes(request);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(CodeName(loaded.error().code), "NCC_IIOT002");
}

TEST_F(LoadTest, BadRequestsAndBadFiles) {
  EXPECT_EQ(LoadIoTransposes(LoadRequest()).error().code, ErrorCode::kInvalidArgument);
  LoadRequest both;
  both.single_file = Write("a.json", "[]");
  both.modular_files = {*both.single_file};
  EXPECT_EQ(LoadIoTransposes(both).error().code, ErrorCode::kInvalidArgument);

  LoadRequest bad_netlist;
  bad_netlist.single_file = Write("b.json", "[]");
  bad_netlist.netlist_file = Write("net.json", "[1]");
  EXPECT_EQ(LoadIoTransposes(bad_netlist).error().code, ErrorCode::kJsonTopLevel);
  bad_netlist.netlist_file = dir_ / "no-netlist.json";
  EXPECT_EQ(LoadIoTransposes(bad_netlist).error().code, ErrorCode::kIoOpen);

  LoadRequest bad_json;
  bad_json.single_file = Write("c.json", R"({"p0": {"reshape": [1], "transpose": [0]}})");
  const auto loaded = LoadIoTransposes(bad_json);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::kJsonTopLevel);
  EXPECT_EQ(loaded.error().file, *bad_json.single_file);
}

TEST_F(LoadTest, RepeatedNameInOneFileWarnsAndKeepsTheFirst) {
  LoadRequest request;
  request.single_file =
      Write("io.json", Array({Element("a", "[2, 3]", "[1, 0]"), Element("a", "[6]", "[0]")}));
  const auto loaded = LoadIoTransposes(request);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->specs.Find("a")->reshape, (Dims{2, 3}));
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0].code, ErrorCode::kDuplicateInputName);
}

}  // namespace
}  // namespace iotx
