// iotx.InputTransformer: the runtime's transformer (include/iotx/runtime.h) over numpy and
// DLPack arrays, with the dtype of each parameter kept so results carry it.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "iotx/io_transposes.h"
#include "iotx/runtime.h"
#include "text.h"

namespace iotx::python {
namespace {

constexpr const char* kClassDoc = R"(Applies a compiled model's required transposes as inputs are fed.

Built once per model (every layout is planned then), then apply(i, x) / apply_all(xs) turn
user arrays into device-layout arrays with no planning; safe to call from many threads.
Make one with InputTransformer.from_attributes(...) or InputTransformer.from_json(...).)";

constexpr const char* kFromAttributesDoc =
    R"(from_attributes(valid_inputs, required_transpose, neff_input_names, parameters, *, threads=None)

From the AwsNeuronNeff custom-call's frontend attributes (strings, as `iotx wrap` writes
them: "1,1", "3,2048,2,128|0,3,2,1;", "input0,input1") and the entry parameters in
parameter-number order. Each parameter is (shape, dtype), (name, shape, dtype), a dict with
"shape", "dtype" and optionally "name", or an example array. Raises iotx.Error (IOTX_E121 for
a malformed attribute, NCC_IHNW003 for a spec that does not fit its parameter).)";

constexpr const char* kFromJsonDoc =
    R"(from_json(json, parameters, *, threads=None, ignore_unmatched=False)

From the text of an io_transposes.json (str or bytes) and named parameters (name, shape,
dtype) in parameter-number order. A spec naming no parameter is iotx.Error IOTX_E117 (its
input would reach the device in the wrong layout), or with ignore_unmatched=True ignored
with a UserWarning.)";

constexpr const char* kTransformerApplyDoc = R"(apply(i, x, out=None)

Input `i` in device layout: `x` must have input_shape(i) and the parameter's element size.
Returns a new array of output_shape(i) (the same kind of object as x), or writes `out` (C-
contiguous, writable, that shape and x's dtype) and returns it. Non-contiguous x is copied
to C order first (iotx.apply reads strided views in place). The GIL is released.)";

constexpr const char* kApplyAllDoc = R"(apply_all(xs)

Every input of one inference (a list, tuple or any iterable of num_inputs arrays): a list of device-layout
arrays, made in parallel across and within tensors. Everything is checked first.)";

struct Parameter {
  ParameterDesc desc;
  py::dtype dtype;
};

Parameter ToParameter(py::handle item, size_t index) {
  const std::string what = fmt::format("parameters[{}]", index);
  py::object name = py::none(), shape, dtype;
  if (py::isinstance<py::array>(item)) {
    auto a = py::reinterpret_borrow<py::array>(item);
    shape = py::cast(Shape(a));
    dtype = a.dtype();
  } else if (py::isinstance<py::dict>(item)) {
    auto d = py::reinterpret_borrow<py::dict>(item);
    if (!d.contains("shape") || !d.contains("dtype")) {
      Raise(ErrorCode::kInvalidArgument, what + " needs the keys \"shape\" and \"dtype\"");
    }
    shape = d["shape"];
    dtype = d["dtype"];
    if (d.contains("name")) name = d["name"];
  } else {
    py::tuple t;
    try {
      t = py::tuple(py::reinterpret_borrow<py::object>(item));
    } catch (py::error_already_set&) {
      Raise(ErrorCode::kInvalidArgument, what + " must be (shape, dtype), (name, shape, dtype), a dict or an array");
    }
    if (t.size() == 2) {
      shape = t[0];
      dtype = t[1];
    } else if (t.size() == 3) {
      name = t[0];
      shape = t[1];
      dtype = t[2];
    } else {
      Raise(ErrorCode::kInvalidArgument, what + " must be (shape, dtype) or (name, shape, dtype)");
    }
  }
  Parameter p;
  if (!name.is_none()) p.desc.name = py::str(name);
  p.desc.shape = Dims(ToDims(shape, (what + " shape").c_str()));
  try {
    p.dtype = py::dtype::from_args(dtype);
  } catch (py::error_already_set& e) {
    Raise(ErrorCode::kInvalidArgument, what + " dtype: " + e.what());
  }
  p.desc.element_size = static_cast<size_t>(p.dtype.itemsize());
  return p;
}

// The parameters as the runtime takes them, and their dtypes for the arrays it returns.
struct Parameters {
  std::vector<ParameterDesc> descs;
  std::vector<py::dtype> dtypes;
};

Parameters ToParameters(py::handle parameters) {
  Parameters list;
  for (py::handle item : py::iter(parameters)) {
    Parameter p = ToParameter(item, list.descs.size());
    list.descs.push_back(std::move(p.desc));
    list.dtypes.push_back(std::move(p.dtype));
  }
  return list;
}

BuildOptions Options(py::handle threads, bool ignore_unmatched = false) {
  BuildOptions options;
  options.plan.max_threads = ThreadsArg(threads);
  options.ignore_unmatched_specs = ignore_unmatched;
  return options;
}

class PyTransformer {
 public:
  PyTransformer(InputTransformer t, std::vector<py::dtype> dtypes)
      : transformer_(std::move(t)), dtypes_(std::move(dtypes)) {}

  static PyTransformer FromAttributes(const std::string& valid_inputs,
                                      const std::string& required_transpose,
                                      const std::string& neff_input_names, py::handle parameters,
                                      py::handle threads) {
    Parameters params = ToParameters(parameters);
    auto t = InputTransformer::FromAttributes({valid_inputs, required_transpose, neff_input_names},
                                              params.descs, Options(threads));
    return PyTransformer(Unwrap(std::move(t)), std::move(params.dtypes));
  }

  static PyTransformer FromJson(py::handle json, py::handle parameters, py::handle threads,
                                bool ignore_unmatched) {
    const std::string text = py::isinstance<py::bytes>(json) ? std::string(py::reinterpret_borrow<py::bytes>(json))
                                                             : std::string(py::str(json));
    IoTransposes parsed = Unwrap(ParseIoTransposes(text, "<json>"));
    for (const Warning& w : parsed.warnings) {
      WarnUser(w.ToString());
    }
    Parameters params = ToParameters(parameters);
    auto t = InputTransformer::FromSpecs(parsed.specs, params.descs,
                                         Options(threads, ignore_unmatched));
    PyTransformer made(Unwrap(std::move(t)), std::move(params.dtypes));
    for (const std::string& name : made.transformer_.ignored_specs()) {
      const std::string text = "io_transposes entry \"" + name + "\" names no parameter: ignored";
      WarnUser(text);
    }
    return made;
  }

  size_t num_inputs() const { return transformer_.num_inputs(); }
  std::string input_name(size_t i) const { return std::string(Unwrap(transformer_.name(Index(i)))); }
  bool is_fed(size_t i) const { return Unwrap(transformer_.is_fed(Index(i))); }
  bool has_transpose(size_t i) const { return Unwrap(transformer_.has_transpose(Index(i))); }
  bool changes_layout(size_t i) const { return Unwrap(transformer_.changes_layout(Index(i))); }
  py::tuple input_shape(size_t i) const { return Tuple(Unwrap(transformer_.input_shape(Index(i)))); }
  py::tuple output_shape(size_t i) const { return Tuple(Unwrap(transformer_.output_shape(Index(i)))); }
  py::dtype dtype(size_t i) const { return dtypes_[Index(i)]; }

  // Input i's block of Describe(): its line ("input <i> ...") and its plan's indented lines.
  std::string describe(size_t i) const {
    const std::string head = "input " + std::to_string(Index(i)) + " ";
    std::istringstream lines(transformer_.Describe());
    std::string block;
    bool inside = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("input ", 0) == 0 || line.rfind("    ", 0) != 0) inside = line.rfind(head, 0) == 0;
      if (inside) block += line + '\n';
    }
    return block;
  }
  std::string repr() const {
    return fmt::format("<iotx.InputTransformer with {} inputs>", transformer_.num_inputs());
  }

  py::object Apply(size_t i, py::handle x, py::handle out) const {
    const size_t index = Index(i);
    ArrayArg in = Input(index, x, fmt::format("x (input {})", index));
    py::object result;
    void* dst = Output(index, in, out, fmt::format("out (input {})", index), result);
    const ConstBuffer src{in.array.data(), Unwrap(transformer_.input_bytes(index))};
    const MutableBuffer target{dst, Unwrap(transformer_.output_bytes(index))};
    Status status;
    {
      py::gil_scoped_release release;
      status = transformer_.Apply(index, src, target);
    }
    Check(status);
    return result;
  }

  py::list ApplyAll(py::handle xs) const {
    // One array is not a list of inputs, though iterating it would give its rows.
    if (py::isinstance<py::array>(xs)) {
      Raise(ErrorCode::kInvalidArgument,
            "apply_all takes a sequence of arrays (one per input), not one array; apply(i, x) "
            "takes one");
    }
    // Any iterable (a list, a tuple, a generator), as a sequence held for the call.
    const py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(xs.ptr(), ""));
    if (!seq) {
      PyErr_Clear();
      Raise(ErrorCode::kInvalidArgument,
            fmt::format("apply_all takes a sequence of arrays (one per input), not {}",
                        std::string(py::str(py::type::handle_of(xs).attr("__name__")))));
    }
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    const auto count = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
    const size_t n = transformer_.num_inputs();
    if (count != n) {
      Raise(ErrorCode::kInvalidArgument,
            fmt::format("apply_all takes {} arrays (one per input), got {}", n, count));
    }
    std::vector<ArrayArg> inputs;
    std::vector<ConstBuffer> srcs;
    std::vector<MutableBuffer> dsts;
    py::list results;
    for (size_t i = 0; i < n; ++i) {
      inputs.push_back(Input(i, py::handle(items[i]), fmt::format("xs[{}]", i)));
      py::object result;
      void* dst = Output(i, inputs.back(), py::none(), "", result);
      srcs.push_back({inputs.back().array.data(), Unwrap(transformer_.input_bytes(i))});
      dsts.push_back({dst, Unwrap(transformer_.output_bytes(i))});
      results.append(result);
    }
    Status status;
    {
      py::gil_scoped_release release;
      status = transformer_.ApplyAll(srcs, dsts);
    }
    Check(status);
    return results;
  }

 private:
  size_t Index(size_t i) const {
    if (i >= transformer_.num_inputs()) {
      Raise(ErrorCode::kIndexOutOfRange, fmt::format("input {} does not exist: the model has {} inputs",
                                                     i, transformer_.num_inputs()));
    }
    return i;
  }
  static py::tuple Tuple(std::span<const int64_t> dims) {
    py::tuple t(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) t[k] = py::int_(dims[k]);
    return t;
  }

  ArrayArg Input(size_t index, py::handle x, const std::string& what) const {
    ArrayArg in = AsArray(x, what.c_str());
    const std::vector<int64_t> shape = Shape(in.array);
    const auto expected = Unwrap(transformer_.input_shape(index));
    const std::string name(Unwrap(transformer_.name(index)));
    if (!std::equal(shape.begin(), shape.end(), expected.begin(), expected.end())) {
      Raise(Error(ErrorCode::kBufferSize, fmt::format("{} has shape {} but input {} ({}) is {}", what,
                                                      ToString(shape), index, name, ToString(expected)))
                .AtElement(static_cast<int64_t>(index))
                .AtKey(name));
    }
    if (static_cast<size_t>(in.array.itemsize()) != static_cast<size_t>(dtypes_[index].itemsize())) {
      Raise(Error(ErrorCode::kInvalidArgument,
                  fmt::format("{} has {}-byte elements but input {} ({}) has {}-byte ones", what,
                              in.array.itemsize(), index, name, dtypes_[index].itemsize()))
                .AtElement(static_cast<int64_t>(index))
                .AtKey(name));
    }
    if (!(in.array.flags() & py::array::c_style)) {
      in.array = py::module_::import("numpy").attr("ascontiguousarray")(in.array);
    }
    return in;
  }

  void* Output(size_t index, const ArrayArg& in, py::handle out, const std::string& what,
               py::object& result) const {
    const auto shape = Unwrap(transformer_.output_shape(index));
    if (out.is_none()) {
      py::array made = EmptyArray(in.array.dtype(), shape);
      void* dst = made.mutable_data();
      result = ToCallerKind(std::move(made), in);
      return dst;
    }
    const ArrayArg target = AsArray(out, what.c_str());
    result = py::reinterpret_borrow<py::object>(out);
    return CheckOut(target, in.array.dtype(), shape);
  }

  InputTransformer transformer_;
  std::vector<py::dtype> dtypes_;
};

}  // namespace

void BindTransformer(py::module_& m) {
  py::class_<PyTransformer>(m, "InputTransformer", kClassDoc)
      .def_static("from_attributes", &PyTransformer::FromAttributes, kFromAttributesDoc,
                  py::arg("valid_inputs"), py::arg("required_transpose"),
                  py::arg("neff_input_names"), py::arg("parameters"), py::kw_only(),
                  py::arg("threads") = py::none())
      .def_static("from_json", &PyTransformer::FromJson, kFromJsonDoc, py::arg("json"),
                  py::arg("parameters"), py::kw_only(), py::arg("threads") = py::none(),
                  py::arg("ignore_unmatched") = false)
      .def_property_readonly("num_inputs", &PyTransformer::num_inputs, "Number of entry parameters.")
      .def("input_name", &PyTransformer::input_name, "input_name(i): the parameter's name.", py::arg("i"))
      .def("is_fed", &PyTransformer::is_fed,
           "is_fed(i): False for a zero-sized parameter (nothing is sent to the device).", py::arg("i"))
      .def("has_transpose", &PyTransformer::has_transpose,
           "has_transpose(i): True when input i's layout changes (False: a plain copy).", py::arg("i"))
      .def("changes_layout", &PyTransformer::changes_layout,
           "changes_layout(i): False when the device layout equals the input's (no spec, or one "
           "that only moves size-1 dims).", py::arg("i"))
      .def("input_shape", &PyTransformer::input_shape, "input_shape(i): the shape a user feeds.", py::arg("i"))
      .def("output_shape", &PyTransformer::output_shape,
           "output_shape(i): the device-side shape (the reshape permuted).", py::arg("i"))
      .def("dtype", &PyTransformer::dtype, "dtype(i): the parameter's numpy dtype.", py::arg("i"))
      .def("describe", &PyTransformer::describe,
           "describe(i): one line: name, shapes, element size, what happens to it.", py::arg("i"))
      .def("apply", &PyTransformer::Apply, kTransformerApplyDoc, py::arg("i"), py::arg("x"),
           py::arg("out") = py::none())
      .def("apply_all", &PyTransformer::ApplyAll, kApplyAllDoc, py::arg("xs"))
      .def("__repr__", &PyTransformer::repr);
}

}  // namespace iotx::python
