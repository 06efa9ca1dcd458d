#include "iotx/status.h"

#include <array>

namespace iotx {
namespace {

struct CodeEntry {
  std::string_view name;
  std::string_view summary;
};

constexpr CodeEntry kCodes[] = {
#define IOTX_ERROR_CODE(enumerator, code, summary) {code, summary},
#include "iotx/error_codes.inc"
#undef IOTX_ERROR_CODE
};

}  // namespace

std::string_view CodeName(ErrorCode code) { return kCodes[static_cast<size_t>(code)].name; }
std::string_view CodeSummary(ErrorCode code) {
  return kCodes[static_cast<size_t>(code)].summary;
}

const std::vector<ErrorCode>& AllErrorCodes() {
  static const std::vector<ErrorCode> all = {
#define IOTX_ERROR_CODE(enumerator, code, summary) ErrorCode::enumerator,
#include "iotx/error_codes.inc"
#undef IOTX_ERROR_CODE
  };
  return all;
}

std::string Error::ToString() const {
  // CODE [file: ][element N, ][key "k": ]message
  std::string location;
  auto add = [&location](const std::string& part) {
    if (!location.empty()) location += ", ";
    location += part;
  };
  if (element >= 0) add("element " + std::to_string(element));
  if (!key.empty()) add("key \"" + key + "\"");

  std::string out(CodeName(code));
  out += ' ';
  if (!file.empty()) out += file + ": ";
  if (!location.empty()) out += location + ": ";
  out += message;
  return out;
}

}  // namespace iotx
