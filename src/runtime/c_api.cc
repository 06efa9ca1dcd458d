// The C API (include/iotx/iotx.h) over InputTransformer. Every entry point validates its
// arguments and converts errors, and any exception from below, into an iotx_error.
#include "iotx/iotx.h"

#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iotx/io_transposes.h"
#include "iotx/runtime.h"
#include "runtime/transformer_internal.h"

struct iotx_error {
  std::string code;
  std::string message;
};

struct iotx_transformer {
  iotx::InputTransformer transformer;
};

namespace {

using iotx::ErrorCode;

iotx_error* MakeError(const iotx::Error& error) {
  // nothrow: if even the error cannot be allocated there is nothing better to return.
  auto* e = new (std::nothrow) iotx_error;
  if (e == nullptr) return nullptr;
  e->code = std::string(iotx::CodeName(error.code));
  e->message = error.ToString();
  return e;
}

iotx_error* MakeError(ErrorCode code, std::string message) {
  return MakeError(iotx::Error(code, std::move(message)));
}

iotx_error* NullArgument(const char* function, const char* argument) {
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(function) + ": `" + argument + "` must not be NULL");
}

// Runs `body` (returning iotx_error*), turning any exception into an error.
template <class Body>
iotx_error* Guard(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kInternal, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, std::string(function) + ": " + e.what());
  }
}

iotx::Expected<std::vector<iotx::ParameterDesc>> ToParameters(const char* function,
                                                              const iotx_parameter* parameters,
                                                              size_t count) {
  std::vector<iotx::ParameterDesc> out(count);
  for (size_t i = 0; i < count; ++i) {
    const iotx_parameter& p = parameters[i];
    if (p.dims == nullptr && p.rank != 0) {
      return iotx::Fail(ErrorCode::kInvalidArgument,
                        std::string(function) + ": parameters[" + std::to_string(i) +
                            "].dims is NULL but its rank is " + std::to_string(p.rank));
    }
    if (p.name != nullptr) out[i].name = p.name;
    if (p.rank != 0) out[i].shape = iotx::Dims(std::span<const int64_t>(p.dims, p.rank));
    out[i].element_size = p.element_size;
  }
  return out;
}

iotx_error* Publish(iotx::Expected<iotx::InputTransformer> made, iotx_transformer** out) {
  if (!made) return MakeError(made.error());
  *out = new iotx_transformer{std::move(*made)};
  return nullptr;
}

// Shared checks of the per-input queries.
iotx_error* CheckIndex(const char* function, const iotx_transformer* t, size_t index) {
  if (t == nullptr) return NullArgument(function, "transformer");
  if (index >= t->transformer.num_inputs()) {
    return MakeError(ErrorCode::kIndexOutOfRange,
                     std::string(function) + ": input index " + std::to_string(index) +
                         " is out of range; the model has " +
                         std::to_string(t->transformer.num_inputs()) + " inputs");
  }
  return nullptr;
}

}  // namespace

extern "C" {

iotx_error* iotx_transformer_from_attributes(const char* valid_inputs,
                                             const char* required_transpose,
                                             const char* neff_input_names,
                                             const iotx_parameter* parameters,
                                             size_t num_parameters, iotx_transformer** out) {
  constexpr const char* kFn = "iotx_transformer_from_attributes";
  return Guard(kFn, [&]() -> iotx_error* {
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = nullptr;
    if (valid_inputs == nullptr) return NullArgument(kFn, "valid_inputs");
    if (required_transpose == nullptr) return NullArgument(kFn, "required_transpose");
    if (parameters == nullptr && num_parameters != 0) return NullArgument(kFn, "parameters");
    auto params = ToParameters(kFn, parameters, num_parameters);
    if (!params) return MakeError(params.error());
    iotx::NeffAttributes attributes{valid_inputs, required_transpose,
                                    neff_input_names != nullptr ? neff_input_names : ""};
    return Publish(iotx::InputTransformer::FromAttributes(attributes, *params), out);
  });
}

iotx_error* iotx_transformer_from_json(const char* json, size_t json_size,
                                       const iotx_parameter* parameters, size_t num_parameters,
                                       iotx_transformer** out) {
  constexpr const char* kFn = "iotx_transformer_from_json";
  return Guard(kFn, [&]() -> iotx_error* {
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = nullptr;
    if (json == nullptr) return NullArgument(kFn, "json");
    if (parameters == nullptr && num_parameters != 0) return NullArgument(kFn, "parameters");
    auto params = ToParameters(kFn, parameters, num_parameters);
    if (!params) return MakeError(params.error());
    auto parsed = iotx::ParseIoTransposes(std::string_view(json, json_size), "io_transposes.json");
    if (!parsed) return MakeError(parsed.error());
    return Publish(iotx::InputTransformer::FromSpecs(parsed->specs, *params), out);
  });
}

iotx_error* iotx_transformer_num_inputs(const iotx_transformer* transformer, size_t* out) {
  constexpr const char* kFn = "iotx_transformer_num_inputs";
  if (transformer == nullptr) return NullArgument(kFn, "transformer");
  if (out == nullptr) return NullArgument(kFn, "out");
  *out = transformer->transformer.num_inputs();
  return nullptr;
}

iotx_error* iotx_transformer_is_fed(const iotx_transformer* transformer, size_t index, int* out) {
  constexpr const char* kFn = "iotx_transformer_is_fed";
  if (iotx_error* e = CheckIndex(kFn, transformer, index)) return e;
  if (out == nullptr) return NullArgument(kFn, "out");
  *out = transformer->transformer.is_fed(index) ? 1 : 0;
  return nullptr;
}

iotx_error* iotx_transformer_output_bytes(const iotx_transformer* transformer, size_t index,
                                          size_t* out) {
  constexpr const char* kFn = "iotx_transformer_output_bytes";
  if (iotx_error* e = CheckIndex(kFn, transformer, index)) return e;
  if (out == nullptr) return NullArgument(kFn, "out");
  *out = transformer->transformer.output_bytes(index);
  return nullptr;
}

iotx_error* iotx_transformer_output_shape(const iotx_transformer* transformer, size_t index,
                                          int64_t* dims, size_t capacity, size_t* rank) {
  constexpr const char* kFn = "iotx_transformer_output_shape";
  if (iotx_error* e = CheckIndex(kFn, transformer, index)) return e;
  if (rank == nullptr) return NullArgument(kFn, "rank");
  const std::span<const int64_t> shape = transformer->transformer.output_shape(index);
  *rank = shape.size();
  if (capacity < shape.size()) {
    return MakeError(ErrorCode::kBufferSize, std::string(kFn) + ": the shape has " +
                                                 std::to_string(shape.size()) +
                                                 " dims but capacity is " +
                                                 std::to_string(capacity));
  }
  if (dims == nullptr && !shape.empty()) return NullArgument(kFn, "dims");
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i];
  return nullptr;
}

iotx_error* iotx_transformer_apply(const iotx_transformer* transformer, size_t index,
                                   const void* src, size_t src_size, void* dst, size_t dst_size) {
  constexpr const char* kFn = "iotx_transformer_apply";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    iotx::Status s = transformer->transformer.Apply(index, {src, src_size}, {dst, dst_size});
    return s ? nullptr : MakeError(s.error());
  });
}

iotx_error* iotx_transformer_apply_all(const iotx_transformer* transformer,
                                       const void* const* srcs, const size_t* src_sizes,
                                       void* const* dsts, const size_t* dst_sizes, size_t count) {
  constexpr const char* kFn = "iotx_transformer_apply_all";
  return Guard(kFn, [&]() -> iotx_error* {
    if (transformer == nullptr) return NullArgument(kFn, "transformer");
    const size_t n = transformer->transformer.num_inputs();
    if (count != n) {
      return MakeError(ErrorCode::kInvalidArgument, std::string(kFn) + ": count is " +
                                                        std::to_string(count) +
                                                        " but the model has " +
                                                        std::to_string(n) + " inputs");
    }
    if (n != 0) {
      if (srcs == nullptr) return NullArgument(kFn, "srcs");
      if (src_sizes == nullptr) return NullArgument(kFn, "src_sizes");
      if (dsts == nullptr) return NullArgument(kFn, "dsts");
      if (dst_sizes == nullptr) return NullArgument(kFn, "dst_sizes");
    }
    iotx::Status s =
        iotx::ApplyAllArrays(transformer->transformer, srcs, src_sizes, dsts, dst_sizes);
    return s ? nullptr : MakeError(s.error());
  });
}

void iotx_transformer_free(iotx_transformer* transformer) { delete transformer; }

const char* iotx_error_code(const iotx_error* error) {
  return error != nullptr ? error->code.c_str() : "";
}

const char* iotx_error_message(const iotx_error* error) {
  return error != nullptr ? error->message.c_str() : "";
}

void iotx_error_free(iotx_error* error) { delete error; }

}  // extern "C"
