#include "bench_cases.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace iotx::bench {
namespace {

bool ParseList(const std::string& text, std::vector<int64_t>& out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size()) return false;
    out.push_back(v);
  }
  return true;
}

}  // namespace

Expected<std::vector<BenchCase>> ReadBenchCases(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Fail(Error(ErrorCode::kIoOpen, "cannot open the benchmark case list").InFile(path));
  std::vector<BenchCase> cases;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::stringstream ss(line);
    std::string id, dtype, shape, perm;
    if (!(ss >> id)) continue;
    BenchCase c;
    c.id = id;
    auto dt = (ss >> dtype) ? ParseDType(dtype) : Fail(ErrorCode::kUnknownDType, "missing dtype");
    if (!dt || !(ss >> shape >> perm) || !ParseList(shape, c.shape) || !ParseList(perm, c.perm)) {
      return Fail(Error(ErrorCode::kInvalidArgument,
                        fmt::format("line {}: expected \"id dtype shape perm\", e.g. "
                                    "\"b1 f32 8192,8192 1,0\"", line_no))
                      .InFile(path)
                      .AtElement(line_no));
    }
    c.dtype = *dt;
    c.bytes = static_cast<int64_t>(ElementSize(c.dtype));
    for (int64_t n : c.shape) c.bytes *= n;
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace iotx::bench
