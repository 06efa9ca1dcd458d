// The fixture files of tests/testdata/schema against the outcome table expected.tsv beside
// them, through the library and through `iotx validate`.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "iotx/io_transposes.h"
#include "schema/netlist.h"
#include "support/process.h"

namespace iotx {
namespace {

const std::string kDir = std::string(IOTX_TESTDATA_DIR) + "/schema";

struct Row {
  std::string file, kind, first, element, key;
  size_t errors = 0;
};

std::vector<Row> ReadTable() {
  std::vector<Row> rows;
  std::istringstream in(test::ReadFile(kDir + "/expected.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Row row;
    std::string errors;
    std::getline(fields, row.file, '\t');
    std::getline(fields, row.kind, '\t');
    std::getline(fields, row.first, '\t');
    std::getline(fields, row.element, '\t');
    std::getline(fields, row.key, '\t');
    std::getline(fields, errors, '\t');
    row.errors = std::stoul(errors);
    rows.push_back(row);
  }
  return rows;
}

// The first problem (or none) and the number ValidateX reports.
std::pair<Expected<void>, std::vector<Error>> Check(const Row& row, const std::string& path) {
  const std::string text = test::ReadFile(path);
  if (row.kind == "netlist") {
    const auto parsed = ParseNetlist(text, path);
    return {parsed ? Status() : Fail(parsed.error()), ValidateNetlist(text, path)};
  }
  const auto parsed = ParseIoTransposes(text, path);
  return {parsed ? Status() : Fail(parsed.error()), ValidateIoTransposes(text, path)};
}

TEST(SchemaFixturesTest, EveryFixtureHasTheExpectedOutcome) {
  const std::vector<Row> rows = ReadTable();
  ASSERT_GT(rows.size(), 30u);
  for (const Row& row : rows) {
    SCOPED_TRACE(row.file);
    ASSERT_TRUE(row.kind == "io_transposes" || row.kind == "netlist");
    const std::string path = kDir + "/" + row.file;
    const auto [first, all] = Check(row, path);
    if (row.first == "ok") {
      EXPECT_TRUE(first) << first.error().ToString();
    } else {
      ASSERT_FALSE(first);
      EXPECT_EQ(CodeName(first.error().code), row.first) << first.error().ToString();
      EXPECT_EQ(first.error().file, path);
      EXPECT_EQ(first.error().element, row.element == "-" ? -1 : std::stoll(row.element));
      EXPECT_EQ(first.error().key, row.key == "-" ? "" : row.key);
    }
    EXPECT_EQ(all.size(), row.errors);

    const std::vector<std::string> args =
        row.kind == "netlist" ? std::vector<std::string>{"validate", "--netlist", path}
                              : std::vector<std::string>{"validate", path};
    const test::ProcessResult r = test::RunTool(args);
    EXPECT_EQ(r.exit_code, row.errors == 0 ? 0 : 1) << r.err;
    if (row.first != "ok") {
      EXPECT_NE(r.err.find(row.first), std::string::npos) << r.err;
    }
  }
}

TEST(SchemaFixturesTest, EveryFileIsInTheTable) {
  std::set<std::string> listed;
  for (const Row& row : ReadTable()) EXPECT_TRUE(listed.insert(row.file).second) << row.file;
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (name != "expected.tsv") present.insert(name);
  }
  EXPECT_EQ(listed, present);
}

}  // namespace
}  // namespace iotx
