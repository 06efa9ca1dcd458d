// iotx.materialize, iotx.apply_files, iotx.wrap: the compiler-side commands as functions that
// return what they did (dicts) instead of printing it. The work runs with the GIL released.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "hlo/wrap_files.h"
#include "producer/apply.h"
#include "producer/materialize.h"
#include "producer/tensor_set.h"
#include "text.h"

namespace iotx::python {
namespace {

constexpr const char* kMaterializeDoc = R"(materialize(workdir, verify=False) -> dict

The compiler's producer job on a work dir, as `iotx materialize`: every spec of
io_transposes.json simplified against its tensor in inp-000.p and the file rewritten
atomically; with verify=True also transposed_inputs/value_<name>.npy and inp-000.p in device
layout, symlinked into every sg*/ and nc*/sg*/. Idempotent and kill-safe. Returns
  root, nothing_to_do (None, or why nothing was touched), spec_count, json_rewritten,
  pickle_written, stale_temps_removed,
  inputs   [{"name", "shape", "device_shape", "type", "bytes", "transposed", "file"}, ...]
  links    [{"link", "target", "outcome": "created" | "replaced" | "unchanged"}, ...]
  warnings [{"code", "file", "element", "key", "message"}, ...]
Raises iotx.Error / iotx.FileError on failure.)";

constexpr const char* kApplyFilesDoc =
    R"(apply_files(io_transposes, out_dir, *, inputs=None, tensors=None, format=None) -> dict

Tensor files into device layout, as `iotx apply`: either `inputs`, a dict {name: path of a
.npy}, or `tensors`, the path of a pickle of {name: array} (inp-000.p) or a safetensors file.
Writes out_dir/value_<name>.npy each (format "npy") or one out_dir/<stem>.safetensors
(format "safetensors"; the default for a safetensors input). Returns
  tensors  [{"name", "shape", "device_shape", "type", "bytes", "transposed", "file"}, ...]
  files    [path, ...] written, total_bytes, warnings [...]; for a sharded checkpoint (tensors=
  its model.safetensors.index.json) also shards, skipped (outputs already complete),
  incomplete (still missing) and index (the output index once every shard is complete).)";

constexpr const char* kWrapDoc =
    R"(wrap(hlo, neff, output, *, io_transposes=None, modular=None, netlist=None) -> dict

The hlo-neff-wrapper, as `iotx wrap`: replaces the entry computation of the HLO module `hlo`
(a serialized HloModuleProto) by one AwsNeuronNeff custom-call carrying the NEFF and the
valid_inputs / required_transpose / neff_input_names attributes, written atomically to
`output`. The specs come from `io_transposes` (one file) or `modular` (a list of partition
files, with `netlist` = hlo_netlist.json). Returns {"produced": False, ...} and writes nothing
when there is no transpose and no zero-sized parameter; else produced, output,
num_parameters, num_transposed, num_zero_sized, neff_bytes, warnings.)";

py::dict TensorToDict(const producer::TensorReport& t) {
  py::dict d;
  d["name"] = Text(t.name);
  d["shape"] = std::vector<int64_t>(t.shape.begin(), t.shape.end());
  d["device_shape"] = std::vector<int64_t>(t.device_shape.begin(), t.device_shape.end());
  d["type"] = Text(t.type);
  d["bytes"] = t.bytes;
  d["transposed"] = t.transposed;
  d["file"] = t.file.empty() ? py::object(py::none()) : py::object(PathText(t.file));
  return d;
}

py::list TensorsToList(const std::vector<producer::TensorReport>& tensors) {
  py::list list;
  for (const producer::TensorReport& t : tensors) list.append(TensorToDict(t));
  return list;
}

const char* OutcomeName(files::LinkOutcome outcome) {
  switch (outcome) {
    case files::LinkOutcome::kCreated: return "created";
    case files::LinkOutcome::kReplaced: return "replaced";
    case files::LinkOutcome::kUnchanged: return "unchanged";
  }
  return "unknown";
}

// Runs `job` with the GIL released and raises its error with the GIL held again.
template <class Job>
auto RunReleased(Job job) {
  decltype(job()) result = Fail(ErrorCode::kInternal, "not run");
  {
    py::gil_scoped_release release;
    result = job();
  }
  if (!result) Raise(result.error());
  return std::move(*result);
}

py::dict Materialize(py::handle workdir, bool verify) {
  producer::MaterializeOptions options;
  options.workdir = PathString(workdir);
  options.verify = verify;
  const producer::MaterializeReport report =
      RunReleased([&] { return producer::Materialize(options); });
  py::dict d;
  d["root"] = PathText(report.root);
  d["nothing_to_do"] = report.nothing_to_do.empty() ? py::object(py::none())
                                                    : py::object(Text(report.nothing_to_do));
  d["spec_count"] = report.spec_count;
  d["json_rewritten"] = report.json_rewritten;
  d["pickle_written"] = report.pickle_written;
  d["stale_temps_removed"] = report.stale_temps_removed;
  d["inputs"] = TensorsToList(report.inputs);
  py::list links;
  for (const producer::LinkMade& link : report.links) {
    py::dict l;
    l["link"] = PathText(link.link);
    l["target"] = PathText(link.target);
    l["outcome"] = OutcomeName(link.outcome);
    links.append(l);
  }
  d["links"] = links;
  d["warnings"] = ErrorsToList(report.warnings);
  return d;
}

py::dict ApplyFiles(py::handle io_transposes, py::handle out_dir, py::handle inputs,
                    py::handle tensors, py::handle format) {
  if (inputs.is_none() == tensors.is_none()) {
    Raise(ErrorCode::kInvalidArgument,
          "apply_files takes either inputs={name: path.npy, ...} or tensors=path (a pickle or a "
          "safetensors file)");
  }
  std::vector<producer::NpyInput> npy_inputs;
  if (!inputs.is_none()) {
    if (!py::isinstance(inputs, py::module_::import("collections.abc").attr("Mapping"))) {
      Raise(ErrorCode::kInvalidArgument,
            fmt::format("inputs must be a dict {{name: path of a .npy}}, not {}",
                        std::string(py::str(py::type::handle_of(inputs).attr("__name__")))));
    }
    for (auto item : inputs.attr("items")()) {
      const auto pair = py::reinterpret_borrow<py::tuple>(item);
      npy_inputs.push_back({py::str(pair[0]), PathString(pair[1], "inputs path")});
    }
  }
  const std::string tensor_file = tensors.is_none() ? "" : PathString(tensors);
  // Every argument checked before any file is read.
  producer::ApplyOptions options;
  options.io_transposes = PathString(io_transposes);
  options.out_dir = PathString(out_dir);
  producer::TensorSet set = RunReleased([&] {
    return npy_inputs.empty() && !tensor_file.empty() ? producer::LoadTensorFile(tensor_file)
                                                      : producer::LoadNpyInputs(npy_inputs);
  });
  bool safetensors = set.from_safetensors;
  if (!format.is_none()) {
    const std::string name = py::str(format);
    if (name != "npy" && name != "safetensors") {
      Raise(ErrorCode::kInvalidArgument, "format must be \"npy\" or \"safetensors\", not \"" + name + "\"");
    }
    safetensors = name == "safetensors";
  }
  options.format = safetensors ? producer::OutputFormat::kSafetensors : producer::OutputFormat::kNpy;
  const producer::ApplyReport report = RunReleased([&] { return producer::Apply(set, options); });
  py::dict d;
  d["tensors"] = TensorsToList(report.tensors);
  py::list files;
  for (const auto& f : report.files) files.append(PathText(f));
  d["files"] = files;
  d["total_bytes"] = report.total_bytes;
  d["warnings"] = ErrorsToList(report.warnings);
  // A sharded checkpoint's (safetensors index as `tensors`): shards, and what is left to do.
  py::list skipped, incomplete;
  for (const auto& f : report.skipped) skipped.append(PathText(f));
  for (const auto& f : report.incomplete) incomplete.append(PathText(f));
  d["skipped"] = skipped;
  d["shards"] = report.shards;
  d["incomplete"] = incomplete;
  d["index"] = report.index.empty() ? py::object(py::none()) : py::object(PathText(report.index));
  return d;
}

py::dict Wrap(py::handle hlo, py::handle neff, py::handle output, py::handle io_transposes,
              py::handle modular, py::handle netlist) {
  hlo::WrapFilesRequest request;
  if (io_transposes.is_none() == modular.is_none()) {
    Raise(ErrorCode::kInvalidArgument,
          "wrap takes either io_transposes=path or modular=[partition files]");
  }
  if (!io_transposes.is_none()) request.io_transposes.single_file = PathString(io_transposes);
  if (!modular.is_none()) {
    for (py::handle f : py::iter(modular)) request.io_transposes.modular_files.push_back(PathString(f));
  }
  if (!netlist.is_none()) request.io_transposes.netlist_file = PathString(netlist);
  request.hlo = PathString(hlo);
  request.neff = PathString(neff);
  request.output = PathString(output);
  const hlo::WrapFilesReport report = RunReleased([&] { return hlo::WrapFiles(request); });
  py::dict d;
  d["produced"] = report.produced;
  d["output"] = report.produced ? py::object(PathText(request.output)) : py::object(py::none());
  d["num_parameters"] = report.num_parameters;
  d["num_transposed"] = report.num_transposed;
  d["num_zero_sized"] = report.num_zero_sized;
  d["neff_bytes"] = report.neff_bytes;
  d["warnings"] = ErrorsToList(report.warnings);
  return d;
}

}  // namespace

void BindProducer(py::module_& m) {
  m.def("materialize", &Materialize, kMaterializeDoc, py::arg("workdir"), py::arg("verify") = false);
  m.def("apply_files", &ApplyFiles, kApplyFilesDoc, py::arg("io_transposes"), py::arg("out_dir"),
        py::kw_only(), py::arg("inputs") = py::none(), py::arg("tensors") = py::none(),
        py::arg("format") = py::none());
  m.def("wrap", &Wrap, kWrapDoc, py::arg("hlo"), py::arg("neff"), py::arg("output"), py::kw_only(),
        py::arg("io_transposes") = py::none(), py::arg("modular") = py::none(),
        py::arg("netlist") = py::none());
}

}  // namespace iotx::python
