// `iotx materialize` end to end over temporary work dirs, checked by producer_check.py
// against numpy, Python's pickle and json, and SPEC section 2's rule written in Python.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "producer_test_util.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class MaterializeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
  }
  // A work dir from producer_check.py's `command` (make, example, big).
  void Make(const std::vector<std::string>& command) {
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, {work_, orig_});
    ProcessResult r = RunCheck(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void ExpectChecks(bool verify) {
    std::vector<std::string> args = {"check", work_, orig_};
    if (verify) args.push_back("--verify");
    ProcessResult r = RunCheck(args);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  }
  ProcessResult Materialize(const std::vector<std::string>& flags = {"--verify"}) {
    std::vector<std::string> args = {"materialize", work_};
    args.insert(args.end(), flags.begin(), flags.end());
    return RunTool(args);
  }

  TempDir temp_;
  TempDir outside_;
  std::string work_ = temp_ / "work";
  std::string orig_ = temp_ / "orig.json";
  void MakeWorkDir() { fs::create_directory(work_); }
};

TEST_F(MaterializeTest, RandomWorkDirsMatchNumpyForEveryPickleProtocol) {
  for (int seed = 1; seed <= 12; ++seed) {
    fs::remove_all(work_);
    MakeWorkDir();
    const std::string protocol = std::to_string(2 + seed % 4);
    Make({"make", "--seed", std::to_string(seed), "--protocol", protocol, "--tensors", "9"});
    ProcessResult r = Materialize();
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ": " << r.err;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", protocol " + protocol);
    ExpectChecks(/*verify=*/true);  // with --verify, also every value file complete
    EXPECT_THAT(HiddenEntries(work_), ::testing::IsEmpty());
  }
}

TEST_F(MaterializeTest, SourceDocumentExample) {
  MakeWorkDir();
  Make({"example"});
  ProcessResult r = Materialize();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectChecks(/*verify=*/true);
  // SPEC section 2's worked example, by hand; the file has no trailing newline, like
  // json.dump.
  EXPECT_EQ(ReadFile(work_ + "/io_transposes.json"),
            "[{\"input_name\": \"p0\", \"reshape\": [3, 2048, 2, 128], \"transpose\": [0, 3, 2, "
            "1]}, {\"input_name\": \"weight_7\", \"reshape\": [768, 768], \"transpose\": [1, "
            "0]}]");
  EXPECT_THAT(r.out, HasSubstr("p0: [6144, 256] <f2 -> [3, 128, 2, 2048], 3145728 bytes"));
  EXPECT_THAT(r.out, HasSubstr("weight_7: [768, 768] |V2 -> [768, 768]"));
  EXPECT_THAT(r.out, HasSubstr("ids: [4, 16] <i4, 256 bytes, copied unchanged (no spec)"));
  EXPECT_THAT(r.out, HasSubstr("links: 12 (12 created, 0 replaced, 0 unchanged)"));
  EXPECT_THAT(r.out, HasSubstr("nc1/sg02/value_p0.npy -> " + fs::canonical(work_).string() +
                               "/transposed_inputs/value_p0.npy"));
}

TEST_F(MaterializeTest, ReRunningChangesNoByte) {
  MakeWorkDir();
  Make({"make", "--seed", "5", "--tensors", "8"});
  ASSERT_EQ(Materialize().exit_code, 0);
  const std::string first = Snapshot(work_);
  ProcessResult again = Materialize();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Snapshot(work_), first);
  EXPECT_THAT(again.out, HasSubstr("already simplified, unchanged"));
  EXPECT_THAT(again.out, HasSubstr("(0 created, 0 replaced"));
  ASSERT_EQ(Materialize({}).exit_code, 0);  // and without --verify
  EXPECT_EQ(Snapshot(work_), first);
  ExpectChecks(/*verify=*/true);
}

TEST_F(MaterializeTest, WithoutVerifyOnlyTheJsonIsRewritten) {
  MakeWorkDir();
  Make({"example"});
  ProcessResult r = Materialize({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectChecks(/*verify=*/false);
  EXPECT_FALSE(fs::exists(work_ + "/transposed_inputs"));
  EXPECT_THAT(r.out, HasSubstr("p0: [6144, 256] <f2 -> [3, 128, 2, 2048], 3145728 bytes"));
  EXPECT_THAT(r.out, Not(HasSubstr("ids")));
  EXPECT_THAT(r.out, HasSubstr("links: 0"));
}

TEST_F(MaterializeTest, GatesSayWhyAndTouchNothing) {
  MakeWorkDir();
  Make({"example"});
  fs::rename(work_ + "/io_transposes.json", temp_ / "saved.json");
  std::string before = Snapshot(work_);
  ProcessResult r = Materialize();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("no io_transposes.json"));
  EXPECT_THAT(r.out, HasSubstr("nothing to do"));
  EXPECT_EQ(Snapshot(work_), before);

  fs::rename(temp_ / "saved.json", work_ + "/io_transposes.json");
  fs::remove(work_ + "/inp-000.p");
  before = Snapshot(work_);
  r = Materialize();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("no inp-000.p"));
  EXPECT_EQ(Snapshot(work_), before);
  EXPECT_EQ(Materialize({"--verify", "--quiet"}).out, "");
}

TEST_F(MaterializeTest, AnEmptyArrayIsProcessed) {
  MakeWorkDir();
  Make({"example"});
  WriteFile(work_ + "/io_transposes.json", "[ ]\n");
  WriteFile(orig_, "[]");
  ProcessResult r = Materialize();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(work_ + "/io_transposes.json"), "[]");
  ExpectChecks(/*verify=*/true);  // every tensor copied unchanged, linked everywhere
}

TEST_F(MaterializeTest, ARepeatedNameKeepsTheFirstWithAWarning) {
  MakeWorkDir();
  Make({"example"});
  const std::string specs =
      "[{\"input_name\": \"p0\", \"reshape\": [6144, 256], \"transpose\": [1, 0]},"
      " {\"input_name\": \"p0\", \"reshape\": [256, 6144], \"transpose\": [0, 1]}]";
  WriteFile(work_ + "/io_transposes.json", specs);
  WriteFile(orig_, specs);
  ProcessResult r = Materialize();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: IOTX_E116"));
  ExpectChecks(/*verify=*/true);
}

// Each of these fails before anything is written.
class MaterializeRefusesTest : public MaterializeTest {
 protected:
  void SetUp() override {
    MaterializeTest::SetUp();
    if (IsSkipped()) return;
    MakeWorkDir();
    Make({"example"});
  }
  void ExpectRefused(const std::string& code, const std::string& detail) {
    const std::string before = Snapshot(work_);
    ProcessResult r = Materialize();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("iotx: error: " + code));
    EXPECT_THAT(r.err, HasSubstr(detail));
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(Snapshot(work_), before) << "the work dir changed";
  }
};

TEST_F(MaterializeRefusesTest, ASpecForAnInputThatIsNotThere) {
  WriteFile(work_ + "/io_transposes.json",
            "[{\"input_name\": \"p0\", \"reshape\": [6144, 256], \"transpose\": [1, 0]},"
            " {\"input_name\": \"p9\", \"reshape\": [2], \"transpose\": [0]}]");
  ExpectRefused("IOTX_E117", "p9");
}

TEST_F(MaterializeRefusesTest, ASpecThatDoesNotFitItsTensor) {
  WriteFile(work_ + "/io_transposes.json",
            "[{\"input_name\": \"p0\", \"reshape\": [6144, 255], \"transpose\": [1, 0]}]");
  ExpectRefused("NCC_IHNW003", "illegal static io reshape from [6144, 256] to [6144, 255]");
}

TEST_F(MaterializeRefusesTest, APathUnsafeSpecName) {
  WriteFile(work_ + "/io_transposes.json",
            "[{\"input_name\": \"../../escape\", \"reshape\": [2], \"transpose\": [0]}]");
  ExpectRefused("IOTX_E115", "../../escape");
}

TEST_F(MaterializeRefusesTest, APathUnsafeTensorName) {
  ProcessResult r = RunPython(
      "import pickle, sys, numpy as np\n"
      "d = pickle.load(open(sys.argv[1], 'rb')); d['sub/dir'] = np.zeros(3, np.float32)\n"
      "pickle.dump(d, open(sys.argv[1], 'wb'))\n",
      {work_ + "/inp-000.p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectRefused("IOTX_E115", "sub/dir");
}

TEST_F(MaterializeRefusesTest, ASymlinkPlantedInTransposedInputs) {
  WriteFile(outside_ / "victim.npy", "precious");
  fs::create_directory(work_ + "/transposed_inputs");
  fs::create_symlink(outside_ / "victim.npy", work_ + "/transposed_inputs/value_p0.npy");
  ExpectRefused("IOTX_E303", "victim.npy");
  EXPECT_EQ(ReadFile(outside_ / "victim.npy"), "precious");
}

TEST_F(MaterializeRefusesTest, APlantedSymlinkInPlaceOfThePickle) {
  WriteFile(outside_ / "victim", "precious");
  fs::create_directory(work_ + "/transposed_inputs");
  fs::create_symlink(outside_ / "victim", work_ + "/transposed_inputs/inp-000.p");
  ExpectRefused("IOTX_E303", "victim");
  EXPECT_EQ(ReadFile(outside_ / "victim"), "precious");
}

TEST_F(MaterializeRefusesTest, APickleLinkedIntoTransposedInputs) {
  // --verify would replace the pickle it reads with its transpose, and every re-run would
  // transpose the bytes again.
  fs::create_directory(work_ + "/transposed_inputs");
  fs::rename(work_ + "/inp-000.p", work_ + "/transposed_inputs/inp-000.p");
  fs::create_symlink("transposed_inputs/inp-000.p", work_ + "/inp-000.p");
  ExpectRefused("IOTX_E307", "is the input file");
}

TEST_F(MaterializeRefusesTest, TransposedInputsLeadingOutside) {
  fs::create_directory_symlink(outside_.path(), work_ + "/transposed_inputs");
  ExpectRefused("IOTX_E303", "transposed_inputs");
  EXPECT_TRUE(fs::is_empty(outside_.path()));
}

TEST_F(MaterializeRefusesTest, TransposedInputsBeingAFile) {
  WriteFile(work_ + "/transposed_inputs", "not a dir");
  ExpectRefused("IOTX_E304", "transposed_inputs");
}

TEST_F(MaterializeRefusesTest, AForeignNpyLeadingOutside) {
  WriteFile(outside_ / "secret.npy", "x");
  fs::create_directory(work_ + "/transposed_inputs");
  fs::create_symlink(outside_ / "secret.npy", work_ + "/transposed_inputs/other.npy");
  ExpectRefused("IOTX_E303", "secret.npy");
}

TEST_F(MaterializeRefusesTest, APartitionDirLeadingOutside) {
  fs::create_directory_symlink(outside_.path(), work_ + "/sg07");
  ExpectRefused("IOTX_E303", "sg07");
  EXPECT_TRUE(fs::is_empty(outside_.path()));
}

TEST_F(MaterializeTest, ExistingLinksAndFilesAreReplacedAndMetaFilesFannedOut) {
  MakeWorkDir();
  Make({"example"});
  WriteFile(outside_ / "old.npy", "old");
  fs::create_symlink(outside_ / "old.npy", work_ + "/sg00/value_p0.npy");
  WriteFile(work_ + "/sg01/value_p0.npy", "a stale copy");
  fs::create_directory(work_ + "/transposed_inputs");
  WriteFile(work_ + "/transposed_inputs/value_p0.npy.meta", "{\"layout\": \"device\"}");
  ProcessResult r = Materialize();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectChecks(/*verify=*/true);  // links every *.npy and *.npy.meta, to the real paths
  EXPECT_THAT(r.out, HasSubstr("sg00/value_p0.npy -> "));
  EXPECT_THAT(r.out, HasSubstr("(replaced)"));
  EXPECT_EQ(ReadFile(outside_ / "old.npy"), "old");
  EXPECT_TRUE(fs::is_symlink(work_ + "/nc0/sg00/value_p0.npy.meta"));
}

TEST_F(MaterializeTest, TemporariesOfAKilledRunAreRemoved) {
  MakeWorkDir();
  Make({"example"});
  fs::create_directory(work_ + "/transposed_inputs");
  // pid 2^22+1 is above Linux's pid_max limit, so no process has it.
  const std::string stale = work_ + "/transposed_inputs/.value_p0.npy.tmp-4194305-0-00";
  WriteFile(stale, "half a file");
  WriteFile(work_ + "/sg00/.value_p0.npy.tmp-link-4194305-1", "x");
  ProcessResult r = Materialize();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("removed 2 temporary file(s)"));
  EXPECT_THAT(HiddenEntries(work_), ::testing::IsEmpty());
}

TEST_F(MaterializeTest, UsageAndMissingDir) {
  EXPECT_EQ(RunTool({"materialize"}).exit_code, 2);
  ProcessResult r = RunTool({"materialize", temp_ / "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E304"));
  r = RunTool({"materialize", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--verify"));
}

}  // namespace
}  // namespace iotx::test
