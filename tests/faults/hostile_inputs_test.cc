// Hostile inputs against the built tool: pickles that would run os.system, .npy and
// safetensors files whose sizes lie, deeply nested and huge-numbered JSON, non-UTF-8 names and
// names with path separators, in every place a command takes them. Every run must end with
// exit status 0, 1 or 2 (never a signal), print no crash or escaped exception, give a coded
// diagnostic when it fails, leave everything as it was when it fails, write nothing outside
// its output dir when it succeeds, and never run the pickled command.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "faults/fault_support.h"
#include "io/npy.h"
#include "io/pickle.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "wrap/wrap_fixtures.h"

namespace iotx::test {
namespace {

namespace fs = std::filesystem;

struct HostileCase {
  std::string name;
  std::map<std::string, std::string> files;  // path relative to the case dir -> bytes
  std::vector<std::string> args;             // run in the case dir
};

std::string Le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

// A .npy file: magic, version, the header dict padded with spaces to 64 bytes (as numpy pads),
// then `data`. `header_len` overrides the length field when not negative.
std::string Npy(const std::string& dict, const std::string& data, int major = 1,
                int64_t header_len = -1) {
  const size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const uint64_t len = header_len >= 0 ? static_cast<uint64_t>(header_len) : header.size();
  return std::string("\x93NUMPY") + static_cast<char>(major) + '\0' +
         Le(len, major == 1 ? 2 : 4) + header + data;
}

// A safetensors file: the header length (`declared` when not negative), the JSON, the data.
std::string Safetensors(const std::string& json, const std::string& data, int64_t declared = -1) {
  return Le(declared >= 0 ? static_cast<uint64_t>(declared) : json.size(), 8) + json + data;
}

const std::string kGoodNpy = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                 std::string(24, '\x01'));

class HostileInputTest : public ::testing::Test {
 protected:
  // Runs every case in its own directory and checks the rules in the file comment. With
  // `must_refuse`, every case must also fail: exit status 1 with a coded diagnostic.
  void RunCases(const std::vector<HostileCase>& cases, bool must_refuse = false) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const HostileCase& c = cases[i];
      SCOPED_TRACE("case " + c.name);
      const std::string dir = temp_ / ("case" + std::to_string(i));
      fs::create_directories(dir + "/out");
      for (const auto& [path, bytes] : c.files) {
        fs::create_directories(fs::path(dir + "/" + path).parent_path());
        WriteFile(dir + "/" + path, bytes);
      }
      const Tree before = SnapshotTree(temp_.path());
      const ProcessResult result = RunToolWith(c.args, {.cwd = dir});
      EXPECT_EQ(result.signal, 0) << "killed by signal " << result.signal << "\n" << result.err;
      EXPECT_TRUE(result.exit_code >= 0 && result.exit_code <= 2) << result.exit_code;
      if (must_refuse) {
        EXPECT_EQ(result.exit_code, 1) << "not refused:\n" << result.out;
      }
      EXPECT_FALSE(LooksLikeCrash(result.err)) << result.err;
      EXPECT_FALSE(fs::exists(Marker())) << "the pickled command ran";
      const Tree after = SnapshotTree(temp_.path());
      if (result.exit_code == 1) {
        EXPECT_TRUE(HasErrorCode(result.err)) << result.err;
      }
      if (result.exit_code != 0) {
        EXPECT_EQ(after, before) << "a failed run changed files:\n" << DescribeTree(after);
      } else {
        const std::string mine = "case" + std::to_string(i) + "/";
        for (const auto& [path, entry] : after) {
          const bool allowed = path.rfind(mine + "out", 0) == 0 || path.rfind(mine + "work", 0) == 0;
          auto was = before.find(path);
          if (!allowed) {
            EXPECT_TRUE(was != before.end() && was->second == entry) << "wrote " << path;
          }
        }
      }
      fs::remove_all(dir);
      if (HasFailure()) return;
    }
  }

  std::string Marker() const { return temp_ / "MARKER"; }

  // The tool commands that read a tensor file `file` of input "a".
  std::vector<std::vector<std::string>> TensorCommands(const std::string& file, bool npy) {
    std::vector<std::vector<std::string>> commands;
    if (npy) {
      commands.push_back({"apply", "--io-transposes", "io.json", "--input", "a=" + file,
                          "--out-dir", "out", "--quiet"});
    } else {
      commands.push_back(
          {"apply", "--io-transposes", "io.json", "--inputs", file, "--out-dir", "out", "--quiet"});
      commands.push_back({"apply", "--io-transposes", "io.json", "--inputs", file, "--out-dir",
                          "out", "--format", "npy", "--quiet"});
    }
    return commands;
  }

  // Cases that feed `bytes` as a tensor file to apply (and, for pickles, as a work dir's
  // inp-000.p to materialize).
  void AddTensorCases(std::vector<HostileCase>& cases, const std::string& name,
                      const std::string& bytes, const std::string& ext) {
    const std::string file = "in" + ext;
    for (auto& args : TensorCommands(file, ext == ".npy")) {
      cases.push_back({name + " via " + args[0], {{file, bytes}, {"io.json", kSpecA}}, args});
    }
    if (ext == ".p") {
      cases.push_back({name + " via materialize",
                       {{"work/inp-000.p", bytes}, {"work/io_transposes.json", kSpecA},
                        {"work/sg00/.keep", ""}},
                       {"materialize", "work", "--verify"}});
    }
  }

  TempDir temp_;
};

TEST_F(HostileInputTest, PicklesThatWouldRunCodeAreRefused) {
  const std::string touch = "touch " + Marker();
  auto short_str = [](const std::string& s) { return "X" + Le(s.size(), 4) + s; };
  std::vector<std::pair<std::string, std::string>> pickles = {
      // Protocol 0: GLOBAL + TUPLE + REDUCE.
      {"p0 os.system", "cos\nsystem\n(S'" + touch + "'\ntR."},
      // Protocol 2: the call as a dict value after a harmless key.
      {"p2 posix.system in a dict",
       "\x80\x02}q\x00" + short_str("a") + "cposix\nsystem\nq\x01" + short_str(touch) +
           "\x85q\x02Rq\x03s."},
      // Protocol 4: STACK_GLOBAL with the names as short strings, inside a FRAME.
      {"p4 stack_global",
       [&] {
         std::string body = std::string("\x8c\x02os\x94\x8c\x06system\x94\x93\x94") + "\x8c" +
                            static_cast<char>(touch.size()) + touch + "\x94\x85\x94R\x94.";
         return "\x80\x04\x95" + Le(body.size(), 8) + body;
       }()},
      // An allowed global (_reconstruct) handed a forbidden one as its class.
      {"p2 _reconstruct(os.system)",
       "\x80\x02" "cnumpy.core.multiarray\n_reconstruct\nq\x00cos\nsystem\nq\x01" +
           short_str(touch) + "\x85q\x02Rq\x03."},
      // builtins.eval and subprocess.Popen.
      {"p2 builtins.eval", "\x80\x02" "cbuiltins\neval\n" + short_str("__import__('os').system('" + touch + "')") + "\x85R."},
      {"p2 subprocess.Popen", "\x80\x02" "csubprocess\nPopen\n" + short_str(touch) + "\x85R."},
  };
  // The same attack as Python's pickle writes it, at every protocol, after a real array:
  // first shown to run on Python's own loader (so the file really is an attack).
  if (PythonHasNumpy()) {
    const std::string make = R"(
import os, pickle, sys, numpy as np
class Evil:
    def __reduce__(self):
        return (os.system, (sys.argv[1],))
for p in range(0, pickle.HIGHEST_PROTOCOL + 1):
    data = pickle.dumps({'a': np.zeros((2, 3), np.float32), 'b': Evil()}, protocol=p)
    sys.stdout.write(data.hex() + '\n')
)";
    ProcessResult made = RunPython(make, {"touch " + Marker()});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    std::istringstream lines(made.out);
    std::string hex;
    int protocol = 0;
    while (std::getline(lines, hex)) {
      std::string bytes;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
      }
      pickles.push_back({"python protocol " + std::to_string(protocol++), bytes});
    }
    // Python's loader runs it:
    const std::string proof = temp_ / "proof.p";
    WriteFile(proof, pickles.back().second);
    ASSERT_EQ(RunPython("import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))", {proof})
                  .exit_code,
              0);
    ASSERT_TRUE(fs::exists(Marker())) << "the Python-made pickle is not an attack";
    fs::remove(Marker());
    fs::remove(proof);
  }

  std::vector<HostileCase> cases;
  for (const auto& [name, bytes] : pickles) AddTensorCases(cases, name, bytes, ".p");
  // Refused, not merely survived: a run that exits 0 has read the pickle as data.
  RunCases(cases, /*must_refuse=*/true);
  EXPECT_FALSE(fs::exists(Marker()));
}

TEST_F(HostileInputTest, RefusedPicklesNameTheForbiddenGlobal) {
  fs::create_directories(temp_ / "out");
  WriteFile(temp_ / "io.json", kSpecA);
  WriteFile(temp_ / "evil.p", "cos\nsystem\n(S'touch " + Marker() + "'\ntR.");
  const ProcessResult r = RunToolWith(
      {"apply", "--io-transposes", "io.json", "--inputs", "evil.p", "--out-dir", "out"},
      {.cwd = temp_.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("iotx: error: IOTX_E211 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("os"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("system"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Marker()));
}

TEST_F(HostileInputTest, NpyFilesWithLyingHeaders) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  std::vector<std::pair<std::string, std::string>> files = {
      {"shape far larger than the data", Npy(f4 + "(1000000000,), }", std::string(16, 'x'))},
      {"product overflows int64", Npy(f4 + "(4611686018427387904, 4), }", std::string(16, 'x'))},
      {"dimension beyond int64", Npy(f4 + "(99999999999999999999999999999,), }", "")},
      {"negative dimension", Npy(f4 + "(-1,), }", "")},
      {"data one byte short", Npy(f4 + "(2, 3), }", std::string(23, 'x'))},
      {"trailing bytes after the data", Npy(f4 + "(2, 3), }", std::string(1 << 20, 'x'))},
      {"header length past the end", Npy(f4 + "(2, 3), }", "", 1, 0xffff)},
      {"v2 header length of 4 GiB", Npy(f4 + "(2, 3), }", "", 2, 0xfffffff0)},
      {"zero header length", Npy(f4 + "(2, 3), }", std::string(24, 'x'), 1, 0)},
      {"element size beyond int64",
       Npy("{'descr': '<f99999999999999999999999', 'fortran_order': False, 'shape': (2, 3), }",
           std::string(24, 'x'))},
      {"deeply nested shape", Npy(f4 + std::string(100000, '(') + std::string(100000, ')') + ", }",
                                  "")},
      {"deeply nested dict", Npy(std::string(100000, '{'), "")},
      {"object dtype", Npy("{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }",
                           std::string(48, 'x'))},
      {"not a dict", Npy("__import__('os').system('touch " + Marker() + "')", "")},
      {"just the magic", "\x93NUMPY"},
  };
  std::vector<HostileCase> cases;
  for (const auto& [name, bytes] : files) AddTensorCases(cases, name, bytes, ".npy");
  RunCases(cases);
}

TEST_F(HostileInputTest, SafetensorsWithLyingHeaders) {
  const std::string data24(24, '\x02');
  auto tensor = [](const std::string& name, const std::string& rest) {
    return "{\"" + name + "\": {" + rest + "}}";
  };
  const std::string f32_23 = R"("dtype": "F32", "shape": [2, 3], )";
  std::vector<std::pair<std::string, std::string>> files = {
      {"header length 2^64-1", std::string(8, '\xff') + "{}"},
      {"header length past the end", Safetensors(tensor("a", f32_23 + R"("data_offsets": [0, 24])"), data24, 1 << 30)},
      {"offsets past the end", Safetensors(tensor("a", f32_23 + R"("data_offsets": [0, 1000000000000])"), data24)},
      {"offsets beyond uint64", Safetensors(tensor("a", f32_23 + R"("data_offsets": [0, 18446744073709551616])"), data24)},
      {"float offsets", Safetensors(tensor("a", f32_23 + R"("data_offsets": [0, 1e400])"), data24)},
      {"size does not match shape", Safetensors(tensor("a", f32_23 + R"("data_offsets": [0, 20])"), std::string(20, 'x'))},
      {"shape overflows", Safetensors(tensor("a", R"("dtype": "F32", "shape": [4611686018427387904, 4611686018427387904], "data_offsets": [0, 24])"), data24)},
      {"overlapping tensors",
       Safetensors(R"({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, "b": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})", data24)},
      {"deeply nested header", Safetensors(std::string(100000, '['), "")},
      {"non-UTF-8 name", Safetensors(tensor("\xff\xfe", f32_23 + R"("data_offsets": [0, 24])"), data24)},
      {"name climbing out", Safetensors(tensor("../../../evil", f32_23 + R"("data_offsets": [0, 24])"), data24)},
      {"name with a separator", Safetensors(tensor("a/b", f32_23 + R"("data_offsets": [0, 24])"), data24)},
      {"empty name", Safetensors(tensor("", f32_23 + R"("data_offsets": [0, 24])"), data24)},
      {"NUL in name", Safetensors(tensor("a\\u0000b", f32_23 + R"("data_offsets": [0, 24])"), data24)},
      {"unknown dtype", Safetensors(tensor("a", R"("dtype": "Q7", "shape": [2, 3], "data_offsets": [0, 24])"), data24)},
      {"shorter than the length field", std::string("\x10\x00\x00", 3)},
  };
  std::vector<HostileCase> cases;
  for (const auto& [name, bytes] : files) AddTensorCases(cases, name, bytes, ".safetensors");
  RunCases(cases);
}

TEST_F(HostileInputTest, HostileIoTransposesEverywhereOneIsRead) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto spec = [](const std::string& name, const std::string& reshape) {
    return "[{\"input_name\": \"" + name + "\", \"reshape\": " + reshape + ", \"transpose\": [1, 0]}]";
  };
  std::vector<std::pair<std::string, std::string>> jsons = {
      {"deep nesting", deep},
      {"deep objects", std::string(100000, '{')},
      {"number beyond double", spec("a", "[1e400, 1]")},
      {"number beyond uint64", spec("a", "[18446744073709551616, 1]")},
      {"product overflows", spec("a", "[9223372036854775807, 9223372036854775807]")},
      {"negative dims", spec("a", "[-2, -3]")},
      {"non-UTF-8 name", spec("\xff\xfe", "[2, 3]")},
      {"name climbing out", spec("../../evil", "[2, 3]")},
      {"name with a slash", spec("a/b", "[2, 3]")},
      {"name with a backslash", spec("a\\\\b", "[2, 3]")},
      {"name with NUL", spec("a\\u0000b", "[2, 3]")},
      {"dot-dot name", spec("..", "[2, 3]")},
      {"empty name", spec("", "[2, 3]")},
      {"lone surrogate name", spec("\\ud800", "[2, 3]")},
      {"1 MB name", spec(std::string(1 << 20, 'n'), "[2, 3]")},
  };
  const std::string module = LoadTextModule("jax_module.textproto").SerializeAsString();
  std::vector<HostileCase> cases;
  for (const auto& [name, json] : jsons) {
    cases.push_back({name + " via validate", {{"io.json", json}}, {"validate", "io.json"}});
    cases.push_back({name + " via apply",
                     {{"io.json", json}, {"a.npy", kGoodNpy}},
                     {"apply", "--io-transposes", "io.json", "--input", "a=a.npy", "--out-dir",
                      "out", "--quiet"}});
    cases.push_back({name + " via wrap",
                     {{"io.json", json}, {"m.pb", module}, {"n.neff", "NEFF"}},
                     {"wrap", "--hlo", "m.pb", "--neff", "n.neff", "--output", "out/w.pb",
                      "--io_transposes", "io.json"}});
  }
  RunCases(cases);
}

TEST_F(HostileInputTest, HostileNamesOnTheCommandLineAndInPickles) {
  std::vector<HostileCase> cases;
  for (const std::string& name : std::vector<std::string>{"../evil", "../../evil", "a/b", "a\\b",
                                                         "..", ".", "", "\xff\xfe",
                                                         std::string(300, 'n')}) {
    cases.push_back({"--input " + name,
                     {{"a.npy", kGoodNpy}, {"io.json", "[]"}},
                     {"apply", "--io-transposes", "io.json", "--input", name + "=a.npy",
                      "--out-dir", "out", "--quiet"}});
  }
  cases.push_back({"--input without =", {{"a.npy", kGoodNpy}, {"io.json", "[]"}},
                   {"apply", "--io-transposes", "io.json", "--input", "a.npy", "--out-dir", "out"}});
  cases.push_back({"empty --out-dir", {{"a.npy", kGoodNpy}, {"io.json", "[]"}},
                   {"apply", "--io-transposes", "io.json", "--input", "a=a.npy", "--out-dir", ""}});
  cases.push_back({"directory as --hlo", {{"d/x", ""}, {"n.neff", "N"}, {"io.json", "[]"}},
                   {"wrap", "--hlo", "d", "--neff", "n.neff", "--output", "out/w.pb",
                    "--io_transposes", "io.json"}});
  cases.push_back({"random bytes as a module", {{"m.pb", std::string("\x0a\xff\xff\xff\xff\x0f", 6)}, {"n.neff", "N"}, {"io.json", kSpecA}},
                   {"wrap", "--hlo", "m.pb", "--neff", "n.neff", "--output", "out/w.pb",
                    "--io_transposes", "io.json"}});
  cases.push_back({"inspect random bytes", {{"m.pb", std::string(1000, '\xff')}}, {"inspect", "m.pb"}});
  cases.push_back({"materialize on a file", {{"f", "x"}}, {"materialize", "f"}});
  cases.push_back({"materialize on nothing", {}, {"materialize", ""}});

  // Pickled dicts whose keys would become hostile file names: written by iotx's own writer
  // under a placeholder name of the same length, then patched to the hostile bytes.
  const std::vector<std::byte> data(24, std::byte{1});
  for (const std::string& key :
       std::vector<std::string>{"../evil", "a/b", "..", "\xff\xfe\xfd", "a\\b"}) {
    const std::string placeholder(key.size(), 'Q');
    io::Tensor a;
    a.name = placeholder;
    a.descr = "<f4";
    a.element_bits = 32;
    a.shape = {2, 3};
    a.stored = data;
    const std::string path = temp_ / "tmp.p";
    ASSERT_TRUE(io::WritePickle(path, std::vector<io::Tensor>{a}));
    std::string bytes = ReadFile(path);
    fs::remove(path);
    const size_t at = bytes.find(placeholder);
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, placeholder.size(), key);
    cases.push_back({"pickle key " + key + " via materialize",
                     {{"work/inp-000.p", bytes}, {"work/io_transposes.json", "[]"},
                      {"work/sg00/.keep", ""}},
                     {"materialize", "work", "--verify"}});
    cases.push_back({"pickle key " + key + " via apply",
                     {{"in.p", bytes}, {"io.json", "[]"}},
                     {"apply", "--io-transposes", "io.json", "--inputs", "in.p", "--out-dir",
                      "out", "--quiet"}});
  }
  RunCases(cases);
}

}  // namespace
}  // namespace iotx::test
