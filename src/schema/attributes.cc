// The three frontend attributes of an AwsNeuronNeff custom-call, as text (SPEC section 5).
#include "iotx/attributes.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

namespace iotx {
namespace {

// Splits on every `separator`; "" gives one empty piece, "a," gives {"a", ""}.
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      pieces.push_back(text.substr(start));
      return pieces;
    }
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

// Attribute text echoed in a message is cut to this many bytes (as input names are): an
// attribute string can be megabytes long, a diagnostic should not be.
constexpr size_t kMaxEchoBytes = 200;

// "text", or "first 200 bytes"... (N bytes) for a longer text, cut on a UTF-8 boundary.
std::string Quoted(std::string_view text) {
  size_t cut = text.size();
  if (cut > kMaxEchoBytes) {
    cut = kMaxEchoBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out;
  out.reserve(cut + 32);
  out += '"';
  out += text.substr(0, cut);
  out += '"';
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

Error SyntaxError(std::string_view attribute, std::string message) {
  return Error(ErrorCode::kAttributeSyntax, std::move(message)).AtKey(std::string(attribute));
}

// The count check every parser shares: `pieces` separated by `separator` must be exactly
// `num_parameters`, and zero parameters must be the empty string.
Status CheckCount(std::string_view attribute, std::string_view text, size_t pieces,
                  size_t num_parameters, char separator) {
  if (num_parameters == 0) {
    if (text.empty()) return Ok();
    return Fail(SyntaxError(attribute, Quoted(text) +
                                           " has entries, but the module has no parameters; "
                                           "expected \"\""));
  }
  if (pieces == num_parameters) return Ok();
  return Fail(SyntaxError(
      attribute, Quoted(text) + " has " + std::to_string(pieces) + " entries separated by '" +
                     separator +
                     "'; expected one per parameter: " + std::to_string(num_parameters)));
}

// "3,2048,2,128" -> Dims. Plain decimal integers only: no sign, spaces or empty items.
Expected<Dims> ParseIntList(std::string_view text, std::string_view attribute,
                            const std::string& where) {
  Dims values;
  if (text.empty()) return values;
  for (std::string_view item : Split(text, ',')) {
    int64_t value = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    bool digits_only = !item.empty() && item.front() != '-';
    if (!digits_only || ec != std::errc() || end != item.data() + item.size()) {
      std::string why = ec == std::errc::result_out_of_range ? " is out of range for int64"
                                                             : " is not a non-negative integer";
      return Fail(SyntaxError(
          attribute, where + ": " + Quoted(item) + why + "; expected integers joined by ','"));
    }
    values.push_back(value);
  }
  return values;
}

// One required_transpose entry: "" (no transpose) or "<reshape>|<transpose>".
Expected<std::optional<TransposeSpec>> ParseTransposeEntry(std::string_view entry, size_t index) {
  if (entry.empty()) return std::optional<TransposeSpec>();
  const std::string where = "entry " + std::to_string(index) + " " + Quoted(entry);
  size_t bar = entry.find('|');
  if (bar == std::string_view::npos || entry.find('|', bar + 1) != std::string_view::npos) {
    return Fail(SyntaxError(kRequiredTransposeAttr,
                            where + " needs exactly one '|'; expected "
                                    "\"<reshape dims>|<transpose>\" such as \"768,768|1,0\""));
  }
  TransposeSpec spec;
  IOTX_ASSIGN_OR_RETURN(spec.reshape,
                        ParseIntList(entry.substr(0, bar), kRequiredTransposeAttr, where));
  IOTX_ASSIGN_OR_RETURN(spec.transpose,
                        ParseIntList(entry.substr(bar + 1), kRequiredTransposeAttr, where));
  if (Status valid = ValidateSpec(spec); !valid) {
    Error error = std::move(valid).error();
    error.message = where + ": " + error.message;
    error.key = std::string(kRequiredTransposeAttr);
    return Fail(std::move(error));
  }
  return std::optional<TransposeSpec>(std::move(spec));
}

void AppendJoined(std::string& out, std::span<const int64_t> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
}

}  // namespace

std::string FormatValidInputs(const std::vector<bool>& valid) {
  std::string out;
  for (size_t i = 0; i < valid.size(); ++i) {
    if (i > 0) out += ',';
    out += valid[i] ? '1' : '0';
  }
  return out;
}

Expected<std::vector<bool>> ParseValidInputs(std::string_view text, size_t num_parameters) {
  std::vector<std::string_view> pieces = Split(text, ',');
  IOTX_RETURN_IF_ERROR(CheckCount(kValidInputsAttr, text, pieces.size(), num_parameters, ','));
  std::vector<bool> valid;
  if (num_parameters == 0) return valid;
  valid.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i] != "0" && pieces[i] != "1") {
      return Fail(SyntaxError(kValidInputsAttr, "entry " + std::to_string(i) + " is " +
                                                    Quoted(pieces[i]) + "; expected 0 or 1"));
    }
    valid.push_back(pieces[i] == "1");
  }
  return valid;
}

std::string FormatRequiredTranspose(std::span<const std::optional<TransposeSpec>> per_parameter) {
  std::string out;
  for (size_t i = 0; i < per_parameter.size(); ++i) {
    if (i > 0) out += ';';
    if (!per_parameter[i]) continue;
    AppendJoined(out, per_parameter[i]->reshape);
    out += '|';
    AppendJoined(out, per_parameter[i]->transpose);
  }
  return out;
}

Expected<std::vector<std::optional<TransposeSpec>>> ParseRequiredTranspose(std::string_view text,
                                                                           size_t num_parameters) {
  std::vector<std::string_view> pieces = Split(text, ';');
  IOTX_RETURN_IF_ERROR(
      CheckCount(kRequiredTransposeAttr, text, pieces.size(), num_parameters, ';'));
  std::vector<std::optional<TransposeSpec>> specs;
  if (num_parameters == 0) return specs;
  specs.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    IOTX_ASSIGN_OR_RETURN(auto spec, ParseTransposeEntry(pieces[i], i));
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string FormatNeffInputNames(std::span<const std::string> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
  }
  return out;
}

Expected<std::vector<std::string>> ParseNeffInputNames(std::string_view text,
                                                       size_t num_parameters) {
  std::vector<std::string_view> pieces = Split(text, ',');
  IOTX_RETURN_IF_ERROR(CheckCount(kNeffInputNamesAttr, text, pieces.size(), num_parameters, ','));
  std::vector<std::string> names;
  if (num_parameters == 0) return names;
  names.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].empty()) {
      return Fail(
          SyntaxError(kNeffInputNamesAttr, "entry " + std::to_string(i) + " of " + Quoted(text) +
                                               " is empty; expected one name per parameter"));
    }
    names.emplace_back(pieces[i]);
  }
  return names;
}

}  // namespace iotx
