// Random models for runtime tests: parameters with shapes, and specs that refine each shape
// into a random reshape and permute it. Written independently of the schema code.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "iotx/runtime.h"
#include "iotx/spec.h"
#include "support/reference_transpose.h"

namespace iotx::test {

struct RandomInput {
  ParameterDesc parameter;
  std::optional<TransposeSpec> spec;
};

// A shape of rank 0..max_rank with dims 0..max_dim (zero only if allow_zero).
inline Dims RandomShape(std::mt19937& rng, int max_rank, int max_dim, bool allow_zero) {
  Dims shape;
  const int rank = static_cast<int>(rng() % static_cast<unsigned>(max_rank + 1));
  for (int i = 0; i < rank; ++i) {
    const int lo = allow_zero ? 0 : 1;
    shape.push_back(lo + static_cast<int>(rng() % static_cast<unsigned>(max_dim - lo + 1)));
  }
  return shape;
}

// Splits each dim of `shape` into factors (so the reshape refines the shape) and picks a
// random permutation of the result.
inline TransposeSpec RandomSpec(std::mt19937& rng, const Dims& shape) {
  TransposeSpec spec;
  for (int64_t d : shape) {
    int64_t rest = d;
    for (int64_t f = 2; f <= rest && spec.reshape.size() < 7; ++f) {
      if (rest % f == 0 && rng() % 3 == 0) {
        spec.reshape.push_back(f);
        rest /= f;
      }
    }
    spec.reshape.push_back(rest);
  }
  std::vector<int64_t> perm(spec.reshape.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  spec.transpose = Dims(perm);
  return spec;
}

inline std::vector<RandomInput> RandomModel(std::mt19937& rng, int num_inputs) {
  std::vector<RandomInput> model;
  const size_t sizes[] = {1, 2, 4, 8, 3, 16};
  for (int i = 0; i < num_inputs; ++i) {
    RandomInput input;
    input.parameter.name = "input" + std::to_string(i);
    input.parameter.shape = RandomShape(rng, 5, 9, rng() % 8 == 0);
    input.parameter.element_size = sizes[rng() % 6];
    if (rng() % 4 != 0) input.spec = RandomSpec(rng, input.parameter.shape);
    model.push_back(std::move(input));
  }
  return model;
}

// "p7" for ("p", 7), built in two steps: GCC 12 warns wrongly on "p" + std::to_string(7).
inline std::string Numbered(const char* prefix, size_t i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

inline size_t Bytes(const ParameterDesc& p) {
  size_t n = p.element_size;
  for (int64_t d : p.shape) n *= static_cast<size_t>(d);
  return n;
}

// What `input` must look like on the device, computed by the naive reference.
inline std::vector<std::byte> ReferenceOutput(const RandomInput& input,
                                              const std::vector<std::byte>& src) {
  if (!input.spec) return src;
  return ReferenceTranspose(src.data(), input.spec->reshape, input.spec->transpose,
                            input.parameter.element_size);
}

inline std::vector<ParameterDesc> Parameters(const std::vector<RandomInput>& model) {
  std::vector<ParameterDesc> params;
  for (const RandomInput& input : model) params.push_back(input.parameter);
  return params;
}

inline SpecMap Specs(const std::vector<RandomInput>& model) {
  SpecMap specs;
  for (const RandomInput& input : model) {
    if (input.spec) specs.TryEmplace(input.parameter.name, *input.spec);
  }
  return specs;
}

}  // namespace iotx::test
