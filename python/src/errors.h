// iotx's errors as Python exceptions: iotx.Error (a ValueError) and iotx.FileError (an
// iotx.Error and an OSError, for IOTX_E3xx), each carrying the code and the location fields.
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

#include "iotx/status.h"

namespace iotx::python {

namespace py = pybind11;

// Creates iotx.Error and iotx.FileError on the module.
void RegisterErrors(py::module_& m);

// Raises `error` as iotx.Error / iotx.FileError (throws py::error_already_set).
[[noreturn]] void Raise(const Error& error);
[[noreturn]] void Raise(ErrorCode code, std::string message);

// The value, or raises its error.
template <class T>
T Unwrap(Expected<T> result) {
  if (!result) Raise(result.error());
  return std::move(*result);
}
inline void Check(const Status& status) {
  if (!status) Raise(status.error());
}

// {"code", "file", "element", "key", "message"} (None where a field does not apply): a
// problem or warning as validate() and the reports list them.
py::dict ErrorToDict(const Error& error);
py::list ErrorsToList(const std::vector<Error>& errors);

}  // namespace iotx::python
