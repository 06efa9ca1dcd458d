// The producer's pipeline: tensors read, put into device layout and written into their output
// files, with reading, permuting and writing overlapping across tensors and files.
//
//   reader thread    reads the next tensor to permute from its file into a reusable buffer
//                    (files::MappedFile::ReadIntoRoom: with O_DIRECT from the disk when the
//                    page cache does not hold it, else pread), or converts it to C order (a
//                    big-endian, Fortran-ordered or protocol 2 array) into one, one tensor
//                    ahead; a stacked tensor (its spec keeps the leading dims in place) in
//                    pieces of whole slices of about a chunk, one piece ahead; a tensor larger
//                    than PipelineOptions::read_buffer_max is paged in through its mapping
//                    (MADV_POPULATE_READ) instead
//   calling thread   DeviceTransform::ApplyRange into reusable buffers, a chunk of about
//                    16 MiB at a time (oneTBB, every core); a piece of a stacked tensor with
//                    DeviceTransform::ApplySlices, as one chunk
//   writer thread    writes each tensor to its places in the output files (a tensor
//                    without a spec straight from its source) and releases the pages
//   commit threads   finish each file whose pieces are all written: checks that its
//                    sources did not change while read, fsync, rename; each directory is
//                    synced once after the last commit (its renames made durable), not once
//                    per file
//
// A durable file of 8 MiB or more whose bytes arrive front to back (every file apply and
// materialize write) is written with O_DIRECT where its file system can
// (files::DirectAppender; without durability only when such files hold more than the kernel
// lets wait unflushed in the page cache, PipelineOptions::unsynced_direct_above): the kernel
// permutes each tensor into its output buffer at the phase of its file offset (a large tensor
// without a spec is read there from its file), and the whole blocks go from that buffer to
// the disk, without a copy into the page cache that the fsync would then have to wait for.
// Other files are written through the page cache: with pwrite(), and a large tensor written
// as it is copied from its source file by the kernel (AtomicFile::CopyAt, copy_file_range, as
// cp copies).
//
// There, the writeback is left to the kernel and the commit's fsync, as `cp` + `sync` leaves it:
// starting each piece's writeback as soon as it was written (sync_file_range) made the durable
// run twice as slow as cp + sync on a 1 GiB checkpoint (2.1-2.3 s against 0.9-1.0 s without,
// quiet machine): the copies into the page cache slowed down while the disk read the pages
// before them (docs/performance.md, "iotx apply"). With many files, one file's fsync still
// overlaps the writes of the next.
//
// Memory stays bounded whatever the checkpoint's size: two output buffers of one chunk each,
// two source buffers as large as the largest tensor read or converted into one (a stacked
// tensor's piece, about a chunk, counts for it; at most PipelineOptions::read_buffer_max,
// unless a big-endian, Fortran-ordered or protocol 2 source needs more), plus the mapped
// source pages of the tensors in flight (released after each). A cached piece read through
// the mapping instead of a buffer (PipelineOptions::cached_reads) holds one of the two buffers'
// places all the same, so no more pieces are in flight than buffers.
// Every file goes through files::AtomicFile: a failure or a kill never leaves a partial file
// under a final name; files finished before a failure stay (each complete).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "iotx/status.h"
#include "producer/device_transform.h"
#include "producer/tensor_set.h"

namespace iotx::producer {

struct PipelineFile {
  std::filesystem::path path;
  io::FileLayout layout;  // the literals are written here; tensor data comes from the jobs
};

struct PipelineJob {
  size_t tensor = 0;     // in TensorSet::tensors
  size_t transform = 0;  // its input of the DeviceTransform
  // Where its device bytes go: (file in the PipelineFile list, offset in that file).
  std::vector<std::pair<size_t, uint64_t>> destinations;
};

// PipelineOptions::read_buffer_max by default.
inline constexpr uint64_t kDefaultReadBufferMax = uint64_t{512} << 20;

// How the reader hands the kernel a piece of a source (or a whole one) that would go through a
// source buffer and is mostly in the page cache. Uncached pieces are always read into buffers
// (with O_DIRECT where the file system can: a mapping would fault them in page by page).
enum class CachedReads {
  kMeasured,  // kMapped where files::MappingCheaperThanCopy() says so, else kCopied
  kMapped,    // the kernel reads the file's mapping; the piece's pages released after it
  kCopied,    // pread into a source buffer
};

struct PipelineOptions {
  files::Durability durability = files::Durability::kDurable;
  // Durable files that arrive in order go to the disk with direct I/O where it is supported;
  // false writes them through the page cache too.
  bool direct_writes = true;
  // Without durability, the same files are written directly too when together they hold more
  // than this many bytes: past the kernel's dirty-page limit, writes through the page cache
  // wait for the disk anyway, after a copy into memory and with everything else cached pushed
  // out. nullopt: files::DirtyPageLimit() (never, where it is unknown).
  std::optional<uint64_t> unsynced_direct_above = std::nullopt;
  // A tensor that the kernel permutes is read from its file into one of two source buffers
  // when it holds at most this many bytes (a copy, which costs less than reading it through
  // its mapping, see files::MappedFile::ReadInto), else read through its mapping; a stacked
  // tensor is read a piece at a time, and its piece is what counts here. So the buffers hold
  // at most twice this; 0 reads every source through its mapping.
  uint64_t read_buffer_max = kDefaultReadBufferMax;
  // How a source read into buffers reaches the kernel when the page cache holds most of it.
  CachedReads cached_reads = CachedReads::kMeasured;
  // Every file must resolve inside this directory (files::AtomicFileOptions::root).
  std::filesystem::path root;
  // Called with (bytes done, bytes total) from one thread at a time: once before the first
  // tensor and after each one is written.
  std::function<void(uint64_t, uint64_t)> progress;
};

// Writes every file of `files`, each made of its layout's literals and the device bytes of the
// jobs that name it, in the order of `jobs` (best: each file's jobs in offset order, so files
// are written front to back). A file that no job names is written with its literals only.
// The indices of the files committed go to `committed`, in order; on failure, the first error
// (naming file and tensor) is returned once the files already complete were committed.
Status RunPipeline(const TensorSet& set, const DeviceTransform& transform,
                   std::span<const PipelineFile> files, std::span<const PipelineJob> jobs,
                   const PipelineOptions& options, std::vector<size_t>* committed);

}  // namespace iotx::producer
