// Fuzzes the io_transposes.json parser and what follows it: any input must give a value or a
// diagnostic (never a crash), the first-problem and every-problem walks must agree (but for
// repeated names, an error only to the latter), a parsed map must survive serialize -> parse
// unchanged, and Simplify must accept every parsed spec.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "iotx/io_transposes.h"

namespace {

void CheckSimplify(const iotx::TransposeSpec& spec) {
  // Against the reshape itself (every boundary an original one) and against the flat shape
  // (no original boundary): both products match, so both must succeed.
  const int64_t count = *iotx::CheckedProduct(spec.reshape);
  const int64_t flat[] = {count};
  for (const std::span<const int64_t> orig :
       {std::span<const int64_t>(spec.reshape), std::span<const int64_t>(flat)}) {
    const auto once = iotx::Simplify(spec, orig);
    IOTX_FUZZ_CHECK(once.has_value());
    IOTX_FUZZ_CHECK(once->reshape.size() <= spec.reshape.size());
    IOTX_FUZZ_CHECK(iotx::ValidateSpec(*once).has_value());
    const auto twice = iotx::Simplify(*once, orig);
    IOTX_FUZZ_CHECK(twice.has_value() && *twice == *once);
  }
  // Simplifying against its own reshape merges nothing across a boundary of the reshape,
  // and only boundaries of the reshape exist: the spec comes back as it was.
  IOTX_FUZZ_CHECK(*iotx::Simplify(spec, spec.reshape) == spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string file = "fuzz/io_transposes.json";
  const auto parsed = iotx::ParseIoTransposes(text, file);
  const std::vector<iotx::Error> all = iotx::ValidateIoTransposes(text, file);
  if (!parsed) {
    // Validate also lists repeated names, which Parse only warns about (SPEC section 1), so
    // compare with the first of the other problems.
    const auto first = std::find_if(all.begin(), all.end(), [](const iotx::Error& e) {
      return e.code != iotx::ErrorCode::kDuplicateInputName;
    });
    IOTX_FUZZ_CHECK(first != all.end());
    IOTX_FUZZ_CHECK(first->code == parsed.error().code);
    IOTX_FUZZ_CHECK(first->message == parsed.error().message);
    IOTX_FUZZ_CHECK(parsed.error().file == file);
    for (const iotx::Error& e : all) iotx::fuzz::CheckDiagnostic(e);
    iotx::fuzz::CheckDiagnostic(parsed.error());
    return 0;
  }
  iotx::fuzz::CheckParsedJsonHasNoNul(text);
  for (const iotx::Warning& w : parsed->warnings) iotx::fuzz::CheckDiagnostic(w);
  // A file that parses has no problems but repeated names, which validate calls errors.
  IOTX_FUZZ_CHECK(all.size() == parsed->warnings.size());
  for (const iotx::Error& e : all) IOTX_FUZZ_CHECK(e.code == iotx::ErrorCode::kDuplicateInputName);

  const std::string serialized = iotx::SerializeIoTransposes(parsed->specs);
  const auto reparsed = iotx::ParseIoTransposes(serialized, file);
  IOTX_FUZZ_CHECK(reparsed.has_value());
  IOTX_FUZZ_CHECK(reparsed->warnings.empty());
  IOTX_FUZZ_CHECK(reparsed->specs.size() == parsed->specs.size());
  for (size_t i = 0; i < parsed->specs.size(); ++i) {
    const iotx::NamedSpec& a = parsed->specs.entries()[i];
    const iotx::NamedSpec& b = reparsed->specs.entries()[i];
    IOTX_FUZZ_CHECK(a.input_name == b.input_name && a.spec == b.spec);
  }
  IOTX_FUZZ_CHECK(iotx::SerializeIoTransposes(reparsed->specs) == serialized);

  for (const iotx::NamedSpec& entry : parsed->specs) {
    // What validate passes, every command can use (issue 18, item 6): the name fits in
    // value_<name>.npy, the reshape in a tensor.
    IOTX_FUZZ_CHECK(iotx::CheckInputName(entry.input_name).has_value());
    IOTX_FUZZ_CHECK(entry.spec.reshape.size() <= iotx::kMaxRank);
    IOTX_FUZZ_CHECK(("value_" + entry.input_name + ".npy").size() + 64 <= 255);
    CheckSimplify(entry.spec);
  }
  return 0;
}
