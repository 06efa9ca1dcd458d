// Per-call cost of InputTransformer::Apply, next to a bare memcpy of the same bytes in the same
// run: small inputs show the runtime's overhead, large ones the kernel's bandwidth.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "iotx/plan.h"
#include "iotx/runtime.h"

namespace {

struct Case {
  const char* name;
  iotx::Dims shape;
  size_t element_size;
  iotx::TransposeSpec spec;
};

const Case kCases[] = {
    {"768x768_f32_T", {768, 768}, 4, {{768, 768}, {1, 0}}},
    {"64x64_bf16_T", {64, 64}, 2, {{64, 64}, {1, 0}}},
    {"6144x256_bf16_src_example", {6144, 256}, 2, {{3, 2048, 2, 128}, {0, 3, 2, 1}}},
    {"8192x8192_f32_T", {8192, 8192}, 4, {{8192, 8192}, {1, 0}}},
};

void BM_Apply(benchmark::State& state, const Case& c) {
  iotx::SpecMap specs;
  specs.TryEmplace("x", c.spec);
  std::vector<iotx::ParameterDesc> params = {{"x", c.shape, c.element_size}};
  auto t = iotx::InputTransformer::FromSpecs(specs, params);
  if (!t) {
    state.SkipWithError(t.error().ToString().c_str());
    return;
  }
  const size_t bytes = t->input_bytes(0);
  std::vector<char> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    auto s = t->Apply(0, {src.data(), bytes}, {dst.data(), bytes});
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The kernel alone on the plan Apply uses (the same spec and options): Apply's time above
// this is the runtime's per-call overhead (target: under 1 us).
void BM_Execute(benchmark::State& state, const Case& c) {
  auto plan = iotx::MakePlan(c.spec.reshape, c.spec.transpose, c.element_size);
  if (!plan) {
    state.SkipWithError(plan.error().ToString().c_str());
    return;
  }
  const size_t bytes = iotx::PlanBytes(**plan);
  std::vector<char> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    auto s = iotx::Execute(**plan, src.data(), dst.data());
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_Memcpy(benchmark::State& state, const Case& c) {
  size_t bytes = c.element_size;
  for (int64_t d : c.shape) bytes *= static_cast<size_t>(d);
  std::vector<char> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

const bool kRegistered = [] {
  for (const Case& c : kCases) {
    benchmark::RegisterBenchmark((std::string("Runtime/memcpy/") + c.name).c_str(), BM_Memcpy, c)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("Runtime/apply/") + c.name).c_str(), BM_Apply, c)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("Runtime/execute/") + c.name).c_str(), BM_Execute, c)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
