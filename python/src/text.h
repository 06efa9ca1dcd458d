// Strings between iotx and Python. iotx's strings are bytes: paths as the OS spells them, and
// diagnostics that quote a file's bytes (a side-file's stray 0xFF among them). Paths cross
// through the file system encoding (os.fsencode / os.fsdecode), so a name that is not UTF-8
// names the same file both ways; other text is decoded as UTF-8 with undecodable bytes shown
// as \xNN, so a report about a bad byte never fails as a UnicodeDecodeError instead.
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace iotx::python {

namespace py = pybind11;

// Diagnostic or report text as a str; bytes that are not UTF-8 appear as \xNN.
py::str Text(std::string_view s);

// A path iotx reports, as os.fsdecode gives it (undecodable bytes as surrogate escapes).
py::str PathText(const std::string& s);
py::str PathText(const std::filesystem::path& p);

// A path argument (str, bytes or os.PathLike) as the bytes it names: os.fsencode(os.fspath(p)).
// kInvalidArgument naming `what` for any other type, and for a NUL inside the name (the OS
// would end the name there and open another file, as Python's own open() refuses).
std::string PathString(py::handle p, std::string_view what = "path");

// Issues `message` as a UserWarning attributed to the caller of the iotx function.
void WarnUser(std::string_view message);

}  // namespace iotx::python
