// `iotx apply` end to end: .npy, pickle and safetensors inputs, .npy and safetensors outputs,
// checked by producer_check.py against numpy; every error leaves no output file behind.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "files/direct_io.h"
#include "producer_test_util.h"
#include "support/page_cache.h"
#include "support/process.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy is not available";
  }
  void MakeCheckpoint(const std::string& format, int seed, int protocol = 4, bool large = false) {
    std::vector<std::string> args = {"checkpoint", in_,    "--seed",     std::to_string(seed),
                                     "--format",   format, "--protocol", std::to_string(protocol)};
    if (large) args.push_back("--large");
    ProcessResult r = RunCheck(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ProcessResult Apply(const std::vector<std::string>& inputs,
                      const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"apply", "--io-transposes", in_ + "/io_transposes.json"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"--out-dir", out_});
    args.insert(args.end(), extra.begin(), extra.end());
    return RunTool(args);
  }
  void ExpectOutput(const std::string& format, const std::string& name = "in.safetensors") {
    ProcessResult r = RunCheck({"check-apply", in_, out_, "--format", format, "--name", name});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  }
  // big.npy, a rows x cols f32 array of distinct values, and a spec that transposes it.
  void WriteBigTranspose(int rows, int cols) {
    const std::string shape = std::to_string(rows) + ", " + std::to_string(cols);
    ProcessResult r = RunPython(
        "import sys, numpy as np\n"
        "rows, cols = int(sys.argv[2]), int(sys.argv[3])\n"
        "a = (np.arange(rows * cols, dtype=np.uint32) * 2654435761 % 4294967291)\n"
        "np.save(sys.argv[1] + '/big.npy', a.astype(np.float32).reshape(rows, cols))\n",
        {in_, std::to_string(rows), std::to_string(cols)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    WriteFile(in_ + "/io_transposes.json",
              "[{\"input_name\": \"big\", \"reshape\": [" + shape + "], \"transpose\": [1, 0]}]");
  }
  // Python defining out(name): output tensor `name` read back with numpy from the out dir
  // (sys.argv[2]) in the format sys.argv[3], npy or safetensors (f32 data).
  static constexpr const char* kReadOutput =
      "import sys, json, numpy as np\n"
      "def out(name):\n"
      "    if sys.argv[3] == 'npy':\n"
      "        return np.load(sys.argv[2] + '/value_' + name + '.npy')\n"
      "    raw = open(sys.argv[2] + '/inputs.safetensors', 'rb').read()\n"
      "    n = int.from_bytes(raw[:8], 'little'); h = json.loads(raw[8:8 + n])[name]\n"
      "    s, e = h['data_offsets']\n"
      "    return np.frombuffer(raw[8 + n + s:8 + n + e], np.float32).reshape(h['shape'])\n";
  // No output at all: the out dir is missing or empty (no final file, no temporary).
  void ExpectNoOutput() {
    if (fs::exists(out_)) {
      EXPECT_TRUE(fs::is_empty(out_)) << "output left in " << out_;
    }
  }

  TempDir temp_;
  std::string in_ = temp_.path();
  std::string out_ = temp_ / "out/nested/new";  // created by apply, parents included
};

TEST_F(ApplyTest, NpyInputs) {
  for (int seed : {1, 2, 3}) {
    fs::remove_all(temp_ / "out");
    for (const auto& e : fs::directory_iterator(in_)) fs::remove_all(e.path());
    MakeCheckpoint("npy", seed);
    std::vector<std::string> inputs;
    for (const auto& e : fs::directory_iterator(in_)) {
      if (e.path().extension() != ".npy") continue;
      inputs.insert(inputs.end(), {"--input", e.path().stem().string() + "=" + e.path().string()});
    }
    ProcessResult r = Apply(inputs);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectOutput("npy");
  }
}

TEST_F(ApplyTest, PickleInputsOfEveryProtocol) {
  for (int protocol : {2, 3, 4, 5}) {
    SCOPED_TRACE("protocol " + std::to_string(protocol));
    fs::remove_all(temp_ / "out");
    MakeCheckpoint("pickle", 10 + protocol, protocol);
    ProcessResult r = Apply({"--inputs", in_ + "/in.p"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("wrote 8 files"));
    ExpectOutput("npy");
    fs::remove_all(temp_ / "out");
    r = Apply({"--inputs", in_ + "/in.p"}, {"--format", "safetensors"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectOutput("safetensors", "in.safetensors");
  }
}

TEST_F(ApplyTest, SafetensorsInAndOutKeepDTypeNamesAndMetadata) {
  for (int seed : {4, 5, 6}) {
    fs::remove_all(temp_ / "out");
    MakeCheckpoint("safetensors", seed);
    ProcessResult r = Apply({"--inputs", in_ + "/in.safetensors"});  // safetensors by default
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectOutput("safetensors");
    fs::remove_all(temp_ / "out");
    r = Apply({"--inputs", in_ + "/in.safetensors"}, {"--format", "npy", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    ExpectOutput("npy");
  }
}

// Durable outputs go to the disk with direct I/O where the file system has it, through the
// page cache with --buffered-writes; --no-sync takes the page cache below the kernel's
// dirty-page limit, and direct I/O with --direct-writes. Sources are read into buffers, or
// through their mappings with --read-buffer-mib 0; cached ones copied into buffers or permuted
// from the mapping (--cached-reads; the default measures which is cheaper here). Tensors whose
// sizes end mid-block, large ones with and without a spec, a header of any length, several
// files: every way agrees with numpy.
TEST_F(ApplyTest, DirectBufferedAndUnsyncedWritesAllMatchNumpy) {
  MakeCheckpoint("safetensors", 7, 4, /*large=*/true);
  for (const std::string format : {"safetensors", "npy"}) {
    for (const std::string way :
         {"", "--buffered-writes", "--no-sync", "--no-sync --direct-writes", "--read-buffer-mib 0",
          "--no-sync --read-buffer-mib 0", "--cached-reads map", "--cached-reads copy"}) {
      SCOPED_TRACE(format + " " + way);
      fs::remove_all(temp_ / "out");
      std::vector<std::string> extra = {"--format", format};
      for (size_t at = 0; at < way.size();) {
        const size_t end = std::min(way.find(' ', at), way.size());
        extra.push_back(way.substr(at, end - at));
        at = end + 1;
      }
      ProcessResult r = Apply({"--inputs", in_ + "/in.safetensors"}, extra);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ExpectOutput(format);
    }
  }
}

// What the ways of writing do to the page cache: an output written directly leaves (almost)
// none of its pages there, one written through it leaves them all. Where the durable default
// leaves them too, the file system has no direct I/O and the test has nothing to tell apart.
TEST_F(ApplyTest, DirectWritesLeaveThePageCacheAlone) {
  MakeCheckpoint("safetensors", 8, 4, /*large=*/true);
  const fs::path output = fs::path(out_) / "in.safetensors";
  const auto cached_after = [&](const std::vector<std::string>& extra) {
    fs::remove_all(temp_ / "out");
    ProcessResult r = Apply({"--inputs", in_ + "/in.safetensors"}, extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return CachedFraction(output);
  };
  const double durable = cached_after({});
  ASSERT_GE(durable, 0) << "mincore failed on " << output;
  if (durable > 0.5) GTEST_SKIP() << "no direct I/O on the file system of " << out_;
  EXPECT_LT(durable, 0.1);
  EXPECT_LT(cached_after({"--no-sync", "--direct-writes"}), 0.1);
  EXPECT_GT(cached_after({"--no-sync"}), 0.9);  // 19 MiB: far below any dirty-page limit
  EXPECT_GT(cached_after({"--buffered-writes"}), 0.9);
  ProcessResult r =
      Apply({"--inputs", in_ + "/in.safetensors"}, {"--direct-writes", "--buffered-writes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("excludes"));
}

// A tensor larger than the pipeline's chunk (16 MiB) is permuted and written in pieces: at a
// second piece whose file offset is not block-aligned (the .npy header before it), in a file
// written directly and in one written through the page cache, into .npy and safetensors.
TEST_F(ApplyTest, ATensorLargerThanAChunkArrivesWhole) {
  ASSERT_NO_FATAL_FAILURE(WriteBigTranspose(4099, 2053));
  ProcessResult r;
  for (const std::string format : {"npy", "safetensors"}) {
    for (const std::string way : {"--quiet", "--buffered-writes"}) {
      SCOPED_TRACE(format + " " + way);
      fs::remove_all(temp_ / "out");
      r = Apply({"--input", "big=" + in_ + "/big.npy"}, {"--format", format, way});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      r = RunPython(std::string(kReadOutput) +
                        "a = np.load(sys.argv[1] + '/big.npy')\n"
                        "b = out('big')\n"
                        "assert b.shape == (2053, 4099), b.shape\n"
                        "assert np.array_equal(b, a.T), np.argwhere(b != a.T)[:3]\n",
                    {in_, out_, format});
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
}

// A stacked tensor (its spec keeps the leading dim in place: experts, layers, a batch) larger
// than the pipeline's chunk is read and permuted a piece of whole slices at a time: the output
// is numpy's whether its slices are a multiple of the direct writes' block (b2: 520 KiB) or
// not (big: 8200 B), in files written directly and through the page cache, with its cached
// pieces copied into buffers or permuted from the mapping, and the peak memory does not grow
// with the batch (source buffers of the whole tensor grew it by twice the batch: 112 MiB
// against 73 for these two tensors), nor does mapping the cached pieces raise it above
// copying them.
TEST_F(ApplyTest, AStackedTensorIsReadAPieceAtATime) {
  const auto write = [&](int batch) {
    ProcessResult r = RunPython(
        "import sys, numpy as np\n"
        "def make(shape):\n"
        "    n = int(np.prod(shape))\n"
        "    return (np.arange(n, dtype=np.uint32) * 2654435761 % "
        "4294967291).astype(np.float32).reshape(shape)\n"
        "np.save(sys.argv[1] + '/big.npy', make((int(sys.argv[2]), 2, 1025)))\n"
        "np.save(sys.argv[1] + '/b2.npy', make((40, 256, 520)))\n",
        {in_, std::to_string(batch)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    WriteFile(in_ + "/io_transposes.json",
              "[{\"input_name\": \"big\", \"reshape\": [" + std::to_string(batch) +
                  ", 2, 1025], \"transpose\": [0, 2, 1]}, {\"input_name\": \"b2\", "
                  "\"reshape\": [40, 256, 520], \"transpose\": [0, 2, 1]}]");
  };
  const std::vector<std::string> inputs = {"--input", "big=" + in_ + "/big.npy", "--input",
                                           "b2=" + in_ + "/b2.npy"};
  ASSERT_NO_FATAL_FAILURE(write(5000));  // 41 MB: pieces of 12.6 MB (1536 slices) and the rest
  for (const std::string format : {"npy", "safetensors"}) {
    for (const std::string way : {"--quiet", "--buffered-writes", "map", "copy"}) {
      SCOPED_TRACE(format + " " + way);
      fs::remove_all(temp_ / "out");
      std::vector<std::string> extra = {"--format", format, "--quiet"};
      if (way.starts_with("--")) {
        extra.push_back(way);
      } else {
        extra.insert(extra.end(), {"--cached-reads", way});
      }
      ProcessResult r = Apply(inputs, extra);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      r = RunPython(std::string(kReadOutput) +
                        "for name in ('big', 'b2'):\n"
                        "    a = np.load(sys.argv[1] + '/' + name + '.npy')\n"
                        "    assert np.array_equal(out(name), a.transpose(0, 2, 1)), name\n",
                    {in_, out_, format});
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
  // Four times the batch: the same pieces, the same peak (within 24 MiB; whole-tensor source
  // buffers would add 2 x 123 MB), whether cached pieces are copied or mapped.
  std::vector<ProcessResult> small, large;
  for (const std::string way : {"copy", "map"}) {
    fs::remove_all(temp_ / "out");
    small.push_back(Apply(inputs, {"--quiet", "--cached-reads", way}));
    ASSERT_EQ(small.back().exit_code, 0) << small.back().err;
  }
  ASSERT_NO_FATAL_FAILURE(write(20000));
  for (const std::string way : {"copy", "map"}) {
    fs::remove_all(temp_ / "out");
    large.push_back(Apply(inputs, {"--quiet", "--cached-reads", way}));
    ASSERT_EQ(large.back().exit_code, 0) << large.back().err;
  }
  for (size_t way = 0; way < 2; ++way) {
    SCOPED_TRACE(way == 0 ? "copied" : "mapped");
    std::cout << (way == 0 ? "copied" : "mapped")
              << ": peak RSS with a batch of 41 / 164 MB: " << small[way].max_rss_kib / 1024
              << " / " << large[way].max_rss_kib / 1024 << " MiB\n";
    // Under a sanitizer the RSS includes shadow memory, which grows with the work done.
    if (!kSanitized) {
      EXPECT_LT(large[way].max_rss_kib - small[way].max_rss_kib, 24 * 1024);
    }
  }
  // Mapped pieces hold the buffers' places (no more in flight than copies): their pages weigh
  // no more than the buffers would (65 against 71 MiB here; 77 when a mapped piece held no
  // place and the reader ran a piece further ahead).
  if (!kSanitized) {
    EXPECT_LE(large[1].max_rss_kib, large[0].max_rss_kib + 2 * 1024);
  }
}

// A stacked tensor of which the page cache holds some pieces and not others, with cached reads
// mapped: the cached pieces are permuted from the mapping, and an uncached one is read from the
// disk directly and left out of the page cache, as a wholly uncached tensor is (deciding for
// the whole tensor mapped it all, 75 % being cached, and faulted the last piece in). The
// output is numpy's.
TEST_F(ApplyTest, APartlyCachedStackedTensorReadsItsUncachedPieceDirectly) {
  // Four pieces of 1536 slices of 8200 bytes (12.6 MB), after the .npy header.
  ProcessResult r = RunPython(
      "import sys, numpy as np\n"
      "a = (np.arange(6144 * 2050, dtype=np.uint32) * 2654435761 % 4294967291)\n"
      "np.save(sys.argv[1] + '/big.npy', a.astype(np.float32).reshape(6144, 2, 1025))\n",
      {in_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(in_ + "/io_transposes.json",
            "[{\"input_name\": \"big\", \"reshape\": [6144, 2, 1025], \"transpose\": [0, 2, 1]}]");
  const std::string input = in_ + "/big.npy";
  const uint64_t size = fs::file_size(input);
  const uint64_t piece = uint64_t{1536} * 8200;
  const uint64_t last = size - piece;  // the last piece's offset
  const int fd = open(input.c_str(), O_RDONLY | O_CLOEXEC);
  const bool direct = fd >= 0 && files::DirectIoAlignment(fd) != 0;
  if (fd >= 0) close(fd);
  if (!direct) GTEST_SKIP() << "no direct I/O on the file system of " << input;
  ASSERT_TRUE(DropFromPageCache(input));
  ASSERT_TRUE(CacheWithoutReadahead(input, 0, last));
  ASSERT_GT(CachedFraction(input, 0, last), 0.9);
  ASSERT_GE(CachedFraction(input, last), 0) << "mincore failed on " << input;
  ASSERT_LT(CachedFraction(input, last), 0.01);
  r = Apply({"--input", "big=" + input}, {"--quiet", "--cached-reads", "map"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double tail = CachedFraction(input, last);
  ASSERT_GE(tail, 0) << "mincore failed on " << input;
  EXPECT_LT(tail, 0.1);
  EXPECT_GT(CachedFraction(input, 0, last), 0.9);  // the cached pieces stay cached
  r = RunPython(
      "import sys, numpy as np\n"
      "a = np.load(sys.argv[1] + '/big.npy')\n"
      "b = np.load(sys.argv[2] + '/value_big.npy')\n"
      "assert np.array_equal(b, a.transpose(0, 2, 1)), np.argwhere(b != a.transpose(0, 2, "
      "1))[:3]\n",
      {in_, out_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A source the page cache does not hold (a checkpoint read for the first time) is read from the
// disk directly where the file system can: the output is numpy's, and the page cache is left
// without the input's pages (a conversion of hundreds of GB would otherwise push everything
// else out). Where the source is cached, it stays so.
TEST_F(ApplyTest, AnUncachedSourceIsReadDirectlyAndLeftOutOfThePageCache) {
  ASSERT_NO_FATAL_FAILURE(WriteBigTranspose(3001, 1999));
  ProcessResult r;
  const std::string input = in_ + "/big.npy";
  const auto check = [&] {
    r = RunPython(
        "import sys, numpy as np\n"
        "a = np.load(sys.argv[1] + '/big.npy')\n"
        "b = np.load(sys.argv[2] + '/value_big.npy')\n"
        "assert np.array_equal(b, a.T), np.argwhere(b != a.T)[:3]\n",
        {in_, out_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  ASSERT_TRUE(DropFromPageCache(input));
  const double before = CachedFraction(input);
  ASSERT_GE(before, 0) << "mincore failed on " << input;
  ASSERT_LT(before, 0.01);
  r = Apply({"--input", "big=" + input}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double after = CachedFraction(input);
  check();  // numpy reads the input: from here on it is cached
  const int fd = open(input.c_str(), O_RDONLY | O_CLOEXEC);
  const bool direct = fd >= 0 && files::DirectIoAlignment(fd) != 0;
  if (fd >= 0) close(fd);
  if (!direct) GTEST_SKIP() << "no direct I/O on the file system of " << input;
  // Not zero: parsing the header faults its page in through the mapping, and the kernel reads
  // around a fault (read_ahead_kb, 8 MiB on this project's VM: 35 % of the 24 MB input).
  EXPECT_LT(after, 0.5);
  fs::remove_all(temp_ / "out");
  r = Apply({"--input", "big=" + input}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(CachedFraction(input), 0.9);
  check();
}

TEST_F(ApplyTest, ARepeatedNameKeepsTheFirstWithAWarning) {
  MakeCheckpoint("pickle", 7);
  const std::string specs = ReadFile(in_ + "/io_transposes.json");
  // Append a conflicting duplicate of the first spec: identity on a flat view.
  ProcessResult r = RunPython(
      "import json, sys, pickle, numpy as np\n"
      "s = json.load(open(sys.argv[1])); t = pickle.load(open(sys.argv[2], 'rb'))\n"
      "n = s[0]['input_name']; s.append({'input_name': n, 'reshape': [int(t[n].size)],"
      " 'transpose': [0]})\n"
      "json.dump(s, open(sys.argv[1], 'w'))\n",
      {in_ + "/io_transposes.json", in_ + "/in.p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(ReadFile(in_ + "/io_transposes.json"), specs);
  r = Apply({"--inputs", in_ + "/in.p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: IOTX_E116"));
  ExpectOutput("npy");  // producer_check.py applies the first spec of each name
}

// A small tensor followed by a large one, as .npy inputs, with specs for both.
class ApplyErrorTest : public ApplyTest {
 protected:
  void SetUp() override {
    ApplyTest::SetUp();
    if (IsSkipped()) return;
    ProcessResult r = RunPython(
        "import sys, numpy as np\n"
        "d = sys.argv[1]\n"
        "np.save(d + '/small.npy', np.arange(12, dtype=np.float32).reshape(3, 4))\n"
        "np.save(d + '/big.npy', np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024))\n",
        {in_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    WriteSpecs(
        "[{\"input_name\": \"small\", \"reshape\": [3, 4], \"transpose\": [1, 0]},"
        " {\"input_name\": \"big\", \"reshape\": [1024, 1024], \"transpose\": [1, 0]}]");
  }
  void WriteSpecs(const std::string& json) { WriteFile(in_ + "/io_transposes.json", json); }
  ProcessResult ApplyBoth(const std::vector<std::string>& extra = {}) {
    return Apply({"--input", "small=" + in_ + "/small.npy", "--input", "big=" + in_ + "/big.npy"},
                 extra);
  }
  void ExpectFailure(const ProcessResult& r, const std::string& code,
                     const std::vector<std::string>& details) {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("iotx: error: " + code));
    for (const std::string& d : details) EXPECT_THAT(r.err, HasSubstr(d));
    ExpectNoOutput();
  }
};

TEST_F(ApplyErrorTest, TheHappyPathWritesBoth) {
  ProcessResult r = ApplyBoth();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectOutput("npy");
}

TEST_F(ApplyErrorTest, SizeMismatchNamesTheInputAndBothShapes) {
  WriteSpecs("[{\"input_name\": \"big\", \"reshape\": [1024, 1023], \"transpose\": [1, 0]}]");
  ExpectFailure(ApplyBoth(), "NCC_IHNW003", {"big", "[1024, 1023]", "[1024, 1024]"});
}

TEST_F(ApplyErrorTest, ASpecForAnInputNotGiven) {
  WriteSpecs("[{\"input_name\": \"absent\", \"reshape\": [2], \"transpose\": [0]}]");
  ExpectFailure(ApplyBoth(), "IOTX_E117", {"absent", "small"});
}

TEST_F(ApplyErrorTest, UnreadableFiles) {
  ExpectFailure(Apply({"--input", "x=" + in_ + "/missing.npy"}), "IOTX_E300", {"missing.npy"});
  ExpectFailure(Apply({"--inputs", in_ + "/missing.p"}), "IOTX_E300", {"missing.p"});
  WriteFile(in_ + "/bad.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\": ", 14));
  ExpectFailure(Apply({"--inputs", in_ + "/bad.safetensors"}), "IOTX_E220", {"bad.safetensors"});
  ExpectFailure(Apply({"--inputs", in_ + "/small.npy"}), "IOTX_E400", {"--input NAME="});
  const std::string npy = ReadFile(in_ + "/big.npy");
  WriteFile(in_ + "/truncated.npy", npy.substr(0, npy.size() / 2));
  ExpectFailure(Apply({"--input", "t=" + in_ + "/truncated.npy"}), "IOTX_E200", {"truncated.npy"});
  fs::remove(in_ + "/io_transposes.json");
  ExpectFailure(Apply({"--input", "small=" + in_ + "/small.npy"}), "IOTX_E300",
                {"io_transposes.json"});
}

TEST_F(ApplyErrorTest, APlantedSymlinkInTheOutDirIsNotWrittenThrough) {
  TempDir outside;
  WriteFile(outside / "victim", "precious");
  fs::create_directories(out_);
  fs::create_symlink(outside / "victim", out_ + "/value_big.npy");
  ProcessResult r = ApplyBoth();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E303"));
  EXPECT_EQ(ReadFile(outside / "victim"), "precious");
  EXPECT_FALSE(fs::exists(out_ + "/value_small.npy")) << "written before the check";
}

TEST_F(ApplyErrorTest, OutDirBeingAFile) {
  fs::create_directories(temp_ / "out/nested");
  WriteFile(out_, "a file");
  ProcessResult r = ApplyBoth();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E304"));
  EXPECT_EQ(ReadFile(out_), "a file");
}

TEST_F(ApplyErrorTest, AnOutputThatIsAnInputIsRefusedUntouched) {
  // value_small.npy given as the input of `small` in the out dir itself: the output would
  // replace the file it is read from, and a second run would permute it again.
  fs::create_directories(out_);
  fs::copy_file(in_ + "/small.npy", out_ + "/value_small.npy");
  const std::string before = ReadFile(out_ + "/value_small.npy");
  ProcessResult r = Apply(
      {"--input", "small=" + out_ + "/value_small.npy", "--input", "big=" + in_ + "/big.npy"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("iotx: error: IOTX_E307"));
  EXPECT_THAT(r.err, HasSubstr("value_small.npy: this output is the input file"));
  EXPECT_EQ(ReadFile(out_ + "/value_small.npy"), before);
  // A hard link is the same file under another name.
  fs::create_hard_link(in_ + "/big.npy", out_ + "/value_big.npy");
  r = ApplyBoth();
  EXPECT_THAT(r.err, HasSubstr("IOTX_E307"));
  EXPECT_EQ(ReadFile(in_ + "/big.npy"), ReadFile(out_ + "/value_big.npy"));
}

TEST_F(ApplyErrorTest, AnInputNamedLikeAStaleTemporaryOfItsOutputStays) {
  // An input in the out dir whose name spells a dead writer's temporary of the output it
  // becomes (the pid above Linux's largest pid_max): the cleanup of killed runs'
  // temporaries, which runs before the first write, leaves it.
  fs::create_directories(out_);
  const std::string input = out_ + "/.value_small.npy.tmp-4194305-1-0";
  fs::copy_file(in_ + "/small.npy", input);
  ProcessResult r = Apply({"--input", "small=" + input, "--input", "big=" + in_ + "/big.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(input)) << "the input was removed as a stale temporary";
  EXPECT_EQ(ReadFile(input), ReadFile(in_ + "/small.npy"));
  r = RunPython(
      "import sys, numpy as np\n"
      "assert (np.load(sys.argv[1]) == np.load(sys.argv[2]).T).all()\n",
      {out_ + "/value_small.npy", in_ + "/small.npy"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ApplyErrorTest, AnOutputNameWithNoRoomForItsTemporaryIsRefusedFirst) {
  // A 200-byte file name exists as the input, but the output of that name is written through
  // a temporary up to 64 bytes longer, past NAME_MAX (255): refused before the out dir is
  // made, where the write would have failed only on reaching it.
  const std::string input = in_ + "/" + std::string(188, 's') + ".safetensors";
  ProcessResult made = RunPython(
      "import json, struct, sys\n"
      "h = json.dumps({'t': {'dtype': 'U8', 'shape': [8], 'data_offsets': [0, 8]}}).encode()\n"
      "h += b' ' * (-len(h) % 8)\n"
      "open(sys.argv[1], 'wb').write(struct.pack('<Q', len(h)) + h + bytes(8))\n",
      {input});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  WriteSpecs("[]");
  ExpectFailure(Apply({"--inputs", input}), "IOTX_E302",
                {"the file name is 200 bytes", "at most 191 can be written"});
  EXPECT_FALSE(fs::exists(out_)) << "the out dir was made before the check";
}

TEST_F(ApplyErrorTest, AnEmptyReshapeNoReaderCouldMakeIsRefused) {
  // numpy makes (0, 2**60) float32 but refuses (0, 2**61): the other extents of an empty
  // array must still fit 2^63 bytes, or np.load of the output would fail.
  ProcessResult r = RunPython(
      "import sys, numpy as np\n"
      "np.save(sys.argv[1], np.zeros((0, 4), np.float32))\n"
      "np.zeros((0, 2**60), np.float32)\n",
      {in_ + "/empty.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteSpecs(
      "[{\"input_name\": \"e\", \"reshape\": [0, 2305843009213693952], "
      "\"transpose\": [1, 0]}]");
  ExpectFailure(Apply({"--input", "e=" + in_ + "/empty.npy"}), "IOTX_E112",
                {"[0, 2305843009213693952]", "4-byte elements"});
  WriteSpecs(
      "[{\"input_name\": \"e\", \"reshape\": [0, 1152921504606846976], "
      "\"transpose\": [1, 0]}]");
  r = Apply({"--input", "e=" + in_ + "/empty.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunPython("import sys, numpy as np\nprint(np.load(sys.argv[1]).shape)\n",
                {out_ + "/value_e.npy"});
  EXPECT_EQ(r.out, "(1152921504606846976, 0)\n") << r.err;
}

TEST_F(ApplyErrorTest, AnUnsafeTensorNameForNpyOutput) {
  ProcessResult r = RunPython(
      "import sys, pickle, numpy as np\n"
      "pickle.dump({'../up': np.zeros(4, np.float32)}, open(sys.argv[1], 'wb'))\n",
      {in_ + "/evil.p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteSpecs("[]");
  ExpectFailure(Apply({"--inputs", in_ + "/evil.p"}), "IOTX_E115", {"../up"});
  // Safetensors output has no per-name file: that works.
  r = Apply({"--inputs", in_ + "/evil.p"}, {"--format", "safetensors"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A write failing midway (the file size limit makes fallocate fail with EFBIG for the big
// tensor): the file finished before stays complete, the failing one leaves nothing.
TEST_F(ApplyErrorTest, AFailedWriteLeavesNoPartialFile) {
  const std::string command =
      "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\"";  // 512 KiB: small fits, big not
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   command,
                                   IOTX_TOOL_PATH,
                                   "apply",
                                   "--io-transposes",
                                   in_ + "/io_transposes.json",
                                   "--input",
                                   "small=" + in_ + "/small.npy",
                                   "--input",
                                   "big=" + in_ + "/big.npy",
                                   "--out-dir",
                                   out_};
  ProcessResult r = RunProcess(argv);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E302"));
  EXPECT_THAT(r.err, HasSubstr("value_big.npy"));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(out_)) files.push_back(e.path().filename());
  EXPECT_EQ(files, std::vector<std::string>{"value_small.npy"});
  ProcessResult loads = RunPython(
      "import sys, numpy as np\n"
      "a = np.load(sys.argv[1]); assert (a == np.arange(12, dtype=np.float32).reshape(3, 4).T)"
      ".all(), a\n",
      {out_ + "/value_small.npy"});
  EXPECT_EQ(loads.exit_code, 0) << loads.err;

  fs::remove_all(temp_ / "out");
  argv.insert(argv.end(), {"--format", "safetensors"});
  r = RunProcess(argv);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("IOTX_E302"));
  ExpectNoOutput();
}

TEST_F(ApplyErrorTest, UsageErrors) {
  const std::string specs = in_ + "/io_transposes.json";
  EXPECT_EQ(RunTool({"apply", "--io-transposes", specs, "--out-dir", out_}).exit_code, 2);
  EXPECT_EQ(RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--input",
                     "small=" + in_ + "/small.npy", "--inputs", in_ + "/x.p"})
                .exit_code,
            2);
  EXPECT_EQ(
      RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--input", in_ + "/small.npy"})
          .exit_code,
      2);
  EXPECT_EQ(RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--input",
                     "a=" + in_ + "/small.npy", "--input", "a=" + in_ + "/big.npy"})
                .exit_code,
            2);
  EXPECT_EQ(RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--inputs", in_ + "/x.p",
                     "--format", "hdf5"})
                .exit_code,
            2);
  for (const std::string mib : {"-1", "x", "16777217", ""}) {
    ProcessResult r = RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--input",
                               "small=" + in_ + "/small.npy", "--read-buffer-mib", mib});
    EXPECT_EQ(r.exit_code, 2) << mib;
    EXPECT_THAT(r.err, HasSubstr("--read-buffer-mib")) << mib;
  }
  for (const std::string way : {"mapped", "", "MAP"}) {
    ProcessResult r = RunTool({"apply", "--io-transposes", specs, "--out-dir", out_, "--input",
                               "small=" + in_ + "/small.npy", "--cached-reads", way});
    EXPECT_EQ(r.exit_code, 2) << way;
    EXPECT_THAT(r.err, HasSubstr("--cached-reads")) << way;
  }
  ExpectNoOutput();
  ProcessResult help = RunTool({"apply", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--io-transposes"));
}

}  // namespace
}  // namespace iotx::test
