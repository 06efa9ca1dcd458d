// Python pickles of {name: numpy array} — the compiler's inp-000.p — read safely and written.
//
// The reader is a small pickle VM that knows only the opcodes of protocols 2-5 these pickles
// use and only the globals of SPEC section 6's allow-list. It never imports or runs anything:
// any other global (os.system, builtins.eval, ...) is refused with kPickleForbidden the moment
// its opcode is read. Memory is bounded: every length is checked against the bytes that
// remain, and the stack, the memo, marks and nesting depth have fixed caps.
//
// Array data stays in the input: every tensor is a view into the pickle, with protocol 2's
// latin-1 strings, Fortran order and big-endian data described in its StoredLayout and
// converted only when it is used, one tensor at a time (io/tensor.h). See
// docs/tensor-files.md.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "io/tensor.h"
#include "iotx/status.h"

namespace iotx::io {

// Reads the pickle held in `file` (kept alive by `owner`, which the tensors share). The
// tensors, named by their keys, come in the dict's order. Errors, all naming `file_name`:
//   kPickleForbidden        a global outside the allow-list (or an opcode that would reach one)
//   kPickleUnsupportedValue a dict value that is not a numpy array (key named), a top-level
//                           object that is not a dict, object/structured/datetime dtypes
//   kPickleFormat           anything malformed: truncation, bad lengths, stack misuse, opcodes
//                           these pickles never contain; the message gives the byte offset
Expected<std::vector<Tensor>> ParsePickle(std::span<const std::byte> file,
                                          std::shared_ptr<const void> owner,
                                          std::string_view file_name);

// Maps `path` and parses it (ParsePickle); kIoOpen/kIoRead when it cannot be mapped.
Expected<std::vector<Tensor>> ReadPickle(const std::filesystem::path& path);

// The layout of a protocol 4 pickle of a dict of `tensors` (in the given order, each under
// its name and descr) that Python's pickle.load, with numpy 1.x or 2.x, turns back into the
// same arrays: same dtype, shape and bytes. Each array's bytes follow their BINBYTES opcode
// outside any frame, so they can be written straight from wherever they are. Errors:
// kInvalidArgument for a descr numpy cannot rebuild from a pickle (ml_dtypes names,
// datetimes, none at all) or a repeated name.
Expected<FileLayout> PickleLayout(std::span<const Tensor> tensors);

// Writes `tensors` to `path` as PickleLayout lays them out, atomically; the data is streamed
// from the tensors (converted one at a time where not C order), not gathered. Errors: those
// of PickleLayout, kBufferSize for data of the wrong size, and those of files::AtomicFile
// (kIoWrite, kPathUnsafe).
Status WritePickle(const std::filesystem::path& path, std::span<const Tensor> tensors,
                   const files::AtomicFileOptions& options = {});

}  // namespace iotx::io
