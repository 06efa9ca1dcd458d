#include "io/py_literal.h"

#include <limits>

namespace iotx::io {
namespace {

// numpy headers nest two levels (dict, shape tuple), structured descrs a few more.
constexpr int kMaxLiteralDepth = 32;
// A header has a handful of values (a 64-d shape: 70); the cap keeps a hostile header from
// turning each of its bytes into a heap node.
constexpr size_t kMaxLiteralValues = 4096;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expected<PyLiteral> ParseAll() {
    IOTX_ASSIGN_OR_RETURN(PyLiteral value, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the literal");
    return value;
  }

 private:
  Unexpected Error(const std::string& what) const {
    return Fail(ErrorCode::kNpyFormat, "header: " + what + " at offset " + std::to_string(pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r' || text_[pos_] == '\f' || text_[pos_] == '\v')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  static bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  // A keyword only when not followed by more name characters ("Truex" is not True).
  bool ConsumeKeyword(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    if (pos_ + word.size() < text_.size() && IsNameChar(text_[pos_ + word.size()])) return false;
    pos_ += word.size();
    return true;
  }

  Expected<PyLiteral> ParseValue(int depth) {
    if (depth > kMaxLiteralDepth)
      return Error("nested deeper than " + std::to_string(kMaxLiteralDepth));
    if (++values_ > kMaxLiteralValues)
      return Error("more than " + std::to_string(kMaxLiteralValues) + " values");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of header");
    char c = text_[pos_];
    PyLiteral value;
    if (c == '\'' || c == '"' ||
        ((c == 'u' || c == 'b') && pos_ + 1 < text_.size() &&
         (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"'))) {
      if (c == 'u' || c == 'b') ++pos_;
      value.kind = PyLiteral::Kind::kStr;
      IOTX_ASSIGN_OR_RETURN(value.str, ParseString());
      return value;
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return ParseInt();
    if (ConsumeKeyword("True")) {
      value.kind = PyLiteral::Kind::kBool;
      value.boolean = true;
      return value;
    }
    if (ConsumeKeyword("False")) {
      value.kind = PyLiteral::Kind::kBool;
      return value;
    }
    if (ConsumeKeyword("None")) return value;
    if (c == '(' || c == '[') {
      ++pos_;
      return ParseSequence(c == '(' ? ')' : ']', depth);
    }
    if (c == '{') {
      ++pos_;
      return ParseDict(depth);
    }
    return Error(std::string("unexpected character '") + c + "'");
  }

  Expected<std::string> ParseString() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\n') return Error("newline inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case 'x': {
          int byte = 0;
          for (int i = 0; i < 2; ++i) {
            char h = pos_ < text_.size() ? text_[pos_++] : '\0';
            int digit = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
            if (digit < 0) return Error("bad \\x escape in a string");
            byte = byte * 16 + digit;
          }
          out += static_cast<char>(byte);
          break;
        }
        default:
          return Error(std::string("unsupported escape '\\") + e + "' in a string");
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;  // closing quote
    return out;
  }

  Expected<PyLiteral> ParseInt() {
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    SkipSpace();
    size_t start = pos_;
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t{1} << 63 : std::numeric_limits<int64_t>::max();
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (magnitude > (limit - digit) / 10) return Error("integer does not fit in 64 bits");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) return Error("expected digits");
    // Python 3 forbids leading zeros in decimal literals ("007"), except for zero itself.
    if (text_[start] == '0' && pos_ - start > 1 &&
        text_.substr(start, pos_ - start).find_first_not_of('0') != std::string_view::npos) {
      return Error("integer with a leading zero");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2
    if (pos_ < text_.size() && (IsNameChar(text_[pos_]) || text_[pos_] == '.')) {
      return Error("expected an integer");
    }
    PyLiteral value;
    value.kind = PyLiteral::Kind::kInt;
    value.integer =
        negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return value;
  }

  // After the opening bracket: items separated by commas, an optional trailing comma. A
  // parenthesized single item without a comma is just that item, as in Python: "(3)" is 3.
  Expected<PyLiteral> ParseSequence(char close, int depth) {
    PyLiteral value;
    value.kind = close == ')' ? PyLiteral::Kind::kTuple : PyLiteral::Kind::kList;
    bool saw_comma = false;
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size()) return Error("unexpected end of header");
      if (text_[pos_] == close) {
        ++pos_;
        break;
      }
      if (!value.items.empty() && !saw_comma) return Error("expected ',' or closing bracket");
      IOTX_ASSIGN_OR_RETURN(PyLiteral item, ParseValue(depth + 1));
      value.items.push_back(std::move(item));
      SkipSpace();
      saw_comma = Consume(",");
    }
    if (value.kind == PyLiteral::Kind::kTuple && value.items.size() == 1 && !saw_comma) {
      return std::move(value.items[0]);
    }
    return value;
  }

  Expected<PyLiteral> ParseDict(int depth) {
    PyLiteral value;
    value.kind = PyLiteral::Kind::kDict;
    bool saw_comma = false;
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size()) return Error("unexpected end of header");
      if (text_[pos_] == '}') {
        ++pos_;
        return value;
      }
      if (!value.items.empty() && !saw_comma) return Error("expected ',' or '}'");
      IOTX_ASSIGN_OR_RETURN(PyLiteral key, ParseValue(depth + 1));
      SkipSpace();
      if (!Consume(":")) return Error("expected ':' after a dict key");
      IOTX_ASSIGN_OR_RETURN(PyLiteral item, ParseValue(depth + 1));
      value.items.push_back(std::move(key));
      value.items.push_back(std::move(item));
      SkipSpace();
      saw_comma = Consume(",");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

}  // namespace

std::string_view PyKindName(PyLiteral::Kind kind) {
  switch (kind) {
    case PyLiteral::Kind::kStr:
      return "a string";
    case PyLiteral::Kind::kInt:
      return "an integer";
    case PyLiteral::Kind::kBool:
      return "a bool";
    case PyLiteral::Kind::kNone:
      return "None";
    case PyLiteral::Kind::kTuple:
      return "a tuple";
    case PyLiteral::Kind::kList:
      return "a list";
    case PyLiteral::Kind::kDict:
      return "a dict";
  }
  return "a value";
}

Expected<PyLiteral> ParsePyLiteral(std::string_view text) { return Parser(text).ParseAll(); }

}  // namespace iotx::io
