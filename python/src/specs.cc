// iotx.simplify, iotx.load_io_transposes, iotx.validate: the schema layer's calls.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "iotx/io_transposes.h"
#include "iotx/spec.h"
#include "schema/load.h"
#include "schema/validate_files.h"
#include "text.h"

namespace iotx::python {
namespace {

constexpr const char* kSimplifyDoc = R"(simplify(shape, reshape, transpose) -> (reshape, transpose)

Folds a spec by the producer's rule (SPEC section 2): neighbouring reshape dims that stay
neighbours in the transpose merge unless their boundary is a boundary of the tensor's
`shape`. Returns lists of ints; simplify(shape, *simplify(shape, r, t)) gives the same.
Raises iotx.Error: NCC_IHNW003 when product(reshape) != product(shape), IOTX_E110 / E111.)";

constexpr const char* kLoadDoc = R"(load_io_transposes(path=None, *, modular=None, netlist=None) -> dict

Loads the specs the wrapper consumes: one io_transposes.json (`path`), or the partition
files `modular` (a list) combined through `netlist` (hlo_netlist.json, required for two or
more partitions; aliases are propagated when given). Returns {input_name: {"reshape": [...],
"transpose": [...]}} in file order. Warnings (a repeated name keeps the first) are issued as
Python UserWarnings. Raises iotx.Error on the first problem (see validate() for all).)";

constexpr const char* kValidateDoc = R"(validate(path=None, netlist=None, modular=None) -> dict

Checks side-files as `iotx validate` does and reports every problem, not only the first:
`path` (one io_transposes.json or a list of them), `netlist` (hlo_netlist.json) and `modular`
(partition files, also combined: NCC_IIOT001 / NCC_IIOT002). Returns a dict:
  ok        True when no problem was found
  problems  [{"code", "file", "element", "key", "message"}, ...] (None where n/a)
  warnings  the same shape, for notes that are not errors
  summaries ["<file>: ok, 2 io_transposes", ...], one per file or set
  specs     {file: {input_name: {"reshape", "transpose"}}}: the elements that passed
  combined  the modular set as combined ({} without modular files)
Unreadable files are problems (IOTX_E300/E301), not exceptions.)";

std::vector<std::string> PathList(py::handle p) {
  std::vector<std::string> paths;
  if (p.is_none()) return paths;
  if (py::isinstance<py::str>(p) || py::isinstance<py::bytes>(p) || py::hasattr(p, "__fspath__")) {
    paths.push_back(PathString(p));
    return paths;
  }
  for (py::handle item : py::iter(p)) paths.push_back(PathString(item));
  return paths;
}

py::dict SpecToDict(const TransposeSpec& spec) {
  py::dict d;
  d["reshape"] = std::vector<int64_t>(spec.reshape.begin(), spec.reshape.end());
  d["transpose"] = std::vector<int64_t>(spec.transpose.begin(), spec.transpose.end());
  return d;
}

py::dict SpecsToDict(const SpecMap& specs) {
  py::dict d;
  for (const NamedSpec& entry : specs) d[Text(entry.input_name)] = SpecToDict(entry.spec);
  return d;
}

void IssueWarnings(const std::vector<Warning>& warnings) {
  for (const Warning& w : warnings) {
    WarnUser(w.ToString());
  }
}

py::tuple Simplify(py::handle shape, py::handle reshape, py::handle transpose) {
  const std::vector<int64_t> orig = ToDims(shape, "shape");
  const TransposeSpec spec{Dims(ToDims(reshape, "reshape")), Dims(ToDims(transpose, "transpose"))};
  const TransposeSpec simple = Unwrap(iotx::Simplify(spec, orig));
  return py::make_tuple(std::vector<int64_t>(simple.reshape.begin(), simple.reshape.end()),
                        std::vector<int64_t>(simple.transpose.begin(), simple.transpose.end()));
}

py::dict Load(py::handle path, py::handle modular, py::handle netlist) {
  LoadRequest request;
  if (!path.is_none()) request.single_file = PathString(path);
  request.modular_files = PathList(modular);
  if (!netlist.is_none()) request.netlist_file = PathString(netlist);
  Expected<IoTransposes> loaded = Fail(ErrorCode::kInternal, "not loaded");
  {
    py::gil_scoped_release release;
    loaded = LoadIoTransposes(request);
  }
  if (!loaded) Raise(loaded.error());
  IssueWarnings(loaded->warnings);
  return SpecsToDict(loaded->specs);
}

py::dict Validate(py::handle path, py::handle netlist, py::handle modular) {
  schema::ValidateRequest request;
  request.files = PathList(path);
  if (!netlist.is_none()) request.netlist = PathString(netlist);
  request.modular = PathList(modular);
  schema::ValidateReport report;
  {
    py::gil_scoped_release release;
    report = schema::ValidateFiles(request);
  }
  py::dict d;
  d["ok"] = report.errors.empty();
  d["problems"] = ErrorsToList(report.errors);
  d["warnings"] = ErrorsToList(report.warnings);
  py::list summaries;
  for (const std::string& s : report.summaries) summaries.append(Text(s));
  d["summaries"] = summaries;
  py::dict specs;
  for (const PartitionSpecs& p : report.checked) specs[PathText(p.file)] = SpecsToDict(p.specs);
  d["specs"] = specs;
  d["combined"] = SpecsToDict(report.combined);
  return d;
}

}  // namespace

void BindSpecs(py::module_& m) {
  m.def("simplify", &Simplify, kSimplifyDoc, py::arg("shape"), py::arg("reshape"),
        py::arg("transpose"));
  m.def("load_io_transposes", &Load, kLoadDoc, py::arg("path") = py::none(), py::kw_only(),
        py::arg("modular") = py::none(), py::arg("netlist") = py::none());
  m.def("validate", &Validate, kValidateDoc, py::arg("path") = py::none(),
        py::arg("netlist") = py::none(), py::arg("modular") = py::none());
}

}  // namespace iotx::python
