// InputTransformer and the runtime state behind it (transformer_internal.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/overlap.h"
#include "core/parallel.h"
#include "core/text.h"
#include "iotx/attributes.h"
#include "iotx/runtime.h"
#include "runtime/plan_cache.h"
#include "runtime/transformer_internal.h"
#include "schema/unknown_input.h"

namespace iotx {
namespace runtime {
namespace {

// Below this many bytes in one ApplyAll, fanning tensors out to threads costs more than it
// saves (a sleeping worker takes tens of microseconds to join).
constexpr size_t kParallelAcrossInputsBytes = size_t{1} << 20;
// Inputs from this size on run one after another, each spread over the threads by its plan;
// smaller ones (which a plan keeps on one thread) run side by side as tasks of one loop.
constexpr size_t kLargeInputBytes = 512 * 1024;
// Echoed names are cut to this many bytes, as the schema code cuts input names.
constexpr size_t kMaxEchoBytes = 200;

// The first `max` bytes of `text`, cut on a UTF-8 boundary.
std::string_view Head(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

// "name" in quotes, cut to kMaxEchoBytes.
std::string Quote(std::string_view name) {
  std::string out = "\"" + std::string(Head(name, kMaxEchoBytes)) + "\"";
  if (name.size() > kMaxEchoBytes) out += "... (" + std::to_string(name.size()) + " bytes)";
  return out;
}

// Names as a message lists them: quoted, each cut, the first few (ListFirstNames).
std::string QuoteList(std::span<const std::string> names) {
  return ListFirstNames(names, [](const std::string& name) { return Quote(name); });
}

std::string Describe(size_t index, std::string_view name) {
  return "parameter " + std::to_string(index) + " (" + Quote(name) + ")";
}

Error ParameterError(ErrorCode code, size_t index, std::string_view name,
                     const std::string& message) {
  return Error(code, Describe(index, name) + ": " + message)
      .AtElement(static_cast<int64_t>(index))
      .AtKey(std::string(Head(name, kMaxEchoBytes)));
}

// True when `spec` only moves size-1 dims: the flat bytes come out as they went in.
bool KeepsLayout(const TransposeSpec& spec) {
  int64_t last = -1;
  for (int64_t axis : spec.transpose) {
    if (spec.reshape[static_cast<size_t>(axis)] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

// Shapes, sizes and the plan of one input, checked against its spec. `fed` is the
// valid_inputs flag (FromSpecs derives it from the shape).
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
  if (parameter.shape.size() > kMaxRank) {
    return Fail(ParameterError(ErrorCode::kUnsupported, index, input.name,
                               "rank " + std::to_string(parameter.shape.size()) +
                                   " exceeds the maximum of " + std::to_string(kMaxRank)));
  }
  for (size_t d = 0; d < parameter.shape.size(); ++d) {
    if (parameter.shape[d] < 0) {
      return Fail(ParameterError(ErrorCode::kNegativeDim, index, input.name,
                                 "shape " + ToString(parameter.shape) + " has " +
                                     std::to_string(parameter.shape[d]) + " at index " +
                                     std::to_string(d) + "; dims must be >= 0"));
    }
  }
  const std::optional<int64_t> count = CheckedProduct(parameter.shape);
  if (!count) {
    return Fail(ParameterError(ErrorCode::kDimOverflow, index, input.name,
                               "the element count of shape " + ToString(parameter.shape) +
                                   " overflows int64"));
  }
  if (__builtin_mul_overflow(static_cast<size_t>(*count), parameter.element_size, &input.bytes) ||
      input.bytes > static_cast<size_t>(INT64_MAX)) {
    return Fail(ParameterError(ErrorCode::kDimOverflow, index, input.name,
                               "shape " + ToString(parameter.shape) + " of " +
                                   std::to_string(parameter.element_size) +
                                   "-byte elements has more bytes than int64 holds"));
  }
  if (!fed && *count != 0) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "valid_inputs marks it as not fed, but its shape " +
                                   ToString(parameter.shape) + " has " + std::to_string(*count) +
                                   " elements; only zero-sized parameters are left out"));
  }
  if (fed && *count == 0) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               "valid_inputs marks it as fed, but its shape " +
                                   ToString(parameter.shape) +
                                   " has no elements; the wrapper marks zero-sized parameters 0"));
  }

  if (spec) {
    if (Status s = CheckSpecFits(*spec, parameter.shape, input.name); !s) {
      return Fail(ParameterError(s.error().code, index, input.name, s.error().message));
    }
    input.output_shape = DeviceShape(*spec);
    input.changes_layout = input.bytes != 0 && !KeepsLayout(*spec);
  } else {
    input.output_shape = parameter.shape;
  }
  input.spec = std::move(spec);

  if (input.bytes != 0) {
    // An input without a spec is a plain copy: planned as a rank-1 identity so it gets the
    // same threading and streaming-store choices as a transpose of that size.
    const int64_t flat[1] = {*count};
    const int64_t identity[1] = {0};
    auto plan = input.spec ? PlanCache::Global().GetOrCreate(input.spec->reshape,
                                                             input.spec->transpose,
                                                             input.element_size, options)
                           : PlanCache::Global().GetOrCreate(flat, identity, input.element_size,
                                                             options);
    if (!plan) {
      return Fail(ParameterError(plan.error().code, index, input.name, plan.error().message));
    }
    input.plan = std::move(*plan);
  }
  return input;
}

Status CheckOptions(const ExecuteOptions& options) {
  if (options.max_threads < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "max_threads is " + std::to_string(options.max_threads) +
                    "; expected 0 (the plan's choice), 1 (the calling thread only) or more");
  }
  return Ok();
}

bool InPlace(const Input& input, const void* src, const void* dst) {
  return !input.changes_layout && src == dst;
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
  if (!InPlace(input, src.data, dst.data) && RangesOverlap(src.data, dst.data, input.bytes)) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input.name,
                               input.changes_layout
                                   ? "source and destination buffers overlap; a transpose "
                                     "cannot run in place"
                                   : "source and destination buffers overlap without being the "
                                     "same buffer (in place, src == dst, is free)"));
  }
  return Ok();
}

// The work of Apply once the arguments are known to be good.
Status Run(const Input& input, ConstBuffer src, MutableBuffer dst, const ExecuteOptions& options) {
  if (input.bytes == 0) return Ok();
  if (InPlace(input, src.data, dst.data)) return Ok();  // already the device layout
  return Execute(*input.plan, src.data, dst.data, options);
}

// One buffer of a batch, for the overlap check across inputs.
struct Interval {
  uintptr_t begin;
  uintptr_t end;
  size_t input;
  bool written;
};

// Intervals the check keeps on the stack (64 inputs); more spill to a per-thread array
// that is reused, so only a thread's first batch of that size allocates.
constexpr size_t kStackIntervals = 128;

std::string BufferName(const TransformerState& state, const Interval& v) {
  return std::string(v.written ? "the destination of " : "the source of ") +
         Describe(v.input, state.inputs[v.input].name);
}

// No destination of a batch may share a byte with any other buffer of the batch (sources may
// share bytes with each other: they are only read). Sorts the buffers by address and sweeps
// once, remembering the furthest-reaching buffer and the furthest-reaching destination seen:
// a buffer overlaps an earlier one of a kind exactly when it starts before that kind's
// furthest end. O(n log n), allocation-free up to 64 inputs.
Status CheckNoOverlapAcross(const TransformerState& state, const BufferList& buffers) {
  const size_t n = state.inputs.size();
  if (n < 2) return Ok();  // one input: CheckBuffers covered it
  Interval on_stack[kStackIntervals];
  Interval* intervals = on_stack;
  if (2 * n > kStackIntervals) {
    thread_local std::vector<Interval> spill;
    try {
      if (spill.size() < 2 * n) spill.resize(2 * n);
    } catch (const std::bad_alloc&) {
      return Fail(ErrorCode::kOutOfMemory, "out of memory for the overlap check of " +
                                               std::to_string(n) + " inputs");
    }
    intervals = spill.data();
  }
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const Input& input = state.inputs[i];
    if (input.bytes == 0) continue;
    const auto s = reinterpret_cast<uintptr_t>(buffers.Src(i).data);
    const auto d = reinterpret_cast<uintptr_t>(buffers.Dst(i).data);
    // In place, source and destination are one buffer that is written.
    if (s != d) intervals[m++] = {s, s + input.bytes, i, false};
    intervals[m++] = {d, d + input.bytes, i, true};
  }
  std::sort(intervals, intervals + m,
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  const Interval* furthest = nullptr;          // of every buffer so far
  const Interval* furthest_written = nullptr;  // of the destinations so far
  for (size_t k = 0; k < m; ++k) {
    const Interval& v = intervals[k];
    const Interval* hit = nullptr;
    if (v.written && furthest != nullptr && v.begin < furthest->end) hit = furthest;
    if (!v.written && furthest_written != nullptr && v.begin < furthest_written->end) {
      hit = furthest_written;
    }
    if (hit != nullptr) {
      const size_t first = std::min(v.input, hit->input);
      return Fail(Error(ErrorCode::kInvalidArgument,
                        BufferName(state, v) + " overlaps " + BufferName(state, *hit) +
                            "; the inputs of one batch may run in parallel, so no destination "
                            "may share a byte with another buffer of the batch")
                      .AtElement(static_cast<int64_t>(first)));
    }
    if (furthest == nullptr || v.end > furthest->end) furthest = &v;
    if (v.written && (furthest_written == nullptr || v.end > furthest_written->end)) {
      furthest_written = &v;
    }
  }
  return Ok();
}

}  // namespace

std::string BoundedText(std::string text) {
  if (text.size() <= kMaxMessageBytes) return text;
  // Keep the head (what and where) and the tail (what was expected).
  constexpr size_t kTail = kMaxMessageBytes / 4;
  constexpr size_t kMark = 40;  // " [... N bytes ...] "
  const size_t head = Head(text, kMaxMessageBytes - kTail - kMark).size();
  size_t tail_start = text.size() - kTail;
  while (tail_start < text.size() &&
         (static_cast<unsigned char>(text[tail_start]) & 0xC0) == 0x80) {
    ++tail_start;
  }
  return text.substr(0, head) + " [... " + std::to_string(tail_start - head) + " bytes ...] " +
         text.substr(tail_start);
}

Error Bounded(Error error) {
  error.message = BoundedText(std::move(error.message));
  return error;
}

Expected<const Input*> Find(const TransformerState* state, size_t index) {
  const size_t n = state != nullptr ? state->inputs.size() : 0;
  if (index >= n) {
    return Fail(ErrorCode::kIndexOutOfRange, "input index " + std::to_string(index) +
                                                 " is out of range; the model has " +
                                                 std::to_string(n) + " inputs");
  }
  return &state->inputs[index];
}

Expected<StatePtr> BuildFromAttributes(const NeffAttributes& attributes,
                                       std::span<const ParameterDesc> parameters,
                                       const BuildOptions& options) {
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

  auto state = std::make_shared<TransformerState>();
  state->inputs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    IOTX_ASSIGN_OR_RETURN(Input input,
                          MakeInput(i, std::move(names[i]), parameters[i],
                                    std::move((*specs)[i]), (*valid)[i], options.plan));
    state->inputs.push_back(std::move(input));
  }
  return StatePtr(std::move(state));
}

Expected<StatePtr> BuildFromSpecs(const SpecMap& specs, std::span<const ParameterDesc> parameters,
                                  const BuildOptions& options) {
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
  auto state = std::make_shared<TransformerState>();
  for (const NamedSpec& entry : specs) {
    if (!names.contains(entry.input_name)) state->ignored_specs.push_back(entry.input_name);
  }
  if (!state->ignored_specs.empty() && !options.ignore_unmatched_specs) {
    const std::vector<std::string>& unmatched = state->ignored_specs;
    Error error = UnknownInputError(
        Head(unmatched.front(), kMaxEchoBytes), "the model's parameters",
        ListFirstNames(parameters, [](const ParameterDesc& p) { return Quote(p.name); }));
    if (unmatched.size() > 1) {
      error.message += "; nor are " + QuoteList(std::span(unmatched).subspan(1));
    }
    error.message +=
        ". Its input would reach the device in the wrong layout; to ignore such entries, set "
        "ignore_unmatched_specs (C: IOTX_BUILD_IGNORE_UNMATCHED_SPECS)";
    return Fail(std::move(error));
  }

  state->inputs.reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const ParameterDesc& p = parameters[i];
    std::optional<TransposeSpec> spec;
    if (const TransposeSpec* found = specs.Find(p.name)) spec = *found;
    // Zero-sized parameters are not fed, as the wrapper marks them in valid_inputs.
    const bool fed = CheckedProduct(p.shape).value_or(1) != 0;
    IOTX_ASSIGN_OR_RETURN(Input input,
                          MakeInput(i, p.name, p, std::move(spec), fed, options.plan));
    state->inputs.push_back(std::move(input));
  }
  return StatePtr(std::move(state));
}

Status Apply(const TransformerState& state, size_t index, ConstBuffer src, MutableBuffer dst,
             const ExecuteOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const Input* input, Find(&state, index));
  IOTX_RETURN_IF_ERROR(CheckOptions(options));
  IOTX_RETURN_IF_ERROR(CheckBuffers(*input, index, src, dst));
  return Run(*input, src, dst, options);
}

Status ApplyRange(const TransformerState& state, size_t index, ConstBuffer src, size_t offset,
                  MutableBuffer dst, const ExecuteOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const Input* input, Find(&state, index));
  IOTX_RETURN_IF_ERROR(CheckOptions(options));
  const size_t total = input->bytes;
  if (src.size != total) {
    return Fail(ParameterError(ErrorCode::kBufferSize, index, input->name,
                               "expected the whole " + std::to_string(total) +
                                   "-byte source, got " + std::to_string(src.size) + " bytes"));
  }
  if (offset > total || dst.size > total - offset) {
    return Fail(ParameterError(
        ErrorCode::kBufferSize, index, input->name,
        "the range of " + std::to_string(dst.size) + " bytes at offset " + std::to_string(offset) +
            " ends past the " + std::to_string(total) + "-byte output"));
  }
  if (dst.size == 0) return Ok();
  if (src.data == nullptr || dst.data == nullptr) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input->name,
                               "null buffer for a non-empty range"));
  }
  const auto* own_bytes = static_cast<const uint8_t*>(src.data) + offset;
  if (!input->changes_layout && static_cast<const void*>(own_bytes) == dst.data) return Ok();  // already in place
  const auto s = reinterpret_cast<uintptr_t>(src.data);
  const auto d = reinterpret_cast<uintptr_t>(dst.data);
  if (s < d + dst.size && d < s + total) {
    return Fail(ParameterError(ErrorCode::kInvalidArgument, index, input->name,
                               "the destination range overlaps the source"));
  }
  return ExecuteRange(*input->plan, src.data, dst.data, offset, dst.size, options);
}

Status ApplyAll(const TransformerState& state, const BufferList& buffers,
                const ExecuteOptions& options) {
  IOTX_RETURN_IF_ERROR(CheckOptions(options));
  const size_t n = state.inputs.size();
  size_t small_bytes = 0;
  size_t small_count = 0;
  for (size_t i = 0; i < n; ++i) {
    const Input& input = state.inputs[i];
    IOTX_RETURN_IF_ERROR(CheckBuffers(input, i, buffers.Src(i), buffers.Dst(i)));
    if (input.bytes < kLargeInputBytes) {
      small_bytes += input.bytes;
      ++small_count;
    }
  }
  IOTX_RETURN_IF_ERROR(CheckNoOverlapAcross(state, buffers));

  // Large inputs one after another, each over every thread the options allow.
  for (size_t i = 0; i < n; ++i) {
    if (state.inputs[i].bytes < kLargeInputBytes) continue;
    IOTX_RETURN_IF_ERROR(Run(state.inputs[i], buffers.Src(i), buffers.Dst(i), options));
  }
  // Small ones side by side, each on one thread: tasks claim inputs from a shared counter.
  // Checked arguments leave Execute nothing to refuse; should it fail anyway, the first error
  // is kept and the rest of the batch still runs.
  ExecuteOptions one_thread = options;
  one_thread.max_threads = 1;
  int tasks = 1;
  if (small_count > 1 && small_bytes >= kParallelAcrossInputsBytes && options.max_threads != 1) {
    tasks = static_cast<int>(std::min<size_t>(small_count, 1024));
    if (options.max_threads > 0) tasks = std::min(tasks, options.max_threads);
  }
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  std::optional<Error> first_error;
  const bool all_ran = ParallelForEach(
      tasks,
      [&](int) {
        for (;;) {
          const size_t i = next.fetch_add(1, std::memory_order_relaxed);
          if (i >= n) return;
          if (state.inputs[i].bytes >= kLargeInputBytes) continue;
          if (Status s = Run(state.inputs[i], buffers.Src(i), buffers.Dst(i), one_thread); !s) {
            std::lock_guard lock(error_mutex);
            if (!first_error) first_error = std::move(s.error());
          }
        }
      },
      options.parallel_for, options.parallel_for_context);
  if (first_error) return Fail(std::move(*first_error));
  if (!all_ran && next.load(std::memory_order_relaxed) < n) {
    return Fail(ErrorCode::kInvalidArgument,
                "the parallel_for callback returned before running all " + std::to_string(tasks) +
                    " tasks; some inputs were not written");
  }
  return Ok();
}

std::string Describe(const TransformerState& state) {
  std::string out;
  for (size_t i = 0; i < state.inputs.size(); ++i) {
    const Input& in = state.inputs[i];
    out += "input " + std::to_string(i) + " " + Quote(in.name) + ": " + ToString(in.input_shape) +
           " x " + std::to_string(in.element_size) + " B";
    if (!in.fed) {
      out += ", not fed (zero-sized)\n";
      continue;
    }
    if (in.spec) {
      out += " -> reshape " + ToString(in.spec->reshape) + " transpose " +
             ToString(in.spec->transpose) + " -> " + ToString(in.output_shape);
      if (!in.changes_layout) out += " (layout unchanged: in place is free)";
    } else {
      out += ", no spec: copied unchanged (in place is free)";
    }
    out += ", " + std::to_string(in.bytes) + " bytes";
    if (in.plan) out += ", range granule " + std::to_string(RangeGranule(*in.plan)) + " bytes";
    out += '\n';
    if (in.plan) {
      const std::string plan = iotx::Describe(*in.plan);
      size_t start = 0;
      while (start < plan.size()) {
        const size_t end = plan.find('\n', start);
        const size_t stop = end == std::string::npos ? plan.size() : end;
        out += "    " + plan.substr(start, stop - start) + '\n';
        start = stop + 1;
      }
    }
  }
  if (!state.ignored_specs.empty()) {
    out += "ignored io_transposes entries (no such parameter): " +
           QuoteList(state.ignored_specs) + '\n';
  }
  return out;
}

}  // namespace runtime

// InputTransformer: a handle to the shared, immutable state.

InputTransformer::InputTransformer(std::shared_ptr<const runtime::TransformerState> state)
    : state_(std::move(state)) {}

Expected<InputTransformer> InputTransformer::FromAttributes(
    const NeffAttributes& attributes, std::span<const ParameterDesc> parameters,
    const BuildOptions& options) {
  auto state = runtime::BuildFromAttributes(attributes, parameters, options);
  if (!state) return Fail(runtime::Bounded(std::move(state).error()));
  return InputTransformer(std::move(*state));
}

Expected<InputTransformer> InputTransformer::FromSpecs(const SpecMap& specs,
                                                       std::span<const ParameterDesc> parameters,
                                                       const BuildOptions& options) {
  auto state = runtime::BuildFromSpecs(specs, parameters, options);
  if (!state) return Fail(runtime::Bounded(std::move(state).error()));
  return InputTransformer(std::move(*state));
}

size_t InputTransformer::num_inputs() const noexcept {
  return state_ != nullptr ? state_->inputs.size() : 0;
}

// Each query: the input or the index error, then one field of it.
#define IOTX_INPUT_QUERY(Type, method, expr)                                  \
  Expected<Type> InputTransformer::method(size_t index) const {               \
    IOTX_ASSIGN_OR_RETURN(const runtime::Input* in, runtime::Find(state_.get(), index)); \
    return Type(expr);                                                        \
  }
IOTX_INPUT_QUERY(std::string_view, name, in->name)
IOTX_INPUT_QUERY(bool, is_fed, in->fed)
IOTX_INPUT_QUERY(bool, has_transpose, in->spec.has_value())
IOTX_INPUT_QUERY(bool, changes_layout, in->changes_layout)
IOTX_INPUT_QUERY(std::span<const int64_t>, input_shape, in->input_shape.span())
IOTX_INPUT_QUERY(std::span<const int64_t>, output_shape, in->output_shape.span())
IOTX_INPUT_QUERY(size_t, element_size, in->element_size)
IOTX_INPUT_QUERY(size_t, input_bytes, in->bytes)
IOTX_INPUT_QUERY(size_t, output_bytes, in->bytes)
IOTX_INPUT_QUERY(size_t, range_granule, in->plan ? RangeGranule(*in->plan) : size_t{1})
#undef IOTX_INPUT_QUERY

std::span<const std::string> InputTransformer::ignored_specs() const noexcept {
  if (state_ == nullptr) return {};
  return state_->ignored_specs;
}

Status InputTransformer::Apply(size_t index, ConstBuffer src, MutableBuffer dst,
                               const ExecuteOptions& options) const {
  if (state_ == nullptr) return Fail(runtime::Find(nullptr, index).error());
  return runtime::Apply(*state_, index, src, dst, options);
}

Status InputTransformer::ApplyRange(size_t index, ConstBuffer src, size_t offset,
                                    MutableBuffer dst, const ExecuteOptions& options) const {
  if (state_ == nullptr) return Fail(runtime::Find(nullptr, index).error());
  return runtime::ApplyRange(*state_, index, src, offset, dst, options);
}

Status InputTransformer::ApplyAll(std::span<const ConstBuffer> srcs,
                                  std::span<const MutableBuffer> dsts,
                                  const ExecuteOptions& options) const {
  if (srcs.size() != num_inputs() || dsts.size() != num_inputs()) {
    return Fail(ErrorCode::kInvalidArgument,
                "expected " + std::to_string(num_inputs()) +
                    " source and destination buffers, got " + std::to_string(srcs.size()) +
                    " and " + std::to_string(dsts.size()));
  }
  if (state_ == nullptr) return Ok();  // no inputs
  runtime::BufferList buffers;
  buffers.src_buffers = srcs.data();
  buffers.dst_buffers = dsts.data();
  return runtime::ApplyAll(*state_, buffers, options);
}

std::string InputTransformer::Describe() const {
  return state_ != nullptr ? runtime::Describe(*state_) : std::string();
}

}  // namespace iotx
