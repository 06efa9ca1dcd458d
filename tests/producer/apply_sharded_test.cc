// `iotx apply` on sharded safetensors checkpoints (model-0000K-of-0000N.safetensors and
// model.safetensors.index.json): the shard layout and the index kept, outputs checked against
// numpy by producer_check.py; --shard K/N runs sharing one out dir, restarts that skip
// complete shards, --finish-index, and the index/shard disagreements users run into.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "producer_test_util.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kIndex = "model.safetensors.index.json";

class ShardedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
    fs::create_directories(in_);
  }
  void MakeCheckpoint(int seed, int shards = 4) {
    ProcessResult r = RunCheck({"sharded", in_, "--seed", std::to_string(seed), "--shards",
                                std::to_string(shards)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string Shard(int k, int n = 4) const {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", k, n);
    return name;
  }
  ProcessResult Apply(const std::vector<std::string>& extra = {},
                      const std::string& out = "") const {
    std::vector<std::string> args = {"apply", "--io-transposes", in_ + "/io_transposes.json",
                                     "--inputs", in_ + "/" + kIndex, "--out-dir",
                                     out.empty() ? out_ : out};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunTool(args);
  }
  void ExpectOutput(const std::string& out = "") {
    ProcessResult r = RunCheck({"check-sharded", in_, out.empty() ? out_ : out});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  }
  void ExpectFailure(const ProcessResult& r, const std::string& code,
                     const std::vector<std::string>& details) {
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr("iotx: error: " + code));
    for (const std::string& d : details) EXPECT_THAT(r.err, HasSubstr(d));
    if (fs::exists(out_)) {
      EXPECT_TRUE(fs::is_empty(out_)) << "output left in " << out_;
    }
  }

  TempDir temp_;
  std::string in_ = temp_ / "ckpt";
  std::string out_ = temp_ / "out";
};

TEST_F(ShardedTest, KeepsTheShardLayoutAndTheIndex) {
  for (int seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove_all(in_);
    fs::remove_all(out_);
    fs::create_directories(in_);
    MakeCheckpoint(seed, 2 + seed);
    ProcessResult r = Apply();  // safetensors output by default
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("wrote " + std::to_string(2 + seed) + " files"));
    EXPECT_THAT(r.out, HasSubstr("complete; wrote the index"));
    ExpectOutput();
  }
}

TEST_F(ShardedTest, HostsSplitTheShardsAndTheLastOneWritesTheIndex) {
  MakeCheckpoint(4, 5);
  // Three "hosts", one after the other, into one out dir; a fourth does it all elsewhere.
  for (int k = 0; k < 3; ++k) {
    ProcessResult r = Apply({"--shard", std::to_string(k) + "/3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Shards 1..5 sorted by name, positions 0..4: host k takes k and k + 3.
    const size_t mine = k < 2 ? 2 : 1;
    EXPECT_THAT(r.out, HasSubstr("wrote " + std::to_string(mine) + " file"));
    EXPECT_EQ(fs::exists(out_ + "/" + kIndex), k == 2) << "after host " << k;
    if (k < 2) {
      EXPECT_THAT(r.out, HasSubstr("not complete yet, so no index written"));
    }
  }
  for (int s = 1; s <= 5; ++s) EXPECT_TRUE(fs::exists(out_ + "/" + Shard(s, 5))) << s;
  ExpectOutput();
  const std::string whole = temp_ / "whole";
  ASSERT_EQ(Apply({}, whole).exit_code, 0);
  EXPECT_EQ(Snapshot(out_), Snapshot(whole)) << "split runs differ from one whole run";
}

TEST_F(ShardedTest, ARerunSkipsCompleteShardsAndRewritesDamagedOnes) {
  MakeCheckpoint(5);
  ASSERT_EQ(Apply().exit_code, 0);
  const std::string done = Snapshot(out_);
  const auto mtime = fs::last_write_time(out_ + "/" + Shard(2));
  ProcessResult again = Apply();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("skipped 4 shards already written completely"));
  EXPECT_THAT(again.out, HasSubstr("wrote 0 files"));
  EXPECT_EQ(fs::last_write_time(out_ + "/" + Shard(2)), mtime) << "a complete shard rewritten";
  // A shard cut short, one with a header that is not the expected one, one missing: each is
  // written again; the index too once they are.
  const std::string third = ReadFile(out_ + "/" + Shard(3));
  WriteFile(out_ + "/" + Shard(3), third.substr(0, third.size() - 1));
  std::string fourth = ReadFile(out_ + "/" + Shard(4));
  fourth[12] = fourth[12] == ' ' ? 'x' : ' ';
  WriteFile(out_ + "/" + Shard(4), fourth);
  fs::remove(out_ + "/" + Shard(1));
  fs::remove(out_ + "/" + kIndex);
  ProcessResult repair = Apply();
  ASSERT_EQ(repair.exit_code, 0) << repair.err;
  EXPECT_THAT(repair.out, HasSubstr("wrote 3 files"));
  EXPECT_THAT(repair.out, HasSubstr("skipped 1 shard already written completely"));
  EXPECT_EQ(Snapshot(out_), done);
  ExpectOutput();
}

TEST_F(ShardedTest, AHostLeavesAnotherHostsShardThatSpellsItsTemporary) {
  // Shard names come from the index: the first here spells a dead writer's temporary of the
  // second's output (the pid above Linux's largest pid_max). The host converting the second
  // cleans up its own outputs' temporaries, never another host's output.
  MakeCheckpoint(8);
  const std::string lookalike = "." + Shard(2) + ".tmp-4194305-1-0";
  fs::rename(in_ + "/" + Shard(1), in_ + "/" + lookalike);
  std::string index = ReadFile(in_ + "/" + kIndex);
  for (size_t at; (at = index.find(Shard(1))) != std::string::npos;) {
    index.replace(at, Shard(1).size(), lookalike);
  }
  WriteFile(in_ + "/" + kIndex, index);
  // Sorted by name, the lookalike is position 0 (host 0), Shard(2) position 1 (host 1).
  ProcessResult first = Apply({"--shard", "0/2"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(fs::exists(out_ + "/" + lookalike));
  ProcessResult second = Apply({"--shard", "1/2"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(fs::exists(out_ + "/" + lookalike)) << "host 0's shard removed by host 1";
  EXPECT_THAT(second.out, HasSubstr("complete; wrote the index"));
  ExpectOutput();
}

TEST_F(ShardedTest, ARerunWithOtherSpecsRewritesAShardWhoseShapesStayTheSame) {
  // A 2-D tensor [a, b] given {reshape [b, a], transpose [1, 0]} keeps its shape and header
  // but not its bytes: the record of the specs in each shard's __metadata__ is what tells a
  // re-run with the specs fixed that the shard converted without them is not this run's.
  MakeCheckpoint(9);
  ProcessResult found = RunPython(
      "import json, os, struct, sys\n"
      "d = sys.argv[1]\n"
      "index = json.load(open(os.path.join(d, 'model.safetensors.index.json')))\n"
      "for name, f in sorted(index['weight_map'].items()):\n"
      "    raw = open(os.path.join(d, f), 'rb').read()\n"
      "    n = struct.unpack('<Q', raw[:8])[0]\n"
      "    shape = json.loads(raw[8:8 + n])[name]['shape']\n"
      "    if len(shape) == 2 and min(shape) > 1 and shape[0] != shape[1]:\n"
      "        print(name, shape[0], shape[1]); break\n",
      {in_});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  std::istringstream fields(found.out);
  std::string name, a, b;
  ASSERT_TRUE(fields >> name >> a >> b) << "no 2-D tensor in the checkpoint";
  WriteFile(in_ + "/io_transposes.json", "[]");
  ASSERT_EQ(Apply().exit_code, 0);
  WriteFile(in_ + "/io_transposes.json", "[{\"input_name\": \"" + name + "\", \"reshape\": [" + b +
                                             ", " + a + "], \"transpose\": [1, 0]}]");
  ProcessResult again = Apply();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("wrote 1 file"));
  EXPECT_THAT(again.out, HasSubstr("skipped 3 shards already written completely"));
  ExpectOutput();
}

TEST_F(ShardedTest, AnOutputOfApplyIsRefusedAsAnInput) {
  MakeCheckpoint(10);
  ASSERT_EQ(Apply().exit_code, 0);
  const std::string twice = temp_ / "twice";
  ProcessResult r = RunTool({"apply", "--io-transposes", in_ + "/io_transposes.json", "--inputs",
                             out_ + "/" + kIndex, "--out-dir", twice});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("iotx: error: IOTX_E222"));
  EXPECT_THAT(r.err, HasSubstr(Shard(1) + ": its __metadata__ records \"iotx.io_transposes\""));
  EXPECT_FALSE(fs::exists(twice));
  // A single file too, whichever output format is asked for.
  r = RunTool({"apply", "--io-transposes", in_ + "/io_transposes.json", "--inputs",
               out_ + "/" + Shard(2), "--out-dir", twice, "--format", "npy"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E222"));
  EXPECT_FALSE(fs::exists(twice));
}

TEST_F(ShardedTest, FinishIndexWritesTheIndexOnlyWhenEveryShardIsComplete) {
  MakeCheckpoint(6);
  ASSERT_EQ(Apply({"--shard", "0/2"}).exit_code, 0);
  ProcessResult early = Apply({"--finish-index"});
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_THAT(early.err, HasSubstr("IOTX_E221"));
  EXPECT_THAT(early.err, HasSubstr("2 of 4 shards are not written completely yet"));
  EXPECT_THAT(early.err, HasSubstr(Shard(2)));
  EXPECT_THAT(early.err, HasSubstr(Shard(4)));
  EXPECT_FALSE(fs::exists(out_ + "/" + kIndex));
  // The other host's run completes the set and writes the index itself; --finish-index then
  // rewrites the same bytes.
  ASSERT_EQ(Apply({"--shard", "1/2", "--no-sync"}).exit_code, 0);
  ASSERT_TRUE(fs::exists(out_ + "/" + kIndex));
  fs::remove(out_ + "/" + kIndex);
  ProcessResult finish = Apply({"--finish-index"});
  ASSERT_EQ(finish.exit_code, 0) << finish.err;
  EXPECT_THAT(finish.out, HasSubstr("wrote 0 files"));
  ExpectOutput();
}

TEST_F(ShardedTest, NpyOutputOfTheSelectedShards) {
  MakeCheckpoint(7, 3);
  ProcessResult r = Apply({"--format", "npy", "--shard", "1/3", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  ProcessResult check = RunPython(
      "import sys, json, os\n"
      "index = json.load(open(sys.argv[1] + '/model.safetensors.index.json'))\n"
      "names = sorted(t for t, s in index['weight_map'].items() if s == sys.argv[3])\n"
      "got = sorted(os.listdir(sys.argv[2]))\n"
      "assert got == sorted(f'value_{n}.npy' for n in names), (got, names)\n",
      {in_, out_, Shard(2, 3)});
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

class ShardedErrorTest : public ShardedTest {
 protected:
  void SetUp() override {
    ShardedTest::SetUp();
    if (IsSkipped()) return;
    MakeCheckpoint(8);
  }
  // Rewrites the index's weight_map with `python` (a statement on `m`, the dict).
  void EditIndex(const std::string& python) {
    ProcessResult r = RunPython(
        "import sys, json\n"
        "p = sys.argv[1]; index = json.load(open(p)); m = index['weight_map']\n" +
            python + "\njson.dump(index, open(p, 'w'), indent=2)\n",
        {in_ + "/" + kIndex});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(ShardedErrorTest, AMissingShard) {
  fs::remove(in_ + "/" + Shard(3));
  ExpectFailure(Apply(), "IOTX_E300", {Shard(3), "shard named in " + std::string(kIndex)});
}

TEST_F(ShardedErrorTest, AShardNameThatIsAPath) {
  EditIndex("m[next(iter(m))] = '../model-00001-of-00004.safetensors'");
  ExpectFailure(Apply(), "IOTX_E115", {"not a plain file name"});
}

TEST_F(ShardedErrorTest, ATensorTheIndexPlacesInAShardThatLacksIt) {
  EditIndex("m['model.layers.9.ghost'] = 'model-00002-of-00004.safetensors'");
  ExpectFailure(Apply(), "IOTX_E221", {"model.layers.9.ghost", "does not hold it"});
}

TEST_F(ShardedErrorTest, ATensorInTwoShards) {
  // Shard 1's tensors also in shard 2's file, which the index does not say.
  ProcessResult r = RunPython(
      "import sys, json, struct\n"
      "def read(p):\n"
      "    d = open(p, 'rb').read(); n = struct.unpack('<Q', d[:8])[0]\n"
      "    return json.loads(d[8:8 + n]), d[8 + n:]\n"
      "h1, b1 = read(sys.argv[1]); h2, b2 = read(sys.argv[2])\n"
      "name = next(k for k in h1 if k != '__metadata__')\n"
      "s, e = h1[name]['data_offsets']\n"
      "h2[name] = dict(h1[name], data_offsets=[len(b2), len(b2) + e - s])\n"
      "t = json.dumps(h2).encode(); t += b' ' * (-len(t) % 8)\n"
      "open(sys.argv[2], 'wb').write(struct.pack('<Q', len(t)) + t + b2 + b1[s:e])\n"
      "print(name, end='')\n",
      {in_ + "/" + Shard(1), in_ + "/" + Shard(2)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectFailure(Apply(), "IOTX_E221", {r.out, "but the index places it in \"" + Shard(1)});
  // Listed twice in the index itself (JSON with a repeated key).
  std::string index = ReadFile(in_ + "/" + kIndex);
  const size_t at = index.find("\"weight_map\": {") + 15;
  index.insert(at, "\n    \"" + r.out + "\": \"" + Shard(2) + "\",");
  WriteFile(in_ + "/" + kIndex, index);
  ExpectFailure(Apply(), "IOTX_E221", {r.out, "more than once"});
}

TEST_F(ShardedErrorTest, MalformedIndexes) {
  WriteFile(in_ + "/" + kIndex, "{\"weight_map\": {\"a\": ");
  ExpectFailure(Apply(), "IOTX_E100", {kIndex});
  WriteFile(in_ + "/" + kIndex, "[1, 2]");
  ExpectFailure(Apply(), "IOTX_E101", {kIndex});
  WriteFile(in_ + "/" + kIndex, "{\"metadata\": {}}");
  ExpectFailure(Apply(), "IOTX_E102", {"weight_map"});
  WriteFile(in_ + "/" + kIndex, "{\"weight_map\": {\"a\": 3}}");
  ExpectFailure(Apply(), "IOTX_E103", {"type must be string, but is number"});
}

TEST_F(ShardedErrorTest, ASpecForATensorOfAnotherHostsShardIsCheckedToo) {
  // Every host checks every spec, so a fleet fails the same way everywhere.
  WriteFile(in_ + "/io_transposes.json",
            "[{\"input_name\": \"nowhere\", \"reshape\": [2], \"transpose\": [0]}]");
  ExpectFailure(Apply({"--shard", "0/4"}), "IOTX_E117", {"nowhere", "checkpoint's tensors"});
}

TEST_F(ShardedErrorTest, AnOutDirHoldingTheInputsIsRefusedUntouched) {
  // The outputs keep the shards' names: written into the checkpoint's own directory they
  // would replace the shards being read, and a second run would permute them again.
  const auto listing = [&] {
    return RunPython(
               "import hashlib, os, sys\n"
               "for f in sorted(os.listdir(sys.argv[1])):\n"
               "    data = open(os.path.join(sys.argv[1], f), 'rb').read()\n"
               "    print(f, hashlib.sha256(data).hexdigest())\n",
               {in_})
        .out;
  };
  const std::string before = listing();
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--shard", "1/4"}, {"--finish-index"}}) {
    ProcessResult r = Apply(extra, in_);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr("IOTX_E307"));
    EXPECT_THAT(r.err, HasSubstr("is the input file"));
  }
  EXPECT_EQ(listing(), before);
}

TEST_F(ShardedErrorTest, UsageErrors) {
  // Numbers past 2^64 read as the defaults 0/1 (every shard) before they were checked; an
  // empty --shard (a variable that expanded to nothing) read as no --shard at all.
  for (const char* shard : {"4/4", "1/0", "a/b", "1", "-1/2", "1/2/3", "/2", "1/", "",
                            "18446744073709551617/18446744073709551618", "0/18446744073709551616",
                            "18446744073709551618/3"}) {
    EXPECT_EQ(Apply({"--shard", shard}).exit_code, 2) << shard;
    EXPECT_FALSE(fs::exists(out_)) << shard;
  }
  ProcessResult empty = Apply({"--shard", ""});
  EXPECT_THAT(empty.err, HasSubstr("--shard: is empty"));
  for (const char* option : {"--io-transposes", "--inputs", "--out-dir"}) {
    std::vector<std::string> args = {"apply",    "--io-transposes",  in_ + "/io_transposes.json",
                                     "--inputs", in_ + "/" + kIndex, "--out-dir",
                                     out_};
    *(std::find(args.begin(), args.end(), option) + 1) = "";
    ProcessResult r = RunTool(args);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_THAT(r.err, HasSubstr(std::string(option) + ": is empty")) << option;
  }
  EXPECT_EQ(Apply({"--shard", "0/2", "--finish-index"}).exit_code, 2);
  EXPECT_EQ(Apply({"--finish-index", "--format", "npy"}).exit_code, 2);
  // --shard and --finish-index need an index.
  EXPECT_EQ(RunTool({"apply", "--io-transposes", in_ + "/io_transposes.json", "--inputs",
                     in_ + "/" + Shard(1), "--out-dir", out_, "--shard", "0/2"})
                .exit_code,
            2);
  EXPECT_FALSE(fs::exists(out_));
  ProcessResult help = RunTool({"apply", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--shard"));
  EXPECT_THAT(help.out, HasSubstr("--finish-index"));
  EXPECT_THAT(help.out, HasSubstr("--no-sync"));
}

}  // namespace
}  // namespace iotx::test
