// The C API (include/iotx/iotx.h) over the runtime state (transformer_internal.h). Every
// entry point validates its arguments and turns errors, and any exception from below, into
// an iotx_error; when even that cannot be allocated it returns the static out-of-memory
// error, never NULL (which means success) and never std::terminate.
#include "iotx/iotx.h"

#include <climits>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iotx/io_transposes.h"
#include "iotx/runtime.h"
#include "runtime/transformer_internal.h"

// One allocation: the struct, then the message's bytes (released with iotx_error_free).
struct iotx_error {
  iotx_code value;
  const char* code;     // static storage (the code table's string literals)
  const char* message;  // the bytes after this struct, or static text
};

struct iotx_transformer {
  iotx::runtime::StatePtr state;
};

namespace {

using iotx::ErrorCode;
namespace runtime = iotx::runtime;

static_assert(IOTX_MAX_MESSAGE_BYTES == runtime::kMaxMessageBytes);
static_assert(IOTX_VERSION_NUMBER < 1000000, "a version part above 99 would overlap the next");
// The C enum and the C++ codes are expanded from the same list; spot-check the expansion.
static_assert(IOTX_E401 == static_cast<int>(ErrorCode::kBufferSize));
static_assert(NCC_IHNW003 == static_cast<int>(ErrorCode::kReshapeSizeMismatch));
static_assert(IOTX_OK == 0);

// Returned when an error cannot be allocated: not heap memory, so iotx_error_free ignores it.
iotx_error kOutOfMemory = {IOTX_E901, "IOTX_E901",
                           "out of memory (not even the error's message could be allocated)"};

iotx_error* MakeError(ErrorCode code, std::string_view message) noexcept {
  const size_t size = std::min(message.size(), runtime::kMaxMessageBytes);
  void* block = ::operator new(sizeof(iotx_error) + size + 1, std::nothrow);
  if (block == nullptr) return &kOutOfMemory;
  char* text = static_cast<char*>(block) + sizeof(iotx_error);
  std::memcpy(text, message.data(), size);
  text[size] = '\0';
  return new (block) iotx_error{static_cast<iotx_code>(code), iotx::CodeName(code).data(), text};
}

iotx_error* MakeError(const iotx::Error& error) noexcept {
  try {
    return MakeError(error.code, runtime::BoundedText(error.Describe()));
  } catch (...) {  // the message itself could not be built
    return &kOutOfMemory;
  }
}

iotx_error* MakeError(ErrorCode code, const std::string& function, const std::string& message) {
  return MakeError(iotx::Error(code, function + ": " + message));
}

iotx_error* NullArgument(const char* function, const char* argument) {
  return MakeError(ErrorCode::kInvalidArgument, function,
                   std::string("`") + argument + "` must not be NULL");
}

// Runs `body` (returning iotx_error*), turning any exception into an error.
template <class Body>
iotx_error* Guard(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kOutOfMemory, "out of memory");
  } catch (const std::exception& e) {
    try {
      return MakeError(ErrorCode::kInternal, function, e.what());
    } catch (...) {
      return &kOutOfMemory;
    }
  } catch (...) {
    return MakeError(ErrorCode::kInternal, "unexpected exception");
  }
}

// An options struct the caller sized: at least this version's first layout (`min_size`), at
// most a plausible size, and any bytes beyond the fields this version knows (`known_size`)
// zero, as the defaults of fields a newer header added would be.
iotx_error* CheckStructSize(const char* function, const char* what, const void* options,
                            size_t struct_size, size_t min_size, size_t known_size) {
  constexpr size_t kMaxPlausible = 4096;
  if (struct_size < min_size || struct_size > kMaxPlausible) {
    return MakeError(ErrorCode::kInvalidArgument, function,
                     std::string(what) + "->struct_size is " + std::to_string(struct_size) +
                         "; expected sizeof(" + what + ") (" + std::to_string(known_size) +
                         " in iotx " + IOTX_VERSION_STRING + "; initialize with the _INIT macro)");
  }
  const auto* bytes = static_cast<const unsigned char*>(options);
  for (size_t i = known_size; i < struct_size; ++i) {
    if (bytes[i] != 0) {
      return MakeError(ErrorCode::kUnsupported, function,
                       std::string(what) + " has " + std::to_string(struct_size) +
                           " bytes with non-zero fields past the " +
                           std::to_string(known_size) + " that iotx " + IOTX_VERSION_STRING +
                           " knows: options of a newer version are not supported by this one");
    }
  }
  return nullptr;
}

// The first layouts of the options structs: later versions only append fields.
constexpr size_t kApplyOptionsV1 = offsetof(iotx_apply_options, range_length) + sizeof(size_t);
constexpr size_t kBuildOptionsV1 = offsetof(iotx_build_options, flags) + sizeof(uint32_t);
static_assert(kApplyOptionsV1 <= sizeof(iotx_apply_options));
static_assert(kBuildOptionsV1 <= sizeof(iotx_build_options));

struct ApplyCall {
  iotx::ExecuteOptions execute;
  bool range = false;
  size_t offset = 0;
  size_t length = 0;
};

iotx_error* ReadApplyOptions(const char* function, const iotx_apply_options* options,
                             ApplyCall* call) {
  if (options == nullptr) return nullptr;
  if (iotx_error* e = CheckStructSize(function, "iotx_apply_options", options,
                                      options->struct_size, kApplyOptionsV1,
                                      sizeof(iotx_apply_options))) {
    return e;
  }
  if ((options->flags & ~IOTX_APPLY_RANGE) != 0) {
    return MakeError(ErrorCode::kInvalidArgument, function,
                     "iotx_apply_options.flags has unknown bits " +
                         std::to_string(options->flags & ~IOTX_APPLY_RANGE) +
                         "; expected IOTX_APPLY_* bits only");
  }
  call->execute.max_threads = static_cast<int>(std::min<uint32_t>(options->max_threads, INT_MAX));
  call->execute.parallel_for = options->parallel_for;
  call->execute.parallel_for_context = options->parallel_for_context;
  call->range = (options->flags & IOTX_APPLY_RANGE) != 0;
  call->offset = options->range_offset;
  call->length = options->range_length;
  return nullptr;
}

iotx::Expected<std::vector<iotx::ParameterDesc>> ToParameters(const char* function,
                                                              const iotx_parameter* parameters,
                                                              size_t count) {
  std::vector<iotx::ParameterDesc> out(count);
  for (size_t i = 0; i < count; ++i) {
    const iotx_parameter& p = parameters[i];
    const std::string where = std::string(function) + ": parameters[" + std::to_string(i) + "]";
    if (p.rank > iotx::kMaxRank) {
      return iotx::Fail(ErrorCode::kUnsupported,
                        where + ".rank is " + std::to_string(p.rank) + "; the maximum is " +
                            std::to_string(iotx::kMaxRank));
    }
    if (p.dims == nullptr && p.rank != 0) {
      return iotx::Fail(ErrorCode::kInvalidArgument,
                        where + ".dims is NULL but its rank is " + std::to_string(p.rank));
    }
    if (p.name != nullptr) out[i].name = p.name;
    if (p.rank != 0) out[i].shape = iotx::Dims(std::span<const int64_t>(p.dims, p.rank));
    out[i].element_size = p.element_size;
  }
  return out;
}

iotx_error* Publish(iotx::Expected<runtime::StatePtr> made, iotx_transformer** out) {
  if (!made) return MakeError(made.error());
  *out = new iotx_transformer{std::move(*made)};
  return nullptr;
}

// The input behind a per-input query, or the error to return.
iotx_error* FindInput(const char* function, const iotx_transformer* t, size_t index,
                      const void* out, const runtime::Input** input) {
  if (t == nullptr) return NullArgument(function, "transformer");
  if (out == nullptr) return NullArgument(function, "out");
  auto found = runtime::Find(t->state.get(), index);
  if (!found) return MakeError(ErrorCode::kIndexOutOfRange, function, found.error().message);
  *input = *found;
  return nullptr;
}

// A per-input query: *out = field(input).
template <class T, class Field>
iotx_error* Query(const char* function, const iotx_transformer* t, size_t index, T* out,
                  Field field) {
  return Guard(function, [&]() -> iotx_error* {
    const runtime::Input* input = nullptr;
    if (iotx_error* e = FindInput(function, t, index, out, &input)) return e;
    *out = field(*input);
    return nullptr;
  });
}

iotx_error* ReadBuildOptions(const char* function, const iotx_build_options* options,
                             iotx::BuildOptions* build) {
  if (options == nullptr) return nullptr;
  if (iotx_error* e = CheckStructSize(function, "iotx_build_options", options,
                                      options->struct_size, kBuildOptionsV1,
                                      sizeof(iotx_build_options))) {
    return e;
  }
  constexpr uint32_t kKnown = IOTX_BUILD_IGNORE_UNMATCHED_SPECS | IOTX_BUILD_CALLER_THREADS;
  if ((options->flags & ~kKnown) != 0) {
    return MakeError(ErrorCode::kInvalidArgument, function,
                     "iotx_build_options.flags has unknown bits " +
                         std::to_string(options->flags & ~kKnown) +
                         "; expected IOTX_BUILD_* bits only");
  }
  build->ignore_unmatched_specs = (options->flags & IOTX_BUILD_IGNORE_UNMATCHED_SPECS) != 0;
  build->plan.start_workers = (options->flags & IOTX_BUILD_CALLER_THREADS) == 0;
  return nullptr;
}

iotx_error* FromAttributes(const char* function, const char* valid_inputs,
                           const char* required_transpose, const char* neff_input_names,
                           const iotx_parameter* parameters, size_t num_parameters,
                           const iotx_build_options* options, iotx_transformer** out) {
  return Guard(function, [&]() -> iotx_error* {
    if (out == nullptr) return NullArgument(function, "out");
    *out = nullptr;
    if (valid_inputs == nullptr) return NullArgument(function, "valid_inputs");
    if (required_transpose == nullptr) return NullArgument(function, "required_transpose");
    if (parameters == nullptr && num_parameters != 0) return NullArgument(function, "parameters");
    iotx::BuildOptions build;
    if (iotx_error* e = ReadBuildOptions(function, options, &build)) return e;
    auto params = ToParameters(function, parameters, num_parameters);
    if (!params) return MakeError(params.error());
    iotx::NeffAttributes attributes{valid_inputs, required_transpose,
                                    neff_input_names != nullptr ? neff_input_names : ""};
    return Publish(runtime::BuildFromAttributes(attributes, *params, build), out);
  });
}

iotx_error* FromJson(const char* function, const char* json, size_t json_size,
                     const iotx_parameter* parameters, size_t num_parameters,
                     const iotx_build_options* options, iotx_transformer** out) {
  return Guard(function, [&]() -> iotx_error* {
    if (out == nullptr) return NullArgument(function, "out");
    *out = nullptr;
    if (json == nullptr) return NullArgument(function, "json");
    if (parameters == nullptr && num_parameters != 0) return NullArgument(function, "parameters");
    iotx::BuildOptions build;
    if (iotx_error* e = ReadBuildOptions(function, options, &build)) return e;
    // json_size is the document: a NUL inside it is not JSON (a C string's end passed with
    // the wrong size, or two things in one buffer), and the parser must not stop there.
    if (const void* nul = std::memchr(json, '\0', json_size)) {
      const auto at = static_cast<size_t>(static_cast<const char*>(nul) - json);
      return MakeError(iotx::Error(ErrorCode::kJsonSyntax,
                                   "malformed JSON: a NUL byte at offset " + std::to_string(at) +
                                       " of the " + std::to_string(json_size) +
                                       " bytes given; json_size must be the document's length")
                           .InFile("io_transposes.json"));
    }
    auto params = ToParameters(function, parameters, num_parameters);
    if (!params) return MakeError(params.error());
    auto parsed = iotx::ParseIoTransposes(std::string_view(json, json_size), "io_transposes.json");
    if (!parsed) return MakeError(parsed.error());
    return Publish(runtime::BuildFromSpecs(parsed->specs, *params, build), out);
  });
}

iotx_error* ApplyOne(const char* function, const iotx_transformer* transformer, size_t index,
                     const void* src, size_t src_size, void* dst, size_t dst_size,
                     const iotx_apply_options* options) {
  return Guard(function, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(function, "transformer");
    ApplyCall call;
    if (iotx_error* e = ReadApplyOptions(function, options, &call)) return e;
    iotx::Status s;
    if (call.range) {
      if (dst_size != call.length) {
        return MakeError(ErrorCode::kBufferSize, function,
                         "dst_size is " + std::to_string(dst_size) + " but range_length is " +
                             std::to_string(call.length) + "; dst receives exactly the range");
      }
      s = runtime::ApplyRange(*transformer->state, index, {src, src_size}, call.offset,
                              {dst, dst_size}, call.execute);
    } else {
      s = runtime::Apply(*transformer->state, index, {src, src_size}, {dst, dst_size},
                         call.execute);
    }
    return s ? nullptr : MakeError(s.error());
  });
}

iotx_error* ApplyAll(const char* function, const iotx_transformer* transformer,
                     const void* const* srcs, const size_t* src_sizes, void* const* dsts,
                     const size_t* dst_sizes, size_t count, const iotx_apply_options* options) {
  return Guard(function, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(function, "transformer");
    ApplyCall call;
    if (iotx_error* e = ReadApplyOptions(function, options, &call)) return e;
    if (call.range) {
      return MakeError(ErrorCode::kInvalidArgument, function,
                       "IOTX_APPLY_RANGE applies to one input: use iotx_transformer_apply_ex");
    }
    const size_t n = transformer->state->inputs.size();
    if (count != n) {
      return MakeError(ErrorCode::kInvalidArgument, function,
                       "count is " + std::to_string(count) + " but the model has " +
                           std::to_string(n) + " inputs");
    }
    if (n != 0) {
      if (srcs == nullptr) return NullArgument(function, "srcs");
      if (src_sizes == nullptr) return NullArgument(function, "src_sizes");
      if (dsts == nullptr) return NullArgument(function, "dsts");
      if (dst_sizes == nullptr) return NullArgument(function, "dst_sizes");
    }
    runtime::BufferList buffers;
    buffers.srcs = srcs;
    buffers.src_sizes = src_sizes;
    buffers.dsts = dsts;
    buffers.dst_sizes = dst_sizes;
    iotx::Status s = runtime::ApplyAll(*transformer->state, buffers, call.execute);
    return s ? nullptr : MakeError(s.error());
  });
}

}  // namespace

extern "C" {

unsigned iotx_version(void) { return IOTX_VERSION_NUMBER; }

const char* iotx_version_string(void) { return IOTX_VERSION_STRING; }

iotx_error* iotx_transformer_from_attributes(const char* valid_inputs,
                                             const char* required_transpose,
                                             const char* neff_input_names,
                                             const iotx_parameter* parameters,
                                             size_t num_parameters, iotx_transformer** out) {
  return FromAttributes("iotx_transformer_from_attributes", valid_inputs, required_transpose,
                        neff_input_names, parameters, num_parameters, nullptr, out);
}

iotx_error* iotx_transformer_from_attributes_ex(const char* valid_inputs,
                                                const char* required_transpose,
                                                const char* neff_input_names,
                                                const iotx_parameter* parameters,
                                                size_t num_parameters,
                                                const iotx_build_options* options,
                                                iotx_transformer** out) {
  return FromAttributes("iotx_transformer_from_attributes_ex", valid_inputs, required_transpose,
                        neff_input_names, parameters, num_parameters, options, out);
}

iotx_error* iotx_transformer_from_json(const char* json, size_t json_size,
                                       const iotx_parameter* parameters, size_t num_parameters,
                                       iotx_transformer** out) {
  return FromJson("iotx_transformer_from_json", json, json_size, parameters, num_parameters,
                  nullptr, out);
}

iotx_error* iotx_transformer_from_json_ex(const char* json, size_t json_size,
                                          const iotx_parameter* parameters,
                                          size_t num_parameters,
                                          const iotx_build_options* options,
                                          iotx_transformer** out) {
  return FromJson("iotx_transformer_from_json_ex", json, json_size, parameters, num_parameters,
                  options, out);
}

void iotx_transformer_free(iotx_transformer* transformer) { delete transformer; }

iotx_error* iotx_transformer_num_inputs(const iotx_transformer* transformer, size_t* out) {
  constexpr const char* kFn = "iotx_transformer_num_inputs";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = transformer->state->inputs.size();
    return nullptr;
  });
}

iotx_error* iotx_transformer_input_name(const iotx_transformer* transformer, size_t index,
                                        const char** out) {
  return Query("iotx_transformer_input_name", transformer, index, out,
               [](const runtime::Input& in) { return in.name.c_str(); });
}

iotx_error* iotx_transformer_is_fed(const iotx_transformer* transformer, size_t index, int* out) {
  return Query("iotx_transformer_is_fed", transformer, index, out,
               [](const runtime::Input& in) { return in.fed ? 1 : 0; });
}

iotx_error* iotx_transformer_has_transpose(const iotx_transformer* transformer, size_t index,
                                           int* out) {
  return Query("iotx_transformer_has_transpose", transformer, index, out,
               [](const runtime::Input& in) { return in.spec ? 1 : 0; });
}

iotx_error* iotx_transformer_changes_layout(const iotx_transformer* transformer, size_t index,
                                            int* out) {
  return Query("iotx_transformer_changes_layout", transformer, index, out,
               [](const runtime::Input& in) { return in.changes_layout ? 1 : 0; });
}

iotx_error* iotx_transformer_output_bytes(const iotx_transformer* transformer, size_t index,
                                          size_t* out) {
  return Query("iotx_transformer_output_bytes", transformer, index, out,
               [](const runtime::Input& in) { return in.bytes; });
}

iotx_error* iotx_transformer_output_rank(const iotx_transformer* transformer, size_t index,
                                         size_t* out) {
  return Query("iotx_transformer_output_rank", transformer, index, out,
               [](const runtime::Input& in) { return in.output_shape.size(); });
}

iotx_error* iotx_transformer_range_granule(const iotx_transformer* transformer, size_t index,
                                           size_t* out) {
  return Query("iotx_transformer_range_granule", transformer, index, out,
               [](const runtime::Input& in) {
                 return in.plan ? iotx::RangeGranule(*in.plan) : size_t{1};
               });
}

iotx_error* iotx_transformer_output_shape(const iotx_transformer* transformer, size_t index,
                                          int64_t* dims, size_t capacity, size_t* rank) {
  constexpr const char* kFn = "iotx_transformer_output_shape";
  return Guard(kFn, [&]() -> iotx_error* {
    const runtime::Input* input = nullptr;
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    if (rank == nullptr) return NullArgument(kFn, "rank");
    if (iotx_error* e = FindInput(kFn, transformer, index, rank, &input)) return e;
    const iotx::Dims& shape = input->output_shape;
    *rank = shape.size();
    if (capacity < shape.size()) {
      return MakeError(ErrorCode::kBufferSize, kFn,
                       "the shape has " + std::to_string(shape.size()) +
                           " dims but capacity is " + std::to_string(capacity));
    }
    if (dims == nullptr && !shape.empty()) return NullArgument(kFn, "dims");
    for (size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i];
    return nullptr;
  });
}

iotx_error* iotx_transformer_num_ignored_specs(const iotx_transformer* transformer,
                                               size_t* out) {
  constexpr const char* kFn = "iotx_transformer_num_ignored_specs";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = transformer->state->ignored_specs.size();
    return nullptr;
  });
}

iotx_error* iotx_transformer_ignored_spec(const iotx_transformer* transformer, size_t index,
                                          const char** out) {
  constexpr const char* kFn = "iotx_transformer_ignored_spec";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    if (out == nullptr) return NullArgument(kFn, "out");
    const std::vector<std::string>& ignored = transformer->state->ignored_specs;
    if (index >= ignored.size()) {
      return MakeError(ErrorCode::kIndexOutOfRange, kFn,
                       "index " + std::to_string(index) + " is out of range; " +
                           std::to_string(ignored.size()) + " entries were ignored");
    }
    *out = ignored[index].c_str();
    return nullptr;
  });
}

iotx_error* iotx_transformer_describe(const iotx_transformer* transformer, char* buffer,
                                      size_t capacity, size_t* length) {
  constexpr const char* kFn = "iotx_transformer_describe";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    if (length == nullptr) return NullArgument(kFn, "length");
    if (buffer == nullptr && capacity != 0) return NullArgument(kFn, "buffer");
    const std::string text = runtime::Describe(*transformer->state);
    *length = text.size();
    if (capacity != 0) {
      const size_t n = std::min(text.size(), capacity - 1);
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    return nullptr;
  });
}

iotx_error* iotx_transformer_apply(const iotx_transformer* transformer, size_t index,
                                   const void* src, size_t src_size, void* dst, size_t dst_size) {
  return ApplyOne("iotx_transformer_apply", transformer, index, src, src_size, dst, dst_size,
                  nullptr);
}

iotx_error* iotx_transformer_apply_ex(const iotx_transformer* transformer, size_t index,
                                      const void* src, size_t src_size, void* dst,
                                      size_t dst_size, const iotx_apply_options* options) {
  return ApplyOne("iotx_transformer_apply_ex", transformer, index, src, src_size, dst, dst_size,
                  options);
}

iotx_error* iotx_transformer_apply_all(const iotx_transformer* transformer,
                                       const void* const* srcs, const size_t* src_sizes,
                                       void* const* dsts, const size_t* dst_sizes, size_t count) {
  return ApplyAll("iotx_transformer_apply_all", transformer, srcs, src_sizes, dsts, dst_sizes,
                  count, nullptr);
}

iotx_error* iotx_transformer_apply_all_ex(const iotx_transformer* transformer,
                                          const void* const* srcs, const size_t* src_sizes,
                                          void* const* dsts, const size_t* dst_sizes,
                                          size_t count, const iotx_apply_options* options) {
  return ApplyAll("iotx_transformer_apply_all_ex", transformer, srcs, src_sizes, dsts,
                  dst_sizes, count, options);
}

iotx_code iotx_error_enum(const iotx_error* error) {
  return error != nullptr ? error->value : IOTX_OK;
}

const char* iotx_error_code(const iotx_error* error) {
  return error != nullptr ? error->code : "";
}

const char* iotx_error_message(const iotx_error* error) {
  return error != nullptr ? error->message : "";
}

void iotx_error_free(iotx_error* error) {
  if (error == nullptr || error == &kOutOfMemory) return;
  error->~iotx_error();
  ::operator delete(static_cast<void*>(error));
}

}  // extern "C"
