// Reading and writing a serialized xla.HloModuleProto and finding what the wrapper needs in
// it: the entry computation, its parameters in parameter-number order, and their frontend
// names (SPEC section 5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/status.h"
#include "hlo/hlo.pb.h"

namespace iotx::hlo {

// Parses the bytes of a serialized HloModuleProto. Fields outside our schema subset are kept
// as unknown fields. Bytes that are not a protobuf message, or a message with no
// computations, are kHloFormat naming `file`.
Expected<xla::HloModuleProto> ParseModule(std::string_view bytes, const std::string& file);

// Reads `path` (kIoOpen / kIoRead naming it) and parses it with ParseModule.
Expected<xla::HloModuleProto> ReadModule(const std::string& path);

// Deterministic serialization (map entries sorted by key): the same module always gives the
// same bytes. kHloFormat past protobuf's 2 GiB message limit.
Expected<std::string> SerializeModule(const xla::HloModuleProto& module);

// SerializeModule's bytes written to `path` atomically (files/atomic_file.h): the path holds
// the old file or the complete new one, never a part. A FIFO, character device or /dev/stdout
// at `path` gets the bytes written into it instead (files::WriteOutputFile: what naming one
// means); a socket or a block device is refused (kNotRegularFile). Errors name `path`.
Status WriteModule(const xla::HloModuleProto& module, const std::string& path);

// A kHloStructure error naming `file`: the module parses but is not what the wrapper needs.
Error StructureError(std::string message, const std::string& file);

// The index in module.computations() of the entry computation: the computation whose id is
// entry_computation_id, else the one named entry_computation_name. Because proto3 cannot tell
// an id of 0 from an unset one, an id of 0 defers to a non-empty name. kHloStructure if
// neither finds one.
Expected<int> FindEntryComputation(const xla::HloModuleProto& module, const std::string& file);

// The index of the instruction with `id` in `computation`, or -1.
int FindInstruction(const xla::HloComputationProto& computation, int64_t id);

// The name specs use for a parameter instruction: its `neff_input_names` frontend attribute,
// else its instruction name, else the `parameter_names` entry of the computation's program
// shape (or the module's host program shape); "" when it has none of them.
std::string FrontendName(const xla::HloModuleProto& module,
                         const xla::HloComputationProto& computation,
                         const xla::HloInstructionProto& parameter);

// One parameter instruction of the entry computation.
struct EntryParameter {
  int instruction_index = -1;  // in computation.instructions()
  int64_t number = 0;          // parameter_number
  int64_t id = 0;
  std::string frontend_name;             // FrontendName()
  std::optional<int64_t> element_count;  // nullopt for a tuple, token or opaque shape
  bool zero_sized() const { return element_count == 0; }
};

// The parameters of `computation` in parameter-number order. Numbers must be 0..N-1, each
// once; every parameter needs a shape with an element type. Frontend names (FrontendName)
// must be non-empty, unique and hold no ','. Errors are kHloStructure naming `file`.
Expected<std::vector<EntryParameter>> EntryParameters(const xla::HloModuleProto& module,
                                                      const xla::HloComputationProto& computation,
                                                      const std::string& file);

}  // namespace iotx::hlo
