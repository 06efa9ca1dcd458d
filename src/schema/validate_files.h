// `iotx validate`'s job as a library call, shared by the command and the Python module's
// iotx.validate(): check io_transposes.json and hlo_netlist.json files and collect every
// problem, not only the first (SPEC sections 1, 3 and 4). Prints nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"
#include "schema/netlist.h"

namespace iotx::schema {

struct ValidateRequest {
  std::vector<std::string> files;    // io_transposes.json files, each checked on its own
  std::string netlist;               // hlo_netlist.json; empty = none
  std::vector<std::string> modular;  // partition files, also combined as the wrapper does
};

struct ValidateReport {
  std::vector<Error> errors;      // every problem, file by file
  std::vector<Warning> warnings;  // repeated names are errors here; aliasing notes
  // Problems found beyond those listed: a check lists at most kMaxListedErrors per file
  // (json_document.h) and counts the rest here, per file. Any count is a failure.
  struct NotListed {
    std::string file;
    size_t count = 0;
  };
  std::vector<NotListed> not_listed;
  // One line per file or set checked: "<file>: ok, 2 io_transposes" / "<file>: 1 error".
  std::vector<std::string> summaries;
  // The specs of every element that passed, per file (files, then modular), and the modular
  // set as combined (empty without modular files).
  std::vector<PartitionSpecs> checked;
  SpecMap combined;
};

// Runs every check; a file that cannot be read is one error (kIoOpen / kIoRead) in the report.
ValidateReport ValidateFiles(const ValidateRequest& request);

}  // namespace iotx::schema
