// Shared by the producer's end-to-end tests: the Python reference (producer_check.py) and
// looking at a work dir.
#pragma once

#include <string>
#include <vector>

#include "support/process.h"

namespace iotx::test {

// Runs tests/producer/producer_check.py with `args` (see its docstring).
ProcessResult RunCheck(const std::vector<std::string>& args);

// A digest of every file's bytes and every link's target under `dir`.
std::string Snapshot(const std::string& dir);

// The hidden entries (temporaries) anywhere under `dir`.
std::vector<std::string> HiddenEntries(const std::string& dir);

}  // namespace iotx::test
