#include "errors.h"

#include <string>

#include "text.h"

namespace iotx::python {
namespace {

PyObject* g_error = nullptr;       // iotx.Error
PyObject* g_file_error = nullptr;  // iotx.FileError

constexpr const char* kErrorDoc =
    "An iotx diagnostic. Attributes: code ('IOTX_E401', 'NCC_IHNW003', ...), message, and\n"
    "where it happened: file, element (0-based index) and key, each None when it does not\n"
    "apply. str() is the whole diagnostic as the iotx command prints it.";
constexpr const char* kFileErrorDoc =
    "An iotx.Error that is also an OSError: a file could not be opened, read or written, or a\n"
    "path is unsafe (codes IOTX_E300-IOTX_E399).";

bool IsFileCode(ErrorCode code) {
  const auto value = static_cast<int>(code);
  return value >= 300 && value < 400;
}

py::object TextOrNone(const std::string& s) { return s.empty() ? py::none() : py::object(Text(s)); }
py::object PathOrNone(const std::string& s) {
  return s.empty() ? py::none() : py::object(PathText(s));
}
py::object OrNone(int64_t v) { return v < 0 ? py::none() : py::object(py::int_(v)); }

}  // namespace

void RegisterErrors(py::module_& m) {
  g_error = PyErr_NewExceptionWithDoc("iotx.Error", kErrorDoc, PyExc_ValueError, nullptr);
  py::tuple bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_OSError));
  g_file_error = PyErr_NewExceptionWithDoc("iotx.FileError", kFileErrorDoc, bases.ptr(), nullptr);
  if (g_error == nullptr || g_file_error == nullptr) throw py::error_already_set();
  m.attr("Error") = py::handle(g_error);
  m.attr("FileError") = py::handle(g_file_error);
}

void Raise(const Error& error) {
  PyObject* type = IsFileCode(error.code) ? g_file_error : g_error;
  py::object exc = py::handle(type)(Text(error.ToString()));
  exc.attr("code") = std::string(CodeName(error.code));
  exc.attr("message") = Text(error.message);
  exc.attr("file") = PathOrNone(error.file);
  exc.attr("element") = OrNone(error.element);
  exc.attr("key") = TextOrNone(error.key);
  PyErr_SetObject(type, exc.ptr());
  throw py::error_already_set();
}

void Raise(ErrorCode code, std::string message) { Raise(Error(code, std::move(message))); }

py::dict ErrorToDict(const Error& error) {
  py::dict d;
  d["code"] = std::string(CodeName(error.code));
  d["file"] = PathOrNone(error.file);
  d["element"] = OrNone(error.element);
  d["key"] = TextOrNone(error.key);
  d["message"] = Text(error.message);
  return d;
}

py::list ErrorsToList(const std::vector<Error>& errors) {
  py::list list;
  for (const Error& e : errors) list.append(ErrorToDict(e));
  return list;
}

}  // namespace iotx::python
