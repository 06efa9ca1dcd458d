// The module's parts, one Bind function per area (module.cc calls them in order).
#pragma once

#include <pybind11/pybind11.h>

namespace iotx::python {

namespace py = pybind11;

void BindApply(py::module_& m);        // apply.cc: iotx.apply
void BindSpecs(py::module_& m);        // specs.cc: simplify, load_io_transposes, validate
void BindTransformer(py::module_& m);  // transformer.cc: InputTransformer
void BindProducer(py::module_& m);     // producer.cc: materialize, apply_files, wrap

}  // namespace iotx::python
