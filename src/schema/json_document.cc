#include "schema/json_document.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace iotx::schema {
namespace {

using Json = nlohmann::json;

// A SAX pass that builds nothing: it stops at the first syntax error (keeping nlohmann's
// "at line L, column C" text) or when nesting passes kMaxJsonDepth. nlohmann's own parser is
// iterative, so this pass is safe on any input; it bounds the depth of the DOM built after it.
class CheckingSax final : public nlohmann::json_sax<Json> {
 public:
  explicit CheckingSax(std::string_view text) : text_(text) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return Leave(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ..."; the
    // bracketed id means nothing to a user, the rest says where and what.
    std::string what = ex.what();
    if (const size_t close = what.find("] "); close != std::string::npos) {
      what.erase(0, close + 2);
    }
    // Number overflow ("number overflow parsing '1e400'") comes without a position.
    if (what.find(" at line ") == std::string::npos) what += " at " + LineColumn(position);
    error_ = Error(ErrorCode::kJsonSyntax, "malformed JSON: " + what);
    return false;
  }

  const std::optional<Error>& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ > kMaxJsonDepth) {
      error_ = Error(ErrorCode::kJsonTooDeep,
                     "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels; io_transposes.json needs 3 and hlo_netlist.json 5");
      return false;
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  // "line L, column C" of byte `position` (1-based, as nlohmann counts).
  std::string LineColumn(size_t position) const {
    const std::string_view before = text_.substr(0, std::min(position, text_.size()));
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t line_start = before.rfind('\n');
    const size_t column =
        line_start == std::string_view::npos ? before.size() : before.size() - line_start - 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }

  std::string_view text_;
  int depth_ = 0;
  std::optional<Error> error_;
};

// 2^63 as a double: the first value outside int64 (every double below it in magnitude that
// is integral converts exactly).
constexpr double kTwoPow63 = 9223372036854775808.0;

}  // namespace

Expected<Json> ParseJsonDocument(std::string_view text, const std::string& file) {
  CheckingSax checker(text);
  // Two passes instead of one custom DOM builder: the files are small, and this keeps to
  // nlohmann's public API.
  const bool ok = Json::sax_parse(text.begin(), text.end(), &checker);
  if (!ok || checker.error()) {
    Error error = checker.error().value_or(Error(ErrorCode::kJsonSyntax, "malformed JSON"));
    return Fail(std::move(error).InFile(file));
  }
  Json document = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return Fail(Error(ErrorCode::kInternal, "JSON accepted by the checking pass failed to parse")
                    .InFile(file));
  }
  return document;
}

std::string JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "number";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    case Json::value_t::binary:
      return "binary";
    case Json::value_t::discarded:
      return "discarded";
  }
  return "unknown";
}

Expected<int64_t> JsonToInt64(const Json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    return value.get<int64_t>();
  }
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Fail(ErrorCode::kJsonTooLarge,
                  "number " + std::to_string(u) + " does not fit in int64");
    }
    return static_cast<int64_t>(u);
  }
  if (value.is_number_float()) {
    // nlohmann stores integers beyond uint64 (and -2^63-1 and below) as doubles.
    const double d = value.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) >= kTwoPow63) {
      return Fail(ErrorCode::kJsonTooLarge, "number " + value.dump() + " does not fit in int64");
    }
    return Fail(ErrorCode::kJsonType, "type must be number, but is float (" + value.dump() +
                                          "); dims and axes are written as integers");
  }
  return Fail(ErrorCode::kJsonType, "type must be number, but is " + JsonTypeName(value));
}

Expected<Dims> JsonToDims(const Json& value) {
  if (!value.is_array()) {
    return Fail(ErrorCode::kJsonType, "type must be array, but is " + JsonTypeName(value));
  }
  Dims dims;
  dims.reserve(value.size());
  for (const Json& item : value) {
    IOTX_ASSIGN_OR_RETURN(const int64_t v, JsonToInt64(item));
    dims.push_back(v);
  }
  return dims;
}

Expected<std::string> JsonToString(const Json& value) {
  if (!value.is_string()) {
    return Fail(ErrorCode::kJsonType, "type must be string, but is " + JsonTypeName(value));
  }
  return value.get<std::string>();
}

}  // namespace iotx::schema
