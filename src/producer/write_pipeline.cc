#include "producer/write_pipeline.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <thread>

#include "files/background_flush.h"
#include "files/direct_appender.h"
#include "files/dirty_limit.h"
#include "files/mapping_cost.h"
#include "files/page_hints.h"
#include "producer/bounded_queue.h"
#include "producer/buffer_pool.h"

namespace iotx::producer {
namespace {

// Two output buffers: the kernel fills one while the writer drains the other. A third only
// added memory in the benchmark (docs/performance.md): the writer is the slower stage, so the
// kernel waits for a buffer either way.
constexpr size_t kOutputBuffers = 2;
// Source buffers (a tensor read from its file, or converted to C order from a big-endian,
// Fortran-ordered or protocol 2 source): one being filled by the reader while the kernel reads
// the other.
constexpr size_t kSourceBuffers = 2;
// Tensors paged in ahead of the kernel: one, so the reader's I/O overlaps the kernel's work
// without holding more than one extra tensor's pages.
constexpr size_t kReadAhead = 1;
// Tensors waiting for the writer beyond the one it writes (each holds an output buffer).
constexpr size_t kWriteQueue = kOutputBuffers;
// Finished files whose commit (fsync, rename) may wait at a time; each holds a descriptor.
constexpr size_t kQueuedCommits = 4;
// Every queued commit may run at once: a file system commits its journal for all the fsyncs
// waiting at the time, so concurrent fsyncs of small files share the disk's flushes. 1500
// .npy outputs of 32 KiB, three alternating rounds: 1.41-1.58 s with one commit thread,
// 0.96-1.12 s with two, 0.85-1.27 s with four, 1.24-1.28 s with eight.
constexpr size_t kCommitThreads = kQueuedCommits;
// Durable files of at least this size are written directly (files::DirectAppender). A smaller
// one is one staging write anyway, and the appender's fixed costs (its staging buffer, the
// wait for the disk on the writer's thread) outweigh the copy it saves: 1500 .npy files of 32
// KiB took 2.5-3.5 s written directly against 1.8-2.2 s through the page cache.
constexpr uint64_t kDirectMinFileBytes = uint64_t{8} << 20;
// A tensor going through an output buffer is permuted into it and written in chunks of about
// this many bytes (a multiple of DirectAppender::kPhase, at least the kernel's range granule,
// InputTransformer::range_granule): the buffers stay this small whatever the tensors' sizes,
// and the writer starts on a tensor before all of it is permuted. Whole-tensor buffers were
// two of 64 MiB for the 1 GiB benchmark checkpoint, and faulting them in (the kernel zeroing
// fresh pages on first touch) took 13-18 % of a durable run's CPU samples in this VM. A direct
// write waits for its bytes, so a chunk is what the disk has in flight: from buffers in 4 KiB
// pages 8 MiB chunks spent 0.54-0.63 s in pwrite for 1 GiB against 0.42-0.43 s with 32 MiB;
// from huge pages (BufferPool) 8, 16 and 32 MiB wrote at the same speed, and 16 MiB kept the
// permute's CPU time of 32 (the thinner ranges of 8 MiB cost 0.03-0.05 s more per GiB) with
// 32 MiB less memory to fault in (docs/performance.md).
constexpr size_t kChunkBytes = size_t{16} << 20;
// A tensor written as it is into a file written through the page cache is copied from file
// to file by the kernel (copy_file_range) from this size on; below it, opening the source
// again costs more than writing from its mapping.
constexpr uint64_t kFileCopyMinBytes = uint64_t{1} << 20;

// A job's source in C order, ready for the kernel: the whole tensor, or a piece of whole
// slices (DeviceTransform::slice_bytes) starting `at` bytes into it.
struct Source {
  size_t job = 0;
  std::span<const std::byte> bytes;
  BufferPool::Buffer* buffer = nullptr;  // the source buffer holding `bytes`; null: mapping
  // A source buffer held unused by a piece read through the mapping (ReadPieces): its place
  // among the kSourceBuffers, which bounds the pieces in flight.
  BufferPool::Buffer* slot = nullptr;
  uint64_t at = 0;
  bool last = true;
  bool piece = false;
};

// A job's device bytes, ready to be written.
struct Piece {
  size_t job = 0;
  std::span<const std::byte> bytes;
  BufferPool::Buffer* buffer = nullptr;  // the buffer holding `bytes`; null: the source mapping
  BufferPool* pool = nullptr;            // where `buffer` goes back
  // An output buffer's bytes start `head` bytes into it, at the phase of the first
  // destination's file offset (DirectAppender::AppendInPlace), when that file may be written
  // directly; false for other pieces.
  bool placed = false;
  size_t head = 0;
  // Where `bytes` start in the tensor's device bytes, and whether they are its last: a large
  // tensor is permuted and written in chunks (kChunkBytes).
  uint64_t at = 0;
  bool last = true;
};

class Pipeline {
 public:
  Pipeline(const TensorSet& set, const DeviceTransform& transform,
           std::span<const PipelineFile> files, std::span<const PipelineJob> jobs,
           const PipelineOptions& options, std::vector<size_t>* committed)
      : set_(set),
        transform_(transform),
        files_(files),
        jobs_(jobs),
        options_(options),
        committed_(committed),
        open_(files.size()),
        streams_(files.size()),
        pending_(files.size(), 0),
        sources_of_file_(files.size()) {
    for (const PipelineJob& job : jobs) {
      total_ += set.tensors[job.tensor].byte_size();
      for (const auto& [file, offset] : job.destinations) {
        ++pending_[file];
        sources_of_file_[file].insert(set.source[job.tensor]);
      }
    }
    const std::vector<bool> in_order = ArriveInOrder();
    uint64_t direct_bytes = 0;  // in the files that could be written directly
    for (size_t file = 0; file < files.size(); ++file) {
      streams_[file].wants_direct =
          options.direct_writes && files[file].layout.size >= kDirectMinFileBytes && in_order[file];
      if (streams_[file].wants_direct) direct_bytes += files[file].layout.size;
    }
    if (options.durability != files::Durability::kDurable &&
        direct_bytes <=
            options.unsynced_direct_above.value_or(files::DirtyPageLimit().value_or(UINT64_MAX))) {
      for (Stream& stream : streams_) stream.wants_direct = false;
    }
  }

  Status Run() {
    Report(0);
    // Files that no tensor goes into hold their literals only.
    for (size_t file = 0; file < files_.size(); ++file) {
      if (pending_[file] != 0) continue;
      Status opened = Open(file);
      if (opened) opened = FinishWrites(file);
      if (!opened) {
        Abort(std::move(opened));
        break;
      }
      Commit(file);
    }
    std::thread reader([this] { ReadLoop(); });
    std::thread writer([this] { WriteLoop(); });
    PermuteLoop();
    reader.join();
    writer.join();
    if (Status drained = commits_.Drain(); !drained) Abort(std::move(drained));
    // The renames of the files committed, failure or not, made durable: each directory once.
    for (const std::filesystem::path& dir : renamed_into_) {
      if (Status synced = files::SyncDirectory(dir); !synced) Abort(std::move(synced));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }

 private:
  const io::Tensor& TensorOf(size_t job) const { return set_.tensors[jobs_[job].tensor]; }

  // Per file, whether its bytes arrive front to back: its literals and the pieces of the jobs
  // that go into it, in the order the writer sees them, cover [0, size) one after the other.
  // Only then can it be streamed with direct writes. One pass over the jobs for all files.
  std::vector<bool> ArriveInOrder() const {
    std::vector<uint64_t> at(files_.size(), 0);     // per file: where the next bytes must go
    std::vector<size_t> literal(files_.size(), 0);  // per file: its next literal
    std::vector<bool> in_order(files_.size(), true);
    auto skip_literals = [&](size_t file) {
      const std::vector<io::FileLayout::Literal>& literals = files_[file].layout.literals;
      while (literal[file] < literals.size() && literals[literal[file]].offset == at[file]) {
        at[file] += literals[literal[file]++].bytes.size();
      }
    };
    for (size_t job = 0; job < jobs_.size(); ++job) {
      for (const auto& [file, offset] : jobs_[job].destinations) {
        skip_literals(file);
        if (offset != at[file]) in_order[file] = false;
        at[file] = offset + TensorOf(job).byte_size();
      }
    }
    for (size_t file = 0; file < files_.size(); ++file) {
      skip_literals(file);
      in_order[file] = in_order[file] && literal[file] == files_[file].layout.literals.size() &&
                       at[file] == files_[file].layout.size;
    }
    return in_order;
  }

  // Whether the writer streams `file` with direct I/O where its file system allows (Open
  // asks). Also read by the kernel's thread: it is set before any thread starts.
  bool WantsDirect(size_t file) const { return streams_[file].wants_direct; }

  // Whether the job's bytes go from its source file into each of its files by the kernel
  // (AtomicFile::CopyAt, as cp copies): a large tensor written as it is, into files written
  // through the page cache. Its source is then never read through the mapping.
  bool CopiedFileToFile(size_t job) const {
    const io::Tensor& tensor = TensorOf(job);
    if (transform_.changes_layout(jobs_[job].transform) || !tensor.is_c_order() ||
        tensor.byte_size() < kFileCopyMinBytes) {
      return false;
    }
    for (const auto& [file, offset] : jobs_[job].destinations) {
      if (WantsDirect(file)) return false;
    }
    return true;
  }

  const files::MappedFile& MappingOf(size_t job) const {
    return *set_.files[set_.source[jobs_[job].tensor]].mapping;
  }

  // Whether the job's first file may be written directly: its output buffers then hold it at
  // the phase of its file offset (DirectAppender::AppendInPlace).
  bool Placed(size_t job) const {
    const PipelineJob& j = jobs_[job];
    return !j.destinations.empty() && WantsDirect(j.destinations.front().first);
  }

  // Whether the job goes through an output buffer (PermuteInChunks): its layout changes, or it
  // is large and written directly (read into the buffer, which the write goes out from).
  bool ThroughOutputBuffer(size_t job) const {
    return transform_.changes_layout(jobs_[job].transform) ||
           (Placed(job) && TensorOf(job).byte_size() >= files::DirectAppender::kInPlaceMinBytes);
  }

  // Whether the reader reads the C-order job's bytes from its file into a source buffer for
  // the kernel (which reads all of them for any chunk of a permuted tensor). Reading them
  // through the mapping instead made the kernel's time 6x in a VM with shadow paging (its
  // first touch of each page is the hypervisor's fault; files::MappedFile::ReadInto).
  bool ReadIntoBuffer(size_t job) const {
    return transform_.changes_layout(jobs_[job].transform) &&
           ReadPieceBytes(job) <= options_.read_buffer_max;
  }

  // Whether the kernel reads a part of the job's source (a piece, as ReadPieces cuts it, or
  // all of it) through the file's mapping instead of a copy in a source buffer: most of the
  // part is in the page cache and PipelineOptions::cached_reads asks for the mapping (by
  // default where this machine maps pages for less than the copy costs, files/mapping_cost.h:
  // then neither the copy nor fresh buffers are paid for; Intel Xeon, KVM, the 1 GiB
  // checkpoint). Decided per piece: a partly cached stacked tensor's other pieces are read
  // with O_DIRECT and stay out of the page cache. Each mapped piece's pages are released once
  // it is permuted (ReleaseSource), as its buffer would be.
  bool MapsCachedPart(size_t job, std::span<const std::byte> part) const {
    if (options_.cached_reads == CachedReads::kCopied ||
        (options_.cached_reads == CachedReads::kMeasured && !files::MappingCheaperThanCopy())) {
      return false;
    }
    const std::optional<double> cached = MappingOf(job).CachedFractionOf(part);
    return cached.has_value() && *cached >= 0.5;
  }

  // The output chunk a permuted tensor is written in (kChunkBytes, at least its ranges'
  // granule, a multiple of the direct writes' phase).
  size_t ChunkBytes(size_t job) const {
    const size_t phase = files::DirectAppender::kPhase;
    const size_t granule = std::max(kChunkBytes, transform_.range_granule(jobs_[job].transform));
    return (granule + phase - 1) / phase * phase;
  }

  // How much of a C-order permuted tensor the reader reads at a time: whole slices along the
  // leading dims its spec keeps in place, as many as fill a chunk (a multiple of the direct
  // writes' phase), or all of it. A batch of 64 MiB whose output is written in 16 MiB chunks
  // needs 16 MiB source buffers, not 64: here the first touch of fresh buffers is the host's
  // fault on every page (docs/performance.md, "Where apply's CPU goes now"), and checkpoints
  // store stacked tensors (experts, layers) of gigabytes.
  size_t ReadPieceBytes(size_t job) const {
    const size_t size = TensorOf(job).byte_size();
    const size_t slice = transform_.slice_bytes(jobs_[job].transform);
    if (slice == 0 || slice >= size) return size;
    const size_t phase = files::DirectAppender::kPhase;
    const size_t step = phase / std::gcd(slice, phase);  // slices per multiple of the phase
    const size_t count = ChunkBytes(job) / slice / step * step;
    return count == 0 || count * slice >= size ? size : count * slice;
  }

  // Whether the C-order job's chunks are read from its file straight into the output buffers:
  // a tensor written as it is through them needs no other copy.
  bool ReadIntoOutput(size_t job) const {
    return !transform_.changes_layout(jobs_[job].transform) && ThroughOutputBuffer(job);
  }

  // Records the first failure and stops every stage: queues and pools wake their waiters.
  void Abort(Status status) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) return;
      failure_ = std::move(status);
    }
    failed_.store(true, std::memory_order_release);
    ready_.Cancel();
    written_.Cancel();
    outputs_.Cancel();
    source_buffers_.Cancel();
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  Error Located(Error error, size_t job, const std::filesystem::path& file) const {
    if (error.file.empty()) error.InFile(file.string());
    if (error.key.empty()) error.AtKey(TensorOf(job).name);
    return error;
  }

  Error OutOfMemory(size_t job, uint64_t bytes) const {
    return Error(ErrorCode::kOutOfMemory,
                 "cannot allocate a buffer of " + std::to_string(bytes) + " bytes for the tensor")
        .InFile(TensorOf(job).file)
        .AtKey(TensorOf(job).name);
  }

  // A source buffer of `bytes` for `job`, or null once the pipeline stops (out of memory is
  // recorded here, naming the tensor).
  BufferPool::Buffer* AcquireSourceBuffer(size_t job, uint64_t bytes) {
    BufferPool::Buffer* buffer = source_buffers_.Acquire(bytes);
    if (buffer == nullptr && !failed()) Abort(Fail(OutOfMemory(job, bytes)));
    return buffer;
  }

  // Pages each tensor's source in, or converts it to C order, one tensor ahead of the kernel.
  void ReadLoop() {
    for (size_t job = 0; job < jobs_.size() && !failed(); ++job) {
      const io::Tensor& tensor = TensorOf(job);
      Source source{job, tensor.stored, nullptr};
      if (!tensor.is_c_order()) {
        const uint64_t size = tensor.byte_size();
        source.buffer = AcquireSourceBuffer(job, size);
        if (source.buffer == nullptr) break;
        source.bytes = source.buffer->bytes(size);
        Status converted = io::CopyCOrder(tensor, source.buffer->bytes(size));
        files::ReleaseFilePages(tensor.stored);  // read once; the copy is what is used
        if (!converted) {
          source_buffers_.Release(source.buffer);
          Abort(Fail(Located(std::move(converted).error(), job, tensor.file)));
          break;
        }
      } else if (ReadIntoBuffer(job)) {
        if (!ReadPieces(job)) break;
        continue;
      } else if (!CopiedFileToFile(job) && !ReadIntoOutput(job)) {
        files::WillRead(source.bytes);
      }
      if (!ready_.Push(source)) {
        source_buffers_.Release(source.buffer);
        break;
      }
    }
    ready_.Close();
  }

  // Hands the permuted C-order job's bytes to the kernel in pieces of ReadPieceBytes (one for
  // most tensors), each read into a source buffer or, where MapsCachedPart, a part of the
  // file's mapping. False when the pipeline stops.
  bool ReadPieces(size_t job) {
    const io::Tensor& tensor = TensorOf(job);
    const size_t size = tensor.byte_size();
    const size_t piece = ReadPieceBytes(job);
    size_t at = 0;
    do {
      const size_t length = std::min(piece, size - at);
      // With room for a direct read, which puts the bytes at their file offset's phase.
      const uint64_t room = length + files::MappedFile::kRoomSlack;
      Source source;
      source.job = job;
      source.at = at;
      source.last = at + length >= size;
      source.piece = length < size;
      const std::span<const std::byte> part = tensor.stored.subspan(at, length);
      if (MapsCachedPart(job, part)) {
        source.slot = AcquireSourceBuffer(job, 0);
        if (source.slot == nullptr) return false;
        source.bytes = part;
        files::WillRead(source.bytes);
      } else {
        source.buffer = AcquireSourceBuffer(job, room);
        if (source.buffer == nullptr) return false;
        source.bytes = MappingOf(job).ReadIntoRoom(part, source.buffer->bytes(room));
      }
      if (!ready_.Push(source)) {
        ReleaseSource(source);
        return false;
      }
      at += length;
    } while (at < size);
    return true;
  }

  // The kernel, on the calling thread and its oneTBB arena.
  void PermuteLoop() {
    while (std::optional<Source> source = ready_.Pop()) {
      if (source->piece) {
        if (!PermutePiece(*source)) break;
        continue;
      }
      // A large tensor written as it is goes through an output buffer too when it is written
      // directly: read there on this thread (overlapping the writes), not copied into the
      // staging buffer by the writer between two of its writes.
      if (ThroughOutputBuffer(source->job)) {
        if (!PermuteInChunks(*source)) break;
        continue;
      }
      // Written as it is, from its source.
      if (!written_.Push({source->job, source->bytes, source->buffer, &source_buffers_})) {
        ReleaseSource(*source);
        break;
      }
    }
    written_.Close();
  }

  // Permutes the source's tensor chunk by chunk into output buffers and hands each chunk to
  // the writer; the source is released after the last chunk's permute. False when the
  // pipeline stops (a failure here is recorded by Abort).
  bool PermuteInChunks(const Source& source) {
    const PipelineJob& job = jobs_[source.job];
    const bool placed = Placed(source.job);
    const size_t size = source.bytes.size();
    const size_t phase = files::DirectAppender::kPhase;
    const size_t chunk = ChunkBytes(source.job);
    const uint64_t offset = placed ? job.destinations.front().second : 0;
    bool released = false;
    const auto stop = [&](std::optional<Status> failure) {
      if (!released) ReleaseSource(source);
      if (failure && !failed()) Abort(std::move(*failure));
      return false;
    };
    size_t at = 0;
    do {  // once for an empty tensor: its one piece finishes it for the writer
      const size_t length = std::min(chunk, size - at);
      // At the phase of its file offset when it may be written directly, so that the write
      // goes out from the output buffer; elsewhere aligned, which the kernel's stores prefer.
      const size_t head = placed ? (offset + at) % phase : 0;
      BufferPool::Buffer* out = outputs_.Acquire(head + length);
      if (out == nullptr) return stop(Fail(OutOfMemory(source.job, head + length)));
      const std::span<std::byte> bytes = out->bytes(head + length).subspan(head);
      Status applied = Ok();
      if (source.buffer == nullptr && ReadIntoOutput(source.job)) {
        MappingOf(source.job).ReadInto(source.bytes.subspan(at, length), bytes);
      } else {
        applied = transform_.ApplyRange(job.transform, source.bytes, at, bytes);
      }
      const bool last = at + length >= size;
      if (last) {
        ReleaseSource(source);
        released = true;
      }
      if (!applied) {
        outputs_.Release(out);
        return stop(Fail(Located(std::move(applied).error(), source.job,
                                 files_[job.destinations.front().first].path)));
      }
      if (!written_.Push({source.job, bytes, out, &outputs_, placed, head, at, last})) {
        outputs_.Release(out);
        return stop(std::nullopt);
      }
      at += length;
    } while (at < size);
    return true;
  }

  // Permutes one piece of a tensor read in pieces (ReadPieces) into an output buffer, as one
  // chunk for the writer. False when the pipeline stops.
  bool PermutePiece(const Source& source) {
    const PipelineJob& job = jobs_[source.job];
    const bool placed = Placed(source.job);
    const size_t length = source.bytes.size();
    const size_t phase = files::DirectAppender::kPhase;
    const size_t head = placed ? (job.destinations.front().second + source.at) % phase : 0;
    BufferPool::Buffer* out = outputs_.Acquire(head + length);
    if (out == nullptr) {
      ReleaseSource(source);
      if (!failed()) Abort(Fail(OutOfMemory(source.job, head + length)));
      return false;
    }
    const std::span<std::byte> bytes = out->bytes(head + length).subspan(head);
    Status applied = transform_.ApplySlices(job.transform, source.bytes, source.at, bytes);
    ReleaseSource(source);
    if (!applied) {
      outputs_.Release(out);
      if (!failed()) {
        Abort(Fail(Located(std::move(applied).error(), source.job,
                           files_[job.destinations.front().first].path)));
      }
      return false;
    }
    if (!written_.Push({source.job, bytes, out, &outputs_, placed, head, source.at, source.last})) {
      outputs_.Release(out);
      return false;
    }
    return true;
  }

  void ReleaseSource(const Source& source) {
    if (source.buffer != nullptr) {
      source_buffers_.Release(source.buffer);
    } else {
      files::ReleaseFilePages(source.bytes);
      source_buffers_.Release(source.slot);
    }
  }

  void WriteLoop() {
    while (std::optional<Piece> piece = written_.Pop()) {
      Status written = Write(*piece);
      if (piece->buffer != nullptr) {
        piece->pool->Release(piece->buffer);
      } else {
        files::ReleaseFilePages(piece->bytes);
      }
      if (!written) {
        Abort(std::move(written));
        break;
      }
    }
  }

  Status Open(size_t file) {
    const PipelineFile& out = files_[file];
    IOTX_ASSIGN_OR_RETURN(files::AtomicFile created,
                          files::AtomicFile::Create(out.path, {.root = options_.root}));
    auto atomic = std::make_unique<files::AtomicFile>(std::move(created));
    IOTX_RETURN_IF_ERROR(atomic->Reserve(out.layout.size));
    Stream& stream = streams_[file];
    if (WantsDirect(file)) {
      IOTX_ASSIGN_OR_RETURN(stream.direct, files::DirectAppender::Open(*atomic));
    }
    if (!stream.direct) {
      for (const io::FileLayout::Literal& literal : out.layout.literals) {
        IOTX_RETURN_IF_ERROR(atomic->WriteAt(literal.offset, literal.bytes));
      }
    }
    open_[file] = std::move(atomic);
    return Ok();
  }

  // A streamed file's literals from its position up to `offset` (all of them for the end).
  Status AppendLiterals(size_t file, uint64_t offset) {
    Stream& stream = streams_[file];
    const std::vector<io::FileLayout::Literal>& literals = files_[file].layout.literals;
    while (stream.literal < literals.size() && literals[stream.literal].offset < offset) {
      const std::string& bytes = literals[stream.literal++].bytes;
      IOTX_RETURN_IF_ERROR(stream.direct->Append(std::as_bytes(std::span(bytes))));
    }
    if (offset != UINT64_MAX && stream.direct->position() != offset) {
      return Fail(ErrorCode::kInternal, "a streamed file's bytes arrived out of order at offset " +
                                            std::to_string(offset));
    }
    return Ok();
  }

  Status WriteTo(size_t file, uint64_t offset, const Piece& piece, bool first) {
    Stream& stream = streams_[file];
    if (!stream.direct) {
      if (piece.buffer == nullptr && CopiedFileToFile(piece.job)) {
        const files::MappedFile& source = *set_.files[set_.source[jobs_[piece.job].tensor]].mapping;
        return open_[file]->CopyAt(offset, source, piece.bytes);
      }
      return open_[file]->WriteAt(offset, piece.bytes);
    }
    IOTX_RETURN_IF_ERROR(AppendLiterals(file, offset));
    if (first && piece.placed) {
      IOTX_RETURN_IF_ERROR(stream.direct->AppendInPlace(
          piece.buffer->bytes(piece.head + piece.bytes.size()), piece.head, piece.bytes.size()));
    } else {
      IOTX_RETURN_IF_ERROR(stream.direct->Append(piece.bytes));
    }
    return Ok();
  }

  // The rest of a streamed file: its last literals and the staged bytes.
  Status FinishWrites(size_t file) {
    Stream& stream = streams_[file];
    if (!stream.direct) return Ok();
    IOTX_RETURN_IF_ERROR(AppendLiterals(file, UINT64_MAX));
    IOTX_RETURN_IF_ERROR(stream.direct->Finish());
    stream.direct.reset();
    return Ok();
  }

  Status Write(const Piece& piece) {
    const PipelineJob& job = jobs_[piece.job];
    const io::Tensor& tensor = TensorOf(piece.job);
    bool first = true;
    for (const auto& [file, offset] : job.destinations) {
      if (!open_[file]) {
        if (Status opened = Open(file); !opened) {
          return Fail(Located(std::move(opened).error(), piece.job, files_[file].path));
        }
      }
      Status written = WriteTo(file, offset + piece.at, piece, first);
      first = false;
      if (!written) {
        // Written straight from the source mapping, a truncated source shows as EFAULT.
        if (piece.buffer == nullptr) {
          IOTX_RETURN_IF_ERROR(set_.CheckIntact(set_.source[job.tensor]));
        }
        return Fail(Located(std::move(written).error(), piece.job, files_[file].path));
      }
    }
    // The tensor's bytes so far: the earlier chunks counted `at` of them.
    done_ += piece.last ? tensor.byte_size() - piece.at : piece.bytes.size();
    Report(done_);
    if (!piece.last) return Ok();
    for (const auto& [file, offset] : job.destinations) {
      if (--pending_[file] != 0) continue;
      if (Status finished = FinishWrites(file); !finished) {
        return Fail(Located(std::move(finished).error(), piece.job, files_[file].path));
      }
      Commit(file);
    }
    return Ok();
  }

  // Hands a file whose bytes are all written to the commit thread.
  void Commit(size_t file) {
    std::shared_ptr<files::AtomicFile> atomic(open_[file].release());
    commits_.Post([this, file, atomic]() -> Status {
      for (size_t source : sources_of_file_[file]) {
        if (Status intact = set_.CheckIntact(source); !intact) {
          Abort(intact);
          return intact;
        }
      }
      // Durable: the file's fsync here, its directory's once after the last file (Run), not
      // after each of them.
      const bool durable = options_.durability == files::Durability::kDurable;
      Status done = atomic->Commit(durable ? files::Durability::kDurableExceptDirectory
                                           : options_.durability);
      if (!done) {
        Abort(done);
        return done;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (committed_ != nullptr) committed_->push_back(file);
      if (durable) renamed_into_.insert(files_[file].path.parent_path());
      return Ok();
    });
  }

  void Report(uint64_t done) const {
    if (options_.progress) options_.progress(done, total_);
  }

  const TensorSet& set_;
  const DeviceTransform& transform_;
  std::span<const PipelineFile> files_;
  std::span<const PipelineJob> jobs_;
  const PipelineOptions& options_;
  std::vector<size_t>* committed_;

  // How the writer streams a file.
  struct Stream {
    bool wants_direct = false;  // large and arriving in order, durable or many (constructor)
    std::unique_ptr<files::DirectAppender> direct;  // while open, when written directly
    size_t literal = 0;                             // the next literal to append
  };

  std::vector<std::unique_ptr<files::AtomicFile>> open_;  // the writer's, until committed
  std::vector<Stream> streams_;                           // the writer's, per file
  std::vector<size_t> pending_;                           // per file: jobs not yet written
  std::vector<std::set<size_t>> sources_of_file_;         // per file: the source files read
  uint64_t total_ = 0;
  uint64_t done_ = 0;  // the writer's

  BoundedQueue<Source> ready_{kReadAhead};
  BoundedQueue<Piece> written_{kWriteQueue};
  BufferPool outputs_{kOutputBuffers};
  BufferPool source_buffers_{kSourceBuffers};

  std::mutex mutex_;
  Status failure_;
  std::set<std::filesystem::path> renamed_into_;  // directories of durable commits (mutex_)
  std::atomic<bool> failed_{false};
  // Last: destroyed (and drained) first, while everything its jobs use is alive.
  files::BackgroundFlush commits_{kQueuedCommits, kCommitThreads};
};

}  // namespace

Status RunPipeline(const TensorSet& set, const DeviceTransform& transform,
                   std::span<const PipelineFile> files, std::span<const PipelineJob> jobs,
                   const PipelineOptions& options, std::vector<size_t>* committed) {
  Pipeline pipeline(set, transform, files, jobs, options, committed);
  return pipeline.Run();
}

}  // namespace iotx::producer
