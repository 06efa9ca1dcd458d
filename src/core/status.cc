#include "iotx/status.h"

#include <cstdio>
#include <cstdlib>

#include "core/text.h"

namespace iotx {
namespace {

// The most bytes of a message ToString() prints. Real messages are under 1 KiB; one that
// echoes a megabyte of input should not become a megabyte of log.
constexpr size_t kMaxMessageBytes = 4096;

struct CodeEntry {
  ErrorCode code;
  std::string_view name;
  std::string_view summary;
};

constexpr CodeEntry kCodes[] = {
#define IOTX_ERROR_CODE(enumerator, value, code, summary) {ErrorCode::enumerator, #code, summary},
#include "iotx/error_codes.inc"
#undef IOTX_ERROR_CODE
};

// The value of a code follows from its string (error_codes.inc): IOTX_Ennn is nnn,
// NCC_IIOTnnn 1000 + nnn, NCC_IHNWnnn 1100 + nnn. Checked here so a typo cannot ship.
constexpr int ValueOf(std::string_view name) {
  int base = name.starts_with("IOTX_E") ? 0 : name.starts_with("NCC_IIOT") ? 1000 : 1100;
  int digits = 0;
  for (char c : name.substr(name.size() - 3)) digits = digits * 10 + (c - '0');
  return base + digits;
}
constexpr bool ValuesMatchNames() {
  for (const CodeEntry& e : kCodes) {
    if (static_cast<int>(e.code) != ValueOf(e.name)) return false;
  }
  return true;
}
static_assert(ValuesMatchNames(), "an error code's value disagrees with its string");

constexpr bool ValuesAreUnique() {
  for (size_t i = 0; i < std::size(kCodes); ++i) {
    for (size_t j = i + 1; j < std::size(kCodes); ++j) {
      if (kCodes[i].code == kCodes[j].code) return false;
    }
  }
  return true;
}
static_assert(ValuesAreUnique(), "two error codes share a value");

const CodeEntry& Entry(ErrorCode code) {
  for (const CodeEntry& e : kCodes) {
    if (e.code == code) return e;
  }
  return Entry(ErrorCode::kInternal);  // an out-of-range value cast to ErrorCode
}

}  // namespace

std::string_view CodeName(ErrorCode code) { return Entry(code).name; }
std::string_view CodeSummary(ErrorCode code) { return Entry(code).summary; }

const std::vector<ErrorCode>& AllErrorCodes() {
  static const std::vector<ErrorCode> all = [] {
    std::vector<ErrorCode> codes;
    for (const CodeEntry& e : kCodes) codes.push_back(e.code);
    return codes;
  }();
  return all;
}

namespace detail {
void BadExpectedAccess(const Error& error) noexcept {
  std::fprintf(stderr, "iotx: value() of a failed result: %s\n", error.ToString().c_str());
  std::abort();
}
}  // namespace detail

std::string Error::ToString() const {
  std::string out(CodeName(code));
  out += ' ';
  out += Describe();
  return out;
}

std::string Error::Describe() const {
  // [file: ][element N, ][key "k": ]message, every part escaped (EscapeControl): names and
  // paths come from files and command lines, and a newline or an escape sequence in one must
  // not forge a log line or drive the terminal.
  std::string location;
  auto add = [&location](const std::string& part) {
    if (!location.empty()) location += ", ";
    location += part;
  };
  if (element >= 0) add("element " + std::to_string(element));
  if (!key.empty()) add("key " + Excerpt(key));

  std::string out;
  if (!file.empty()) out += EscapeControl(file) + ": ";
  if (!location.empty()) out += location + ": ";
  // Messages echo what they found; the sources cut long names and lists (Excerpt, ShortList),
  // and this bound catches any that does not.
  if (message.size() > kMaxMessageBytes) {
    size_t cut = kMaxMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    out += EscapeControl(std::string_view(message).substr(0, cut));
    out += "... (message cut: " + std::to_string(message.size()) + " bytes)";
  } else {
    out += EscapeControl(message);
  }
  return out;
}

}  // namespace iotx
