// Errors as values: a stable code, a message, and where it happened.
//
// Nothing in iotx throws across the public API. Fallible functions return Expected<T>
// (tl::expected<T, Error>, the C++23 std::expected shape) or Status (Expected<void>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "iotx/export.h"

namespace iotx {

// Stable diagnostic codes; the list and the code strings live in error_codes.inc.
enum class ErrorCode : uint16_t {
#define IOTX_ERROR_CODE(enumerator, code, summary) enumerator,
#include "iotx/error_codes.inc"
#undef IOTX_ERROR_CODE
};

// "NCC_IIOT001", "IOTX_E103", ...: the code as printed in diagnostics.
IOTX_API std::string_view CodeName(ErrorCode code);
// One line saying what the code means, for `--help` style listings.
IOTX_API std::string_view CodeSummary(ErrorCode code);
// Every code, in declaration order.
IOTX_API const std::vector<ErrorCode>& AllErrorCodes();

// A diagnostic. `message` says what was wrong and what was expected; the location fields
// say where (empty / -1 when they do not apply) and are printed by ToString().
struct IOTX_API Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::string file;     // the file the problem is in
  int64_t element = -1; // 0-based element of a top-level JSON array, tensor index, ...
  std::string key;      // JSON key, tensor name, attribute name, ...

  Error() = default;
  Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}

  // Builder-style location setters: Error(...).InFile(path).AtElement(i).AtKey("reshape").
  Error&& InFile(std::string f) && { file = std::move(f); return std::move(*this); }
  Error&& AtElement(int64_t e) && { element = e; return std::move(*this); }
  Error&& AtKey(std::string k) && { key = std::move(k); return std::move(*this); }
  Error& InFile(std::string f) & { file = std::move(f); return *this; }
  Error& AtElement(int64_t e) & { element = e; return *this; }
  Error& AtKey(std::string k) & { key = std::move(k); return *this; }

  // "IOTX_E103 io_transposes.json: element 1, key \"reshape\": type must be number, but is string"
  std::string ToString() const;
};

template <class T>
using Expected = tl::expected<T, Error>;
using Status = Expected<void>;

// `return Fail(ErrorCode::kNegativeDim, "...");` from a function returning Expected<T>.
inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }
inline tl::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return tl::unexpected<Error>(Error(code, std::move(message)));
}
inline Status Ok() { return {}; }

// Warnings share Error's shape; they are reported and processing goes on.
using Warning = Error;

}  // namespace iotx

// Propagates the error of an Expected/Status expression from the enclosing function.
#define IOTX_RETURN_IF_ERROR(expr)                                       \
  do {                                                                   \
    auto&& iotx_status_ = (expr);                                        \
    if (!iotx_status_) return ::iotx::Fail(std::move(iotx_status_).error()); \
  } while (0)

#define IOTX_CONCAT_INNER_(a, b) a##b
#define IOTX_CONCAT_(a, b) IOTX_CONCAT_INNER_(a, b)
// IOTX_ASSIGN_OR_RETURN(auto value, ExpectedExpr()); — binds the value or returns the error.
#define IOTX_ASSIGN_OR_RETURN(lhs, expr) \
  IOTX_ASSIGN_OR_RETURN_IMPL_(IOTX_CONCAT_(iotx_expected_, __LINE__), lhs, expr)
#define IOTX_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)            \
  auto tmp = (expr);                                            \
  if (!tmp) return ::iotx::Fail(std::move(tmp).error());        \
  lhs = std::move(*tmp)
