// The tool's shared behaviour: help, version, exit codes.
#include <gtest/gtest.h>

#include "iotx/version.h"
#include "support/process.h"

namespace iotx::test {
namespace {

TEST(CliTest, HelpListsCommandsAndExitsZero) {
  auto r = RunTool({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("codes"), std::string::npos);
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
}

TEST(CliTest, VersionPrintsTheProjectVersion) {
  auto r = RunTool({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(IOTX_VERSION_STRING), std::string::npos);
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunTool({}).exit_code, 2);
  auto r = RunTool({"no-such-command"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
  EXPECT_EQ(RunTool({"codes", "--no-such-flag"}).exit_code, 2);
}

TEST(CliTest, CodesListsEveryCode) {
  auto r = RunTool({"codes"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* code : {"NCC_IIOT001", "NCC_IIOT002", "NCC_IHNW001", "NCC_IHNW003",
                           "IOTX_E100", "IOTX_E303"}) {
    EXPECT_NE(r.out.find(code), std::string::npos) << code;
  }
}

}  // namespace
}  // namespace iotx::test
