// Errors as values: a stable code, a message, and where it happened.
//
// Nothing in iotx throws across the public API. Fallible functions return Expected<T> (the
// shape of C++23's std::expected<T, Error>) or Status (Expected<void>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "iotx/export.h"

namespace iotx {

// Stable diagnostic codes; the list, their values and strings live in error_codes.inc. The
// values are explicit and never change (the C API hands them out as iotx_error_enum).
enum class ErrorCode : uint16_t {
#define IOTX_ERROR_CODE(enumerator, value, code, summary) enumerator = value,
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
  // ToString() without the code: "io_transposes.json: element 1, key \"reshape\": type ..."
  // (what the C API's iotx_error_message() returns next to iotx_error_code()).
  std::string Describe() const;
};

// The error of a failed call, on its way into an Expected: `return Fail(...)`.
struct [[nodiscard]] Unexpected {
  Error error;
};

namespace detail {
// Reached only by a programmer error (value() of a failed result): prints the error, aborts.
[[noreturn]] IOTX_API void BadExpectedAccess(const Error& error) noexcept;
}  // namespace detail

// A value of type T or the Error that kept it from being made: the shape of C++23's
// std::expected<T, Error>, written here so the public headers need no third-party library.
// Holds exactly one of the two; error() and operator* are valid only on the matching side
// (debug builds check), value() checks always and aborts on an error.
template <class T>
class [[nodiscard]] Expected {
 public:
  using value_type = T;
  using error_type = Error;

  Expected()
    requires std::is_default_constructible_v<T>
      : state_(std::in_place_index<0>) {}
  template <class U = T>
    requires(std::is_constructible_v<T, U &&> &&
             !std::is_same_v<std::remove_cvref_t<U>, Expected> &&
             !std::is_same_v<std::remove_cvref_t<U>, Unexpected>)
  Expected(U&& value) : state_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT
  Expected(Unexpected unexpected)  // NOLINT: `return Fail(...)` converts implicitly
      : state_(std::in_place_index<1>, std::move(unexpected.error)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& operator*() & noexcept { return *std::get_if<0>(&state_); }
  const T& operator*() const& noexcept { return *std::get_if<0>(&state_); }
  T&& operator*() && noexcept { return std::move(*std::get_if<0>(&state_)); }
  T* operator->() noexcept { return std::get_if<0>(&state_); }
  const T* operator->() const noexcept { return std::get_if<0>(&state_); }

  T& value() & { return Checked(), **this; }
  const T& value() const& { return Checked(), **this; }
  T&& value() && { return Checked(), std::move(**this); }
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }

  const Error& error() const& noexcept { return *std::get_if<1>(&state_); }
  Error& error() & noexcept { return *std::get_if<1>(&state_); }
  Error&& error() && noexcept { return std::move(*std::get_if<1>(&state_)); }

  // Equal to a value when it holds an equal one (as std::expected).
  template <class U>
    requires(!std::is_same_v<U, Expected> && requires(const T& t, const U& u) { t == u; })
  friend bool operator==(const Expected& x, const U& v) {
    return x.has_value() && *x == v;
  }

 private:
  void Checked() const {
    if (!has_value()) detail::BadExpectedAccess(error());
  }
  std::variant<T, Error> state_;
};

// Success or an Error, for calls that make no value.
template <>
class [[nodiscard]] Expected<void> {
 public:
  using value_type = void;
  using error_type = Error;

  Expected() noexcept = default;
  Expected(Unexpected unexpected)  // NOLINT: `return Fail(...)` converts implicitly
      : error_(std::move(unexpected.error)), failed_(true) {}

  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return !failed_; }
  void value() const {
    if (failed_) detail::BadExpectedAccess(error_);
  }

  const Error& error() const& noexcept { return error_; }
  Error& error() & noexcept { return error_; }
  Error&& error() && noexcept { return std::move(error_); }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Expected<void>;

// `return Fail(ErrorCode::kNegativeDim, "...");` from a function returning Expected<T>.
inline Unexpected Fail(Error error) { return Unexpected{std::move(error)}; }
inline Unexpected Fail(ErrorCode code, std::string message) {
  return Unexpected{Error(code, std::move(message))};
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
