#include "int_list.h"

#include <charconv>

#include <fmt/format.h>

namespace iotx::cli {
namespace {

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

Expected<std::vector<int64_t>> ParseIntList(std::string_view text) {
  std::string_view body = Trim(text);
  if (!body.empty() && body.front() == '[') {
    if (body.back() != ']') {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' opens '[' but does not close it", text));
    }
    body = Trim(body.substr(1, body.size() - 2));
  }
  std::vector<int64_t> values;
  if (body.empty()) return values;
  size_t start = 0;
  for (;;) {
    const size_t comma = body.find(',', start);
    const std::string_view item =
        Trim(body.substr(start, comma == std::string_view::npos ? body.npos : comma - start));
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("item {} '{}' is {} (expected comma-separated integers like "
                              "6144,256)",
                              values.size(), item,
                              ec == std::errc::result_out_of_range ? "outside int64"
                                                                   : "not an integer"));
    }
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

}  // namespace iotx::cli
