// Lays out {name: numpy array} as the protocol 4 pickle numpy itself produces for arrays below
// protocol 5: _reconstruct(ndarray, (0,), b'b') completed by BUILD with
// (1, shape, dtype, False, data). No memo (nothing is shared); opcodes in frames like
// CPython's, every array's bytes outside them (CPython does that for payloads of 64 KiB and
// more; a reader takes unframed bytes anywhere), so each is a piece of the layout of its own.
#include <unordered_set>

#include "io/pickle.h"
#include "io/pickle_opcodes.h"

namespace iotx::io {
namespace {

using namespace pickle;  // NOLINT: the opcodes are this file's vocabulary

// CPython's _Framer: opcodes are grouped into frames of ~64 KiB, and a payload of at least
// that size is written outside any frame (so it streams straight from the array).
constexpr size_t kFrameSizeTarget = 64 * 1024;
// CPython batches dict items into SETITEMS of 1000 (pickle._BATCHSIZE).
constexpr size_t kBatchSize = 1000;

class PickleLayoutBuilder {
 public:
  explicit PickleLayoutBuilder(size_t tensors) {
    layout_.data_offsets.resize(tensors);
    layout_.data_sizes.resize(tensors);
    pending_ = "\x80\x04";  // PROTO 4, unframed
  }

  void Op(uint8_t opcode) { frame_ += static_cast<char>(opcode); }

  void Uint(uint64_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) frame_ += static_cast<char>((value >> (8 * i)) & 0xFF);
  }

  void Int(int64_t value) {
    if (value >= 0 && value < 256) {
      Op(kBinInt1);
      Uint(static_cast<uint64_t>(value), 1);
    } else if (value >= 0 && value < 65536) {
      Op(kBinInt2);
      Uint(static_cast<uint64_t>(value), 2);
    } else if (value >= INT32_MIN && value <= INT32_MAX) {
      Op(kBinInt);
      Uint(static_cast<uint32_t>(value), 4);
    } else {
      // LONG1: the shortest little-endian two's complement (8 bytes always suffice).
      Op(kLong1);
      size_t n = 8;
      while (n > 1) {
        const int64_t top = value >> (8 * (n - 1) - 1);  // the sign-carrying bits
        if (top != 0 && top != -1) break;
        --n;
      }
      Uint(n, 1);
      Uint(static_cast<uint64_t>(value), n);
    }
  }

  void Unicode(std::string_view text) {
    if (text.size() < 256) {
      Op(kShortBinUnicode);
      Uint(text.size(), 1);
    } else {
      Op(kBinUnicode);  // names are far below 4 GiB
      Uint(text.size(), 4);
    }
    frame_ += text;
  }

  void StackGlobal(std::string_view module, std::string_view name) {
    Unicode(module);
    Unicode(name);
    Op(kStackGlobal);
  }

  // Small bytes of the format itself (the b'b' typecode), inside the frame.
  void ShortBytes(std::string_view bytes) {
    Op(kShortBinBytes);
    Uint(bytes.size(), 1);
    frame_ += bytes;
  }

  // Tensor `index`'s `size` bytes, as CPython picks the opcode (SHORT_BINBYTES below 256,
  // BINBYTES to 4 GiB, then BINBYTES8), after the frame so far and outside any frame.
  void Data(size_t index, uint64_t size) {
    CommitFrame();
    if (size < 256) {
      pending_ += static_cast<char>(kShortBinBytes);
      pending_ += static_cast<char>(size);
    } else {
      const size_t length_bytes = size <= 0xFFFFFFFF ? 4 : 8;
      pending_ += static_cast<char>(length_bytes == 4 ? kBinBytes : kBinBytes8);
      for (size_t i = 0; i < length_bytes; ++i) {
        pending_ += static_cast<char>((size >> (8 * i)) & 0xFF);
      }
    }
    EmitPending();
    layout_.data_offsets[index] = offset_;
    layout_.data_sizes[index] = size;
    offset_ += size;
  }

  // Ends the frame once it reaches the target size.
  void MaybeCommitFrame() {
    if (frame_.size() >= kFrameSizeTarget) CommitFrame();
  }

  FileLayout Finish() {
    CommitFrame();
    EmitPending();
    layout_.size = offset_;
    return std::move(layout_);
  }

 private:
  // The pending opcodes become one FRAME.
  void CommitFrame() {
    if (frame_.empty()) return;
    pending_ += static_cast<char>(kFrame);
    for (size_t i = 0; i < 8; ++i) pending_ += static_cast<char>((frame_.size() >> (8 * i)) & 0xFF);
    pending_ += frame_;
    frame_.clear();
  }

  void EmitPending() {
    if (pending_.empty()) return;
    offset_ += pending_.size();
    layout_.literals.push_back({offset_ - pending_.size(), std::move(pending_)});
    pending_.clear();
  }

  std::string frame_;    // opcodes of the frame being built
  std::string pending_;  // bytes after the last tensor's data, not yet a literal
  uint64_t offset_ = 0;  // where pending_ starts in the file
  FileLayout layout_;
};

// What numpy's dtype.__reduce__ gives for a simple dtype: the args' type code and the
// version 3 state (byte order, element size, alignment, flags).
struct DTypePickle {
  std::string code;  // "f4", "V2", "U3"
  char byteorder;
  int64_t elsize;
  int64_t alignment;
  int64_t flags;
};

Expected<DTypePickle> DTypePickleFor(const Tensor& entry) {
  std::optional<DescrInfo> info = ParseDescr(entry.descr);
  if (!info || info->kind == 'x' || info->kind == 'M' || info->kind == 'm' || info->itemsize == 0) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "type '" + entry.descr +
                          "' cannot be pickled for numpy without extra modules; use a numpy "
                          "type string like '<f4' ('<V2' for bfloat16)")
                    .AtKey(entry.name));
  }
  DTypePickle d;
  const size_t count = info->kind == 'U' ? info->itemsize / 4 : info->itemsize;
  d.code = info->kind + std::to_string(count);
  d.byteorder = ByteSwapUnit(*info) == 1 ? '|' : info->byteorder == '>' ? '>' : '<';
  // Flexible types carry their size in the state; numpy's values for V and S, and U's.
  d.elsize = -1, d.alignment = -1, d.flags = 0;
  if (info->kind == 'V' || info->kind == 'S') {
    d.elsize = static_cast<int64_t>(info->itemsize), d.alignment = 1;
  } else if (info->kind == 'U') {
    d.elsize = static_cast<int64_t>(info->itemsize), d.alignment = 4, d.flags = 8;
  }
  return d;
}

Status CheckNames(std::span<const Tensor> tensors) {
  std::unordered_set<std::string_view> names;
  for (const Tensor& entry : tensors) {
    if (!names.insert(entry.name).second) {
      return Fail(Error(ErrorCode::kInvalidArgument, "name repeated").AtKey(entry.name));
    }
  }
  return Ok();
}

void LayOutArray(PickleLayoutBuilder& out, size_t index, const Tensor& entry,
                 const DTypePickle& dtype) {
  out.Unicode(entry.name);
  out.StackGlobal("numpy.core.multiarray", "_reconstruct");
  out.StackGlobal("numpy", "ndarray");
  out.Int(0);
  out.Op(kTuple1);
  out.ShortBytes("b");
  out.Op(kTuple3);
  out.Op(kReduce);
  // state: (1, shape, dtype, is_fortran, data)
  out.Op(kMark);
  out.Int(1);
  out.Op(kMark);
  for (int64_t dim : entry.shape) out.Int(dim);
  out.Op(kTuple);
  out.StackGlobal("numpy", "dtype");
  out.Unicode(dtype.code);
  out.Op(kNewFalse);
  out.Op(kNewTrue);
  out.Op(kTuple3);
  out.Op(kReduce);
  out.Op(kMark);
  out.Int(3);
  out.Unicode(std::string_view(&dtype.byteorder, 1));
  out.Op(kNone);
  out.Op(kNone);
  out.Op(kNone);
  out.Int(dtype.elsize);
  out.Int(dtype.alignment);
  out.Int(dtype.flags);
  out.Op(kTuple);
  out.Op(kBuild);
  out.Op(kNewFalse);
  out.Data(index, entry.byte_size());
  out.Op(kTuple);
  out.Op(kBuild);
  out.MaybeCommitFrame();
}

}  // namespace

Expected<FileLayout> PickleLayout(std::span<const Tensor> tensors) {
  IOTX_RETURN_IF_ERROR(CheckNames(tensors));
  std::vector<DTypePickle> dtypes;
  for (const Tensor& entry : tensors) {
    if (entry.descr.empty()) {
      return Fail(Error(ErrorCode::kInvalidArgument,
                        "dtype " + entry.dtype + " has no numpy type string, so numpy cannot "
                                                 "unpickle it")
                      .AtKey(entry.name));
    }
    IOTX_ASSIGN_OR_RETURN(DTypePickle dtype, DTypePickleFor(entry));
    dtypes.push_back(std::move(dtype));
  }
  PickleLayoutBuilder out(tensors.size());
  out.Op(kEmptyDict);
  for (size_t start = 0; start < tensors.size(); start += kBatchSize) {
    const size_t end = std::min(tensors.size(), start + kBatchSize);
    out.Op(kMark);
    for (size_t i = start; i < end; ++i) LayOutArray(out, i, tensors[i], dtypes[i]);
    out.Op(kSetItems);
  }
  out.Op(kStop);
  return out.Finish();
}

Status WritePickle(const std::filesystem::path& path, std::span<const Tensor> tensors,
                   const files::AtomicFileOptions& options) {
  auto layout = PickleLayout(tensors);
  if (!layout) return Fail(std::move(layout).error().InFile(path.string()));
  for (const Tensor& entry : tensors) {
    const size_t itemsize = ParseDescr(entry.descr)->itemsize;  // PickleLayout checked it
    if (itemsize * 8 != entry.element_bits ||
        (!entry.layout.latin1 && entry.stored.size() != entry.byte_size())) {
      return Fail(Error(ErrorCode::kBufferSize, "data of " + std::to_string(entry.stored.size()) +
                                                    " bytes does not match shape " +
                                                    ToString(entry.shape) + " of '" +
                                                    entry.descr + "'")
                      .InFile(path.string())
                      .AtKey(entry.name));
    }
  }
  return WriteLaidOut(path, *layout, tensors, options);
}

}  // namespace iotx::io
