// libFuzzer target: arbitrary bytes as a serialized HloModuleProto, then everything the
// wrapper and `iotx inspect` do with a module. Invariants checked: no crash, and a wrapped
// module serializes, parses back and ends in the AwsNeuronNeff root.
//
// Input: one selector byte (bit 0: give the first parameter a wrong-size spec), then the
// module. The seeds in tests/fuzz_corpus/hlo_module/ are the wrap fixtures
// (tests/testdata/wrap/*.textproto) encoded by protoc behind a selector byte:
//   { printf '\x00'; protoc --encode=xla.HloModuleProto -Isrc/hlo hlo.proto < IN; } > OUT
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iotx/attributes.h"
#include "iotx/spec.h"
#include "hlo/hlo_module.h"
#include "hlo/module_summary.h"
#include "hlo/wrap.h"

namespace {

// Specs aimed at the module's own parameters: a full reversal of each array parameter (valid),
// and with `wrong_size` one more element than the first has (NCC_IHNW003).
iotx::SpecMap SpecsFor(const xla::HloModuleProto& module, bool wrong_size) {
  iotx::SpecMap specs;
  auto entry = iotx::hlo::FindEntryComputation(module, "fuzz");
  if (!entry) return specs;
  const auto& computation = module.computations(*entry);
  for (const auto& instruction : computation.instructions()) {
    if (instruction.opcode() != "parameter" || instruction.shape().dimensions_size() > 8) continue;
    iotx::TransposeSpec spec;
    for (int64_t dim : instruction.shape().dimensions()) spec.reshape.push_back(dim);
    for (size_t d = spec.reshape.size(); d-- > 0;)
      spec.transpose.push_back(static_cast<int64_t>(d));
    if (wrong_size && specs.empty()) spec.reshape.push_back(2);
    specs.TryEmplace(iotx::hlo::FrontendName(module, computation, instruction), std::move(spec));
  }
  specs.TryEmplace("not_a_parameter", iotx::TransposeSpec{{1}, {0}});
  return specs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool wrong_size = data[0] & 1;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto module = iotx::hlo::ParseModule(bytes, "fuzz");
  if (!module) return 0;
  (void)iotx::hlo::SummarizeModule(*module, "fuzz");
  iotx::SpecMap specs = SpecsFor(*module, wrong_size);
  auto wrapped = iotx::hlo::WrapModule(*module, "NEFF", specs, "fuzz");
  if (!wrapped || !wrapped->produced) return 0;

  auto out = iotx::hlo::SerializeModule(wrapped->module);
  if (!out) return 0;
  auto back = iotx::hlo::ParseModule(*out, "fuzz-out");
  if (!back) std::abort();
  auto entry = iotx::hlo::FindEntryComputation(*back, "fuzz-out");
  if (!entry) std::abort();
  const auto& computation = back->computations(*entry);
  int root = iotx::hlo::FindInstruction(computation, computation.root_id());
  if (root < 0 ||
      computation.instructions(root).custom_call_target() != iotx::kAwsNeuronNeffTarget) {
    std::abort();
  }
  auto summary = iotx::hlo::SummarizeModule(*back, "fuzz-out");
  if (!summary || summary->neff_calls.empty() || !summary->neff_calls[0].attribute_errors.empty()) {
    std::abort();
  }
  return 0;
}
