#include "producer_test_util.h"

#include <filesystem>
#include <stdexcept>

namespace iotx::test {

ProcessResult RunCheck(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {IOTX_PYTHON,
                                   std::string(IOTX_SOURCE_DIR) + "/tests/producer/producer_check.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

std::string Snapshot(const std::string& dir) {
  ProcessResult r = RunCheck({"snapshot", dir});
  if (r.exit_code != 0) throw std::runtime_error("snapshot failed: " + r.err);
  return r.out;
}

std::vector<std::string> HiddenEntries(const std::string& dir) {
  std::vector<std::string> hidden;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with(".")) hidden.push_back(entry.path());
  }
  return hidden;
}

}  // namespace iotx::test
