#include "text.h"

#include <fmt/format.h>

#include "errors.h"

namespace iotx::python {

py::str Text(std::string_view s) {
  PyObject* text =
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::str PathText(const std::string& s) {
  PyObject* text = PyUnicode_DecodeFSDefaultAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::str PathText(const std::filesystem::path& p) { return PathText(p.native()); }

std::string PathString(py::handle p, std::string_view what) {
  py::object encoded;
  try {
    encoded = py::module_::import("os").attr("fsencode")(p);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    Raise(ErrorCode::kInvalidArgument,
          fmt::format("{} must be a str, bytes or os.PathLike, not {}", what,
                      std::string(py::str(py::type::handle_of(p).attr("__name__")))));
  }
  std::string bytes = py::reinterpret_borrow<py::bytes>(encoded);
  if (bytes.find('\0') != std::string::npos) {
    Raise(ErrorCode::kInvalidArgument,
          fmt::format("{} {} contains a NUL byte", what, std::string(py::repr(p))));
  }
  return bytes;
}

void WarnUser(std::string_view message) {
  // Stack level 2, as PyErr_WarnEx(..., 2) counts it from here; a str, where PyErr_WarnEx
  // takes bytes it must decode as strict UTF-8.
  py::module_::import("warnings").attr("warn")(Text(message), py::handle(PyExc_UserWarning), 2);
}

}  // namespace iotx::python
