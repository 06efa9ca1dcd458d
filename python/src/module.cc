// The compiled part of the Python package `iotx` (python/iotx/__init__.py re-exports it).
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "errors.h"
#include "iotx/version.h"

namespace py = pybind11;

PYBIND11_MODULE(_iotx, m) {
  // Every docstring starts with its own signature line (and the stubs give the types).
  py::options options;
  options.disable_function_signatures();
  m.doc() = "iotx: static IO transposes (the permute kernel, the schema, the runtime, the tools)";
  m.attr("__version__") = IOTX_VERSION_STRING;
  iotx::python::RegisterErrors(m);
  iotx::python::BindApply(m);
  iotx::python::BindSpecs(m);
  iotx::python::BindTransformer(m);
  iotx::python::BindProducer(m);
}
