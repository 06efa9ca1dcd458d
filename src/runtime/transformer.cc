#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/overlap.h"
#include "core/parallel.h"
#include "iotx/attributes.h"
#include "iotx/runtime.h"
#include "runtime/plan_cache.h"
#include "runtime/transformer_internal.h"

namespace iotx {
namespace {

using Input = InputTransformer::Input;

// Below this many bytes in one ApplyAll, fanning tensors out to threads costs more than it
// saves; each plan still decides on its own whether to split a large tensor.
constexpr size_t kParallelAcrossInputsBytes = size_t{1} << 20;

std::string Describe(size_t index, const std::string& name) {
  return "parameter " + std::to_string(index) + " (\"" + name + "\")";
}

Error ParameterError(ErrorCode code, size_t index, const std::string& name,
                     const std::string& message) {
  return Error(code, Describe(index, name) + ": " + message)
      .AtElement(static_cast<int64_t>(index))
      .AtKey(name);
}

// Shapes, sizes and the plan of one input, checked against its spec.
Expected<Input> MakeInput(size_t index, std::string name, const ParameterDesc& parameter,
                          std::optional<TransposeSpec> spec, bool fed,
                          const PlanOptions& options) {
  Input input;
  input.name = std::move(name);
  input.fed = fed;
  input.input_shape = parameter.shape;
  input.element_size = parameter.element_size;
  if (parameter.element_size == 0) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "element_size must be at least 1 byte"));
  }
  const std::optional<int64_t> count = CheckedProduct(parameter.shape);
  if (!count) {
    return Fail(ParameterError(ErrorCode::kDimOverflow, index, input.name,
                               "shape " + ToString(parameter.shape) +
                                   " has a negative dim or more elements than int64 holds"));
  }
  if (__builtin_mul_overflow(static_cast<size_t>(*count), parameter.element_size, &input.bytes)) {
    return Fail(ParameterError(ErrorCode::kDimOverflow, index, input.name,
                               "byte size of shape " + ToString(parameter.shape) +
                                   " overflows size_t"));
  }
  if (!fed && *count != 0) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "valid_inputs marks it as not fed, but its shape " +
                                   ToString(parameter.shape) + " has " + std::to_string(*count) +
                                   " elements; only zero-sized parameters are left out"));
  }

  if (spec) {
    if (Status s = CheckSpecFits(*spec, parameter.shape, input.name); !s) {
      return Fail(ParameterError(s.error().code, index, input.name, s.error().message));
    }
    input.output_shape = DeviceShape(*spec);
  } else {
    input.output_shape = parameter.shape;
  }
  input.spec = std::move(spec);

  if (input.bytes != 0) {
    // An input without a spec is a plain copy: planned as a rank-1 identity so it gets the
    // same threading and streaming-store choices as a transpose of that size.
    const int64_t flat[1] = {*count};
    const int64_t identity[1] = {0};
    auto plan = input.spec ? runtime::PlanCache::Global().GetOrCreate(
                                 input.spec->reshape, input.spec->transpose,
                                 input.element_size, options)
                           : runtime::PlanCache::Global().GetOrCreate(flat, identity,
                                                                      input.element_size, options);
    if (!plan) {
      return Fail(ParameterError(plan.error().code, index, input.name, plan.error().message));
    }
    input.plan = std::move(*plan);
  }
  return input;
}

Status CheckBuffers(const Input& input, size_t index, ConstBuffer src, MutableBuffer dst) {
  if (src.size != input.bytes || dst.size != input.bytes) {
    return Fail(ParameterError(
        ErrorCode::kBufferSize, index, input.name,
        "expected " + std::to_string(input.bytes) + "-byte source and destination buffers, got " +
            std::to_string(src.size) + " and " + std::to_string(dst.size)));
  }
  if (input.bytes == 0) return Ok();
  if (src.data == nullptr || dst.data == nullptr) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "null buffer for a non-empty input"));
  }
  const bool in_place_copy = !input.spec && src.data == dst.data;
  if (!in_place_copy && RangesOverlap(src.data, dst.data, input.bytes)) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "source and destination buffers overlap"));
  }
  return Ok();
}

// The work of Apply once the arguments are known to be good.
Status Run(const Input& input, ConstBuffer src, MutableBuffer dst) {
  if (input.bytes == 0) return Ok();
  if (!input.spec && src.data == dst.data) return Ok();  // in place: already device layout
  return Execute(*input.plan, src.data, dst.data);
}

// ApplyAll's body, over any way of getting input i's buffers. Every argument is checked
// before anything is written.
template <class SrcAt, class DstAt>
Status ApplyAllWith(const std::vector<Input>& inputs, SrcAt src_at, DstAt dst_at) {
  const size_t n = inputs.size();
  size_t total_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    IOTX_RETURN_IF_ERROR(CheckBuffers(inputs[i], i, src_at(i), dst_at(i)));
    total_bytes += inputs[i].bytes;
  }

  if (n <= 1 || total_bytes < kParallelAcrossInputsBytes) {
    for (size_t i = 0; i < n; ++i) IOTX_RETURN_IF_ERROR(Run(inputs[i], src_at(i), dst_at(i)));
    return Ok();
  }

  // Checked arguments leave Execute nothing to refuse; should it fail anyway, the first error
  // is kept and the rest of the batch still runs.
  std::mutex error_mutex;
  std::optional<Error> first_error;
  ParallelForEach(static_cast<int>(n), [&](int i) {
    if (Status s = Run(inputs[i], src_at(i), dst_at(i)); !s) {
      std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::move(s.error());
    }
  });
  if (first_error) return Fail(std::move(*first_error));
  return Ok();
}

}  // namespace

InputTransformer::InputTransformer(std::shared_ptr<const std::vector<Input>> inputs)
    : inputs_(std::move(inputs)) {}

Expected<InputTransformer> InputTransformer::FromAttributes(
    const NeffAttributes& attributes, std::span<const ParameterDesc> parameters,
    const PlanOptions& options) {
  const size_t n = parameters.size();
  auto valid = ParseValidInputs(attributes.valid_inputs, n);
  if (!valid) return Fail(std::move(valid.error()).AtKey(std::string(kValidInputsAttr)));
  auto specs = ParseRequiredTranspose(attributes.required_transpose, n);
  if (!specs) return Fail(std::move(specs.error()).AtKey(std::string(kRequiredTransposeAttr)));
  std::vector<std::string> names;
  if (!attributes.neff_input_names.empty()) {
    auto parsed = ParseNeffInputNames(attributes.neff_input_names, n);
    if (!parsed) return Fail(std::move(parsed.error()).AtKey(std::string(kNeffInputNamesAttr)));
    names = std::move(*parsed);
  } else {
    for (size_t i = 0; i < n; ++i) {
      names.push_back(parameters[i].name.empty() ? "input" + std::to_string(i)
                                                 : parameters[i].name);
    }
  }

  auto inputs = std::make_shared<std::vector<Input>>();
  inputs->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    IOTX_ASSIGN_OR_RETURN(Input input, MakeInput(i, std::move(names[i]), parameters[i],
                                                 std::move((*specs)[i]), (*valid)[i], options));
    inputs->push_back(std::move(input));
  }
  return InputTransformer(std::move(inputs));
}

Expected<InputTransformer> InputTransformer::FromSpecs(const SpecMap& specs,
                                                       std::span<const ParameterDesc> parameters,
                                                       const PlanOptions& options,
                                                       std::vector<Warning>* warnings) {
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].name.empty()) {
      return Fail(ParameterError(ErrorCode::kInvalidArgument, i, "",
                                 "a name is needed to match io_transposes entries"));
    }
    if (!names.insert(parameters[i].name).second) {
      return Fail(ParameterError(ErrorCode::kInvalidArgument, i, parameters[i].name,
                                 "the same name is used by an earlier parameter"));
    }
  }
  for (const NamedSpec& entry : specs) {
    if (!names.contains(entry.input_name) && warnings != nullptr) {
      warnings->push_back(Warning(ErrorCode::kUnknownInput,
                                  "io_transposes entry for \"" + entry.input_name +
                                      "\" matches no parameter and is ignored")
                              .AtKey(entry.input_name));
    }
  }

  auto inputs = std::make_shared<std::vector<Input>>();
  inputs->reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const ParameterDesc& p = parameters[i];
    std::optional<TransposeSpec> spec;
    if (const TransposeSpec* found = specs.Find(p.name)) spec = *found;
    // Zero-sized parameters are not fed, as the wrapper marks them in valid_inputs.
    const bool fed = CheckedProduct(p.shape).value_or(1) != 0;
    IOTX_ASSIGN_OR_RETURN(Input input, MakeInput(i, p.name, p, std::move(spec), fed, options));
    inputs->push_back(std::move(input));
  }
  return InputTransformer(std::move(inputs));
}

const InputTransformer::Input& InputTransformer::At(size_t index) const {
  return (*inputs_)[index];
}

size_t InputTransformer::num_inputs() const noexcept { return inputs_->size(); }
const std::string& InputTransformer::name(size_t index) const { return At(index).name; }
bool InputTransformer::is_fed(size_t index) const { return At(index).fed; }
bool InputTransformer::has_transpose(size_t index) const { return At(index).spec.has_value(); }
std::span<const int64_t> InputTransformer::input_shape(size_t index) const {
  return At(index).input_shape;
}
std::span<const int64_t> InputTransformer::output_shape(size_t index) const {
  return At(index).output_shape;
}
size_t InputTransformer::input_bytes(size_t index) const { return At(index).bytes; }
size_t InputTransformer::output_bytes(size_t index) const { return At(index).bytes; }

Status InputTransformer::Apply(size_t index, ConstBuffer src, MutableBuffer dst) const {
  if (index >= inputs_->size()) {
    return Fail(ErrorCode::kIndexOutOfRange, "input index " + std::to_string(index) +
                                                 " is out of range; the model has " +
                                                 std::to_string(inputs_->size()) + " inputs");
  }
  const Input& input = At(index);
  IOTX_RETURN_IF_ERROR(CheckBuffers(input, index, src, dst));
  return Run(input, src, dst);
}

Status InputTransformer::ApplyAll(std::span<const ConstBuffer> srcs,
                                  std::span<const MutableBuffer> dsts) const {
  if (srcs.size() != num_inputs() || dsts.size() != num_inputs()) {
    return Fail(ErrorCode::kInvalidArgument,
                "expected " + std::to_string(num_inputs()) +
                    " source and destination buffers, got " + std::to_string(srcs.size()) +
                    " and " + std::to_string(dsts.size()));
  }
  return ApplyAllWith(*inputs_, [&](size_t i) { return srcs[i]; },
                      [&](size_t i) { return dsts[i]; });
}

Status ApplyAllArrays(const InputTransformer& transformer, const void* const* srcs,
                      const size_t* src_sizes, void* const* dsts, const size_t* dst_sizes) {
  return ApplyAllWith(
      *transformer.inputs_, [&](size_t i) { return ConstBuffer{srcs[i], src_sizes[i]}; },
      [&](size_t i) { return MutableBuffer{dsts[i], dst_sizes[i]}; });
}

std::string InputTransformer::Describe() const {
  std::string out;
  for (size_t i = 0; i < inputs_->size(); ++i) {
    const Input& in = At(i);
    out += std::to_string(i) + " " + in.name + ": " + ToString(in.input_shape) + " x " +
           std::to_string(in.element_size) + " B";
    if (!in.fed) {
      out += " (not fed: zero-sized)\n";
      continue;
    }
    if (in.spec) {
      out += " -> reshape " + ToString(in.spec->reshape) + " transpose " +
             ToString(in.spec->transpose) + " -> " + ToString(in.output_shape);
    } else {
      out += " (copied unchanged)";
    }
    out += '\n';
  }
  return out;
}

}  // namespace iotx
