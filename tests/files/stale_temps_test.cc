// RemoveStaleTemps: only temporaries of the named files whose writer is gone.
#include "files/stale_temps.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::files {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::TempDir;
using test::WriteFile;

// The pid of a process that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST(StaleTempsTest, RemovesTheTemporariesOfDeadWritersOnly) {
  TempDir dir;
  const std::string dead = std::to_string(DeadPid());
  const std::string alive = std::to_string(getpid());
  const std::string stale_file = ".value_p0.npy.tmp-" + dead + "-0-0123456789abcdef";
  const std::string stale_link = ".value_p0.npy.tmp-link-" + dead + "-3";
  const std::string live_file = ".value_p0.npy.tmp-" + alive + "-1-0123456789abcdef";
  const std::string other_name = ".unrelated.npy.tmp-" + dead + "-0-0123456789abcdef";
  const std::string not_a_temp = "value_p0.npy";
  for (const std::string& name : {stale_file, live_file, other_name, not_a_temp}) {
    WriteFile(dir / name, "x");
  }
  fs::create_symlink("/nonexistent", dir / stale_link);
  fs::create_directory(dir / (".value_w.npy.tmp-" + dead + "-0-0"));  // a directory stays

  const std::string names[] = {"value_p0.npy", "value_w.npy"};
  EXPECT_EQ(RemoveStaleTemps(dir.path(), names), 2u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / stale_file)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / stale_link)));
  EXPECT_TRUE(fs::exists(dir / live_file));
  EXPECT_TRUE(fs::exists(dir / other_name));
  EXPECT_TRUE(fs::exists(dir / not_a_temp));
  EXPECT_TRUE(fs::is_directory(dir / (".value_w.npy.tmp-" + dead + "-0-0")));
}

TEST(StaleTempsTest, AnOutputNamedLikeAnotherOutputsTemporaryStays) {
  // Shard names come from a checkpoint's index: one may spell another's temporary.
  TempDir dir;
  const std::string shard = "model-00001-of-00002.safetensors";
  const std::string lookalike = "." + shard + ".tmp-" + std::to_string(DeadPid()) + "-x";
  WriteFile(dir / shard, "a");
  WriteFile(dir / lookalike, "b");
  const std::string names[] = {shard, lookalike};
  EXPECT_EQ(RemoveStaleTemps(dir.path(), names), 0u);
  EXPECT_TRUE(fs::exists(dir / lookalike));
  const std::string only_shard[] = {shard};  // not an output of this run: a stale temporary
  EXPECT_EQ(RemoveStaleTemps(dir.path(), only_shard), 1u);
}

TEST(StaleTempsTest, KeptFilesStayWhateverTheirNamesSpell) {
  // An input given from the out dir, or another host's output, named like a dead writer's
  // temporary of this run's output: kept by identity, whichever path names it.
  TempDir dir;
  TempDir elsewhere;
  const std::string dead = std::to_string(DeadPid());
  const std::string input = ".value_a.npy.tmp-" + dead + "-1-0";
  const std::string other_host = ".value_a.npy.tmp-" + dead + "-2-0";
  const std::string stale = ".value_a.npy.tmp-" + dead + "-3-0";
  const std::string stale_link = ".value_a.npy.tmp-link-" + dead + "-4";
  for (const std::string& name : {input, other_host, stale}) WriteFile(dir / name, name);
  WriteFile(elsewhere / "target", "t");
  fs::create_symlink(elsewhere / "target", dir / stale_link);
  fs::create_symlink(dir / input, elsewhere / "link-to-input");  // the input named through a link

  const std::string names[] = {"value_a.npy"};
  const fs::path keep[] = {elsewhere / "link-to-input", dir / other_host, elsewhere / "target",
                           dir / "absent"};
  EXPECT_EQ(RemoveStaleTemps(dir.path(), names, keep), 2u);
  EXPECT_EQ(ReadFile(dir / input), input);
  EXPECT_EQ(ReadFile(dir / other_host), other_host);
  EXPECT_FALSE(fs::exists(dir / stale));
  // A stale link goes though what it leads to is kept, and that stays.
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / stale_link)));
  EXPECT_EQ(ReadFile(elsewhere / "target"), "t");
}

TEST(StaleTempsTest, AMissingDirectoryRemovesNothing) {
  const std::string names[] = {"io_transposes.json"};
  EXPECT_EQ(RemoveStaleTemps("/nonexistent/dir", names), 0u);
}

}  // namespace
}  // namespace iotx::files
