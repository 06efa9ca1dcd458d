// Fuzzes the hlo_netlist.json parser and the combine/alias steps fed by it: any input must
// give a value or a diagnostic, the first-problem and every-problem walks must agree, and
// Combine must either add everything or change nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "schema/netlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string file = "fuzz/hlo_netlist.json";
  const auto parsed = iotx::ParseNetlist(text, file);
  const std::vector<iotx::Error> all = iotx::ValidateNetlist(text, file);
  if (!parsed) {
    IOTX_FUZZ_CHECK(!all.empty());
    IOTX_FUZZ_CHECK(all.front().code == parsed.error().code);
    IOTX_FUZZ_CHECK(all.front().key == parsed.error().key);
    for (const iotx::Error& e : all) iotx::fuzz::CheckDiagnostic(e);
    iotx::fuzz::CheckDiagnostic(parsed.error());
    return 0;
  }
  IOTX_FUZZ_CHECK(all.empty());
  iotx::fuzz::CheckParsedJsonHasNoNul(text);

  // Specs on every name the netlist mentions, in two halves: the second half combined onto
  // the first either succeeds completely or leaves the first untouched.
  iotx::SpecMap first;
  iotx::SpecMap second;
  size_t n = 0;
  const auto add = [&](const std::string& name) {
    (n++ % 2 == 0 ? first : second).TryEmplace(name, iotx::TransposeSpec{{1}, {0}});
  };
  for (const iotx::Partition& p : parsed->partitions) {
    for (const std::string& name : p.inputs) add(name);
    for (const std::string& name : p.intermediate_ios) add(name);
  }
  for (const std::string& name : parsed->intermediate_ios) add(name);

  const auto forbidden = iotx::ForbiddenSet(*parsed);
  iotx::SpecMap acc = first;
  const iotx::Status combined = iotx::Combine(acc, second, forbidden);
  if (combined) {
    IOTX_FUZZ_CHECK(acc.size() == first.size() + second.size());
  } else {
    IOTX_FUZZ_CHECK(acc.size() == first.size());
    IOTX_FUZZ_CHECK(combined.error().code == iotx::ErrorCode::kDuplicateIoTranspose ||
                    combined.error().code == iotx::ErrorCode::kForbiddenIoTranspose);
  }

  std::vector<iotx::Warning> warnings;
  const size_t before = acc.size();
  iotx::PropagateAliases(*parsed, acc, &warnings);
  IOTX_FUZZ_CHECK(acc.size() == before);
  IOTX_FUZZ_CHECK(warnings.size() <= acc.size());
  return 0;
}
