// Writes {name: numpy array} as the protocol 4 pickle numpy itself produces for arrays below
// protocol 5: _reconstruct(ndarray, (0,), b'b') completed by BUILD with
// (1, shape, dtype, False, data). No memo (nothing is shared), frames like CPython's.
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

class PickleStream {
 public:
  explicit PickleStream(files::AtomicFile& file) : file_(file) {}

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

  // Bytes as CPython picks the opcode: SHORT_BINBYTES below 256, BINBYTES to 4 GiB, BINBYTES8.
  Status Bytes(std::span<const std::byte> data) {
    std::string header;
    const uint64_t n = data.size();
    if (n < 256) {
      header = {static_cast<char>(kShortBinBytes), static_cast<char>(n)};
    } else {
      const size_t length_bytes = n <= 0xFFFFFFFF ? 4 : 8;
      header += static_cast<char>(length_bytes == 4 ? kBinBytes : kBinBytes8);
      for (size_t i = 0; i < length_bytes; ++i) header += static_cast<char>((n >> (8 * i)) & 0xFF);
    }
    if (n < kFrameSizeTarget) {
      frame_ += header;
      if (n > 0) frame_.append(reinterpret_cast<const char*>(data.data()), data.size());
      return Ok();
    }
    IOTX_RETURN_IF_ERROR(Flush());
    IOTX_RETURN_IF_ERROR(file_.Write(header));
    return file_.Write(data);
  }

  // Ends the frame once it reaches the target size.
  Status MaybeFlush() { return frame_.size() >= kFrameSizeTarget ? Flush() : Ok(); }

  // Writes the pending opcodes as one FRAME.
  Status Flush() {
    if (frame_.empty()) return Ok();
    std::string header(1, static_cast<char>(kFrame));
    for (size_t i = 0; i < 8; ++i) header += static_cast<char>((frame_.size() >> (8 * i)) & 0xFF);
    IOTX_RETURN_IF_ERROR(file_.Write(header));
    IOTX_RETURN_IF_ERROR(file_.Write(frame_));
    frame_.clear();
    return Ok();
  }

 private:
  files::AtomicFile& file_;
  std::string frame_;
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

Expected<DTypePickle> DTypePickleFor(const NamedArray& entry) {
  std::optional<DescrInfo> info = ParseDescr(entry.array.descr);
  if (!info || info->kind == 'x' || info->kind == 'M' || info->kind == 'm' || info->itemsize == 0) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "type '" + entry.array.descr +
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

Status CheckEntries(std::span<const NamedArray> arrays) {
  std::unordered_set<std::string_view> names;
  for (const NamedArray& entry : arrays) {
    if (!names.insert(entry.name).second) {
      return Fail(Error(ErrorCode::kInvalidArgument, "name repeated").AtKey(entry.name));
    }
    const Array& a = entry.array;
    std::optional<int64_t> count = CheckedProduct(a.shape);
    if (!count || a.itemsize == 0 || static_cast<uint64_t>(*count) > SIZE_MAX / a.itemsize ||
        static_cast<size_t>(*count) * a.itemsize != a.data.size() ||
        ParseDescr(a.descr).value_or(DescrInfo{}).itemsize != a.itemsize) {
      return Fail(Error(ErrorCode::kBufferSize, "data of " + std::to_string(a.data.size()) +
                                                    " bytes does not match " + "shape " +
                                                    ToString(a.shape) + " of '" + a.descr + "'")
                      .AtKey(entry.name));
    }
  }
  return Ok();
}

Status WriteArray(PickleStream& out, const NamedArray& entry, const DTypePickle& dtype) {
  out.Unicode(entry.name);
  out.StackGlobal("numpy.core.multiarray", "_reconstruct");
  out.StackGlobal("numpy", "ndarray");
  out.Int(0);
  out.Op(kTuple1);
  IOTX_RETURN_IF_ERROR(out.Bytes(std::as_bytes(std::span<const char>("b", 1))));
  out.Op(kTuple3);
  out.Op(kReduce);
  // state: (1, shape, dtype, is_fortran, data)
  out.Op(kMark);
  out.Int(1);
  out.Op(kMark);
  for (int64_t dim : entry.array.shape) out.Int(dim);
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
  IOTX_RETURN_IF_ERROR(out.Bytes(entry.array.data));
  out.Op(kTuple);
  out.Op(kBuild);
  return out.MaybeFlush();
}

}  // namespace

Status WritePickle(const std::filesystem::path& path, std::span<const NamedArray> arrays,
                   const files::AtomicFileOptions& options) {
  auto checked = CheckEntries(arrays);
  if (!checked) return Fail(std::move(checked.error()).InFile(path.string()));
  std::vector<DTypePickle> dtypes;
  for (const NamedArray& entry : arrays) {
    auto dtype = DTypePickleFor(entry);
    if (!dtype) return Fail(std::move(dtype.error()).InFile(path.string()));
    dtypes.push_back(std::move(*dtype));
  }
  IOTX_ASSIGN_OR_RETURN(files::AtomicFile file, files::AtomicFile::Create(path, options));
  IOTX_RETURN_IF_ERROR(file.Write(std::string_view("\x80\x04", 2)));  // PROTO 4, unframed
  PickleStream out(file);
  out.Op(kEmptyDict);
  for (size_t start = 0; start < arrays.size(); start += kBatchSize) {
    const size_t end = std::min(arrays.size(), start + kBatchSize);
    out.Op(kMark);
    for (size_t i = start; i < end; ++i)
      IOTX_RETURN_IF_ERROR(WriteArray(out, arrays[i], dtypes[i]));
    out.Op(kSetItems);
  }
  out.Op(kStop);
  IOTX_RETURN_IF_ERROR(out.Flush());
  return file.Commit();
}

}  // namespace iotx::io
