#include "schema/json_document.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/text.h"

namespace iotx::schema {
namespace {

using Json = nlohmann::json;

// 2^63 as a double: the first value outside int64 (every double below it in magnitude that
// is integral converts exactly).
constexpr double kTwoPow63 = 9223372036854775808.0;

// nlohmann's SAX events, turned into JsonVisitor calls: containers the visitor skips are
// walked here without reaching it, nesting is bounded, and a syntax error is kept with its
// line and column.
class Walker final : public nlohmann::json_sax<Json> {
 public:
  Walker(std::string_view text, JsonVisitor& visitor) : text_(text), visitor_(visitor) {}

  bool null() override { return Scalar(JsonType::kNull); }
  bool boolean(bool) override { return Scalar(JsonType::kBoolean); }
  bool number_integer(number_integer_t value) override {
    if (skipping_ > 0) return true;
    JsonScalar scalar{JsonType::kNumber, nullptr, static_cast<int64_t>(value)};
    visitor_.Scalar(scalar);
    return true;
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (skipping_ > 0) return true;
    JsonScalar scalar{JsonType::kNumber, nullptr, int64_t{0}};
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      scalar.integer = Fail(ErrorCode::kJsonTooLarge,
                            "number " + std::to_string(value) + " does not fit in int64");
    } else {
      scalar.integer = static_cast<int64_t>(value);
    }
    visitor_.Scalar(scalar);
    return true;
  }
  bool number_float(number_float_t value, const string_t&) override {
    if (skipping_ > 0) return true;
    // Written as nlohmann (and so the original consumer) prints the value: 2.0, 1e+20.
    const std::string shown = Json(value).dump();
    JsonScalar scalar{JsonType::kFloat, nullptr, int64_t{0}};
    // nlohmann reads integers beyond uint64 (and below -2^63) as doubles.
    if (std::isfinite(value) && std::trunc(value) == value && std::fabs(value) >= kTwoPow63) {
      scalar.integer = Fail(ErrorCode::kJsonTooLarge, "number " + shown + " does not fit in int64");
    } else {
      scalar.integer = Fail(ErrorCode::kJsonType, "type must be number, but is float (" + shown +
                                                      "); dims and axes are written as integers");
    }
    visitor_.Scalar(scalar);
    return true;
  }
  bool string(string_t& value) override {
    if (skipping_ > 0) return true;
    JsonScalar scalar{JsonType::kString, &value, int64_t{0}};
    visitor_.Scalar(scalar);
    return true;
  }
  bool binary(binary_t&) override { return true; }  // not produced by JSON text

  bool start_object(std::size_t) override {
    if (!Enter()) return false;
    if (skipping_ > 0 || !visitor_.BeginObject()) ++skipping_;
    return true;
  }
  bool key(string_t& key) override {
    if (skipping_ == 0) visitor_.Key(key);
    return true;
  }
  bool end_object() override {
    --depth_;
    if (skipping_ > 0) {
      --skipping_;
    } else {
      visitor_.EndObject();
    }
    return true;
  }
  bool start_array(std::size_t) override {
    if (!Enter()) return false;
    if (skipping_ > 0 || !visitor_.BeginArray()) ++skipping_;
    return true;
  }
  bool end_array() override {
    --depth_;
    if (skipping_ > 0) {
      --skipping_;
    } else {
      visitor_.EndArray();
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    std::string what(JsonErrorText(ex.what()));
    // Number overflow ("number overflow parsing '1e400'") comes without a position.
    if (what.find(" at line ") == std::string::npos) what += " at " + LineColumn(position);
    error_ = Error(ErrorCode::kJsonSyntax, "malformed JSON: " + what);
    error_position_ = position;
    return false;
  }

  const std::optional<Error>& error() const { return error_; }
  size_t error_position() const { return error_position_; }

  // "line L, column C" of byte `position` (1-based, as nlohmann counts).
  std::string LineColumn(size_t position) const {
    const std::string_view before = text_.substr(0, std::min(position, text_.size()));
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t line_start = before.rfind('\n');
    const size_t column =
        line_start == std::string_view::npos ? before.size() : before.size() - line_start - 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }

 private:
  bool Scalar(JsonType type) {
    if (skipping_ > 0) return true;
    JsonScalar scalar{type, nullptr, int64_t{0}};
    visitor_.Scalar(scalar);
    return true;
  }

  bool Enter() {
    if (++depth_ > kMaxJsonDepth) {
      error_ = Error(ErrorCode::kJsonTooDeep,
                     "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels; io_transposes.json needs 3 and hlo_netlist.json 5");
      return false;
    }
    return true;
  }

  std::string_view text_;
  JsonVisitor& visitor_;
  int depth_ = 0;
  int skipping_ = 0;  // > 0 inside a container the visitor skips
  std::optional<Error> error_;
  size_t error_position_ = 0;
};

}  // namespace

std::string_view JsonTypeName(JsonType type) {
  switch (type) {
    case JsonType::kNull:
      return "null";
    case JsonType::kBoolean:
      return "boolean";
    case JsonType::kNumber:
      return "number";
    case JsonType::kFloat:
      return "float";
    case JsonType::kString:
      return "string";
    case JsonType::kArray:
      return "array";
    case JsonType::kObject:
      return "object";
  }
  return "unknown";
}

std::string JsonTypeWithArticle(JsonType type) {
  const std::string_view name = JsonTypeName(type);
  const bool vowel = std::string_view("aeiou").find(name.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(name);
}

Expected<int64_t> ScalarToInt64(const JsonScalar& value) {
  if (value.type == JsonType::kNumber || value.type == JsonType::kFloat) return value.integer;
  return Fail(ErrorCode::kJsonType,
              "type must be number, but is " + std::string(JsonTypeName(value.type)));
}

std::optional<Error> WalkJson(std::string_view text, const std::string& file,
                              JsonVisitor& visitor) {
  Walker walker(text, visitor);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &walker);
  // nlohmann's lexer takes a NUL byte for the end of the input (it also reads C strings), so
  // "[]\0junk" parses as "[]" and "[1,\0 2]" fails as if the text ended there. JSON text has
  // no NUL outside a string, and inside one it is an error nlohmann reports itself.
  const size_t nul = text.find('\0');
  const bool nul_in_string = walker.error() && walker.error()->message.find("U+0000") !=
                                                   std::string::npos;
  if (nul != std::string_view::npos && !nul_in_string &&
      (ok || walker.error_position() >= nul)) {
    return Error(ErrorCode::kJsonSyntax,
                 "malformed JSON: unexpected NUL byte at " + walker.LineColumn(nul + 1) +
                     (ok ? "; expected end of input (extra data after the JSON value)" : ""))
        .InFile(file);
  }
  if (!ok || walker.error()) {
    Error error = walker.error().value_or(Error(ErrorCode::kJsonSyntax, "malformed JSON"));
    return std::move(error).InFile(file);
  }
  return std::nullopt;
}

}  // namespace iotx::schema
