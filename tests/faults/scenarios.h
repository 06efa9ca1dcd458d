// The runs the fault tests interrupt or starve: each command of the tool that writes files,
// on inputs large enough (~15 MB) that a run takes some tens of milliseconds.
#pragma once

#include <string>
#include <vector>

namespace iotx::test {

struct Scenario {
  std::string name;
  // Creates the inputs under `root` (an empty directory); deterministic, so two roots set up
  // alike give identical outputs.
  void (*setup)(const std::string& root);
  // The tool's arguments, relative to `root` (the working directory of the run).
  std::vector<std::string> args;
};

// wrap (a module with a 16 MiB NEFF), materialize --verify (a work dir with ~15 MB of tensors
// in inp-000.p, three partition dirs), apply to .npy files, apply to one safetensors file,
// apply to a sharded checkpoint (one tensor per shard, an index), apply to a stacked tensor
// read in pieces (25.5 MB).
const std::vector<Scenario>& WritingScenarios();
const Scenario& FindScenario(const std::string& name);

// kLarge: the scenarios' ~15 MB, so that a run lasts long enough to be interrupted or watched;
// kSmall: the same names, dtypes and kinds of spec in ~170 KB, for tests about paths.
enum class WorkDirInputs { kLarge, kSmall };

// A compiler work dir at `work`: io_transposes.json (unsimplified specs for w0, w1, b; none
// for x), inp-000.p with those four tensors, partition dirs sg00/, sg01/, nc0/sg00/.
void SetUpWorkDir(const std::string& work, WorkDirInputs inputs = WorkDirInputs::kLarge);

}  // namespace iotx::test
