// Parsing a JSON side-file into nlohmann::json with the checks nlohmann leaves to the caller:
// bounded nesting, line/column on syntax errors, and explicit JSON type checks (nlohmann's
// get<int64_t> would silently accept booleans and floats, which SPEC section 1 rejects).
// Internal to src/schema: nothing here may appear in a public header.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "iotx/dims.h"
#include "iotx/status.h"

namespace iotx::schema {

// io_transposes.json nests 3 deep and hlo_netlist.json 5; 64 leaves room for sibling keys a
// producer may add while keeping every walk over the document shallow.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` (kJsonSyntax with line and column, kJsonTooDeep past kMaxJsonDepth). The
// error names `file`; the caller adds element and key.
Expected<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& file);

// The JSON type as SPEC messages name it: "null", "boolean", "number", "float", "string",
// "array", "object". Integers are "number"; a number with a fraction or exponent is "float".
std::string JsonTypeName(const nlohmann::json& value);

// `value` as an int64 (kJsonType for anything but an integer, kJsonTooLarge for an integer
// outside int64). The error carries only the message; the caller adds where.
Expected<int64_t> JsonToInt64(const nlohmann::json& value);

// `value` as an array of int64 (kJsonType if it is not an array or an item is no integer).
Expected<Dims> JsonToDims(const nlohmann::json& value);

// `value` as a string (kJsonType "type must be string, but is <type>").
Expected<std::string> JsonToString(const nlohmann::json& value);

}  // namespace iotx::schema
