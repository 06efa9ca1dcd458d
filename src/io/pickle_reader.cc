// The pickle VM: reads opcodes, keeps the stack, marks and memo, and hands calls and state
// to pickle_objects. Never recursive; every count and length bounded.
#include <bit>
#include <cstring>
#include <unordered_map>

#include "files/mapped_file.h"
#include "io/pickle.h"
#include "io/pickle_objects.h"
#include "io/pickle_opcodes.h"
#include "core/utf8.h"

namespace iotx::io {
namespace {

using namespace pickle;  // NOLINT: the opcodes and object types are this file's vocabulary

// Bounds on what a pickle may make the reader hold. A real inp-000.p of N arrays keeps ~2
// stack entries per array between SETITEMS batches (CPython batches 1000 items), memoizes
// ~20 objects per array and nests tuples 3 deep; these caps are far above that and keep a
// hostile file to a few hundred MB of bookkeeping at most.
constexpr size_t kMaxStack = size_t{1} << 20;
constexpr size_t kMaxMemo = size_t{1} << 20;
constexpr size_t kMaxMarks = 256;
constexpr int kMaxTupleDepth = 32;
constexpr size_t kMaxObjects = size_t{1} << 23;
// GLOBAL's "module\nname\n" lines; real ones are under 40 bytes.
constexpr size_t kMaxGlobalLine = 1024;

// Walks every opcode before anything is built and refuses the pickle if a GLOBAL or INST
// names something outside the allow-list, or an opcode would reach a global the allow-list
// cannot check (extension codes, persistent ids). Stops quietly at the first malformed or
// unknown opcode: the VM reports those. STACK_GLOBAL takes its names from the stack, so the
// VM checks it again when it runs.
Status ScanGlobals(std::span<const std::byte> file) {
  size_t pos = 0;
  auto line = [&](std::string_view& out) {
    for (size_t end = pos; end < file.size(); ++end) {
      if (file[end] == std::byte{'\n'}) {
        out = std::string_view(reinterpret_cast<const char*>(file.data() + pos), end - pos);
        pos = end + 1;
        return true;
      }
    }
    return false;
  };
  while (pos < file.size()) {
    const size_t op_pos = pos;
    const uint8_t op = static_cast<uint8_t>(file[pos++]);
    auto forbidden = [&](const std::string& message) {
      return Fail(ErrorCode::kPickleForbidden, "byte " + std::to_string(op_pos) + " (" +
                                                   std::string(OpcodeName(op)) + "): " + message);
    };
    if (op == kStop) return Ok();
    if (op == kExt1 || op == kExt2 || op == kExt4) {
      return forbidden(
          "extension codes name globals through copyreg's registry, which cannot "
          "be checked against the allow-list");
    }
    if (op == kPersId || op == kBinPersId) {
      return forbidden("persistent ids call back into the unpickler; not allowed");
    }
    const ArgFormat format = ArgFormatOf(op);
    switch (format.kind) {
      case ArgKind::kNone:
        break;
      case ArgKind::kFixed:
        if (file.size() - pos < format.size) return Ok();
        pos += format.size;
        break;
      case ArgKind::kLength: {
        if (file.size() - pos < format.size) return Ok();
        uint64_t length = 0;
        for (size_t i = format.size; i-- > 0;) {
          length = (length << 8) | static_cast<uint8_t>(file[pos + i]);
        }
        pos += format.size;
        if (length > file.size() - pos) return Ok();
        pos += static_cast<size_t>(length);
        break;
      }
      case ArgKind::kLine: {
        std::string_view ignored;
        if (!line(ignored)) return Ok();
        break;
      }
      case ArgKind::kTwoLines: {
        std::string_view module, name;
        if (!line(module) || !line(name)) return Ok();
        auto global = ResolveGlobal(module, name);
        if (!global) return forbidden(global.error().message);
        break;
      }
      case ArgKind::kUnknown:
        return Ok();
    }
  }
  return Ok();
}

class Machine {
 public:
  Machine(std::span<const std::byte> file, std::shared_ptr<const void> owner,
          std::string_view file_name)
      : file_(file), owner_(std::move(owner)), file_name_(file_name) {}

  Expected<std::vector<Tensor>> Run() {
    Status scan = ScanGlobals(file_);
    if (!scan) return Fail(std::move(scan).error().InFile(std::string(file_name_)));
    while (!stopped_) {
      if (pos_ >= file_.size()) {
        return Fail(Error(ErrorCode::kPickleFormat, "truncated: the pickle ends at byte " +
                                                        std::to_string(pos_) +
                                                        " without a STOP opcode")
                        .InFile(std::string(file_name_)));
      }
      op_pos_ = pos_;
      op_ = static_cast<uint8_t>(file_[pos_++]);
      Status status = Step();
      if (!status) return Fail(Locate(std::move(status).error()));
    }
    if (pos_ != file_.size()) {
      return Fail(Error(ErrorCode::kPickleFormat,
                        std::to_string(file_.size() - pos_) + " bytes after the STOP opcode")
                      .InFile(std::string(file_name_)));
    }
    Dict* dict = std::get_if<Dict>(&result_->v);
    if (dict == nullptr) {
      return Fail(
          Error(ErrorCode::kPickleUnsupportedValue,
                "the pickle holds " + Describe(*result_) + ", expected a dict of numpy arrays")
              .InFile(std::string(file_name_)));
    }
    return std::move(dict->items);
  }

 private:
  // Adds the file and the opcode's position to an error from Step().
  Error Locate(Error error) const {
    error.message = "byte " + std::to_string(op_pos_) + " (" + std::string(OpcodeName(op_)) +
                    "): " + error.message;
    return std::move(error).InFile(std::string(file_name_));
  }

  static Unexpected Format(const std::string& message) {
    return Fail(ErrorCode::kPickleFormat, message);
  }

  // --- reading the opcode's argument ---

  Expected<std::span<const std::byte>> Take(uint64_t n) {
    if (n > file_.size() - pos_) {
      return Format("truncated: needs " + std::to_string(n) + " bytes, " +
                    std::to_string(file_.size() - pos_) + " remain");
    }
    auto bytes = file_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return bytes;
  }

  Expected<uint64_t> TakeUint(size_t n) {
    IOTX_ASSIGN_OR_RETURN(auto bytes, Take(n));
    uint64_t value = 0;
    for (size_t i = n; i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
    return value;
  }

  Expected<std::string_view> TakeLine() {
    const size_t limit = std::min(file_.size(), pos_ + kMaxGlobalLine);
    for (size_t end = pos_; end < limit; ++end) {
      if (file_[end] == std::byte{'\n'}) {
        std::string_view line(reinterpret_cast<const char*>(file_.data() + pos_), end - pos_);
        pos_ = end + 1;
        return line;
      }
    }
    return Format("no newline within " + std::to_string(kMaxGlobalLine) + " bytes");
  }

  // --- the stack ---

  Expected<ValuePtr> New(Value value) {
    if (++values_ > kMaxObjects) {
      return Format("more than " + std::to_string(kMaxObjects) + " objects");
    }
    return std::make_shared<Value>(std::move(value));
  }

  Status Push(ValuePtr value) {
    if (stack_.size() >= kMaxStack) {
      return Format("stack deeper than " + std::to_string(kMaxStack));
    }
    stack_.push_back(std::move(value));
    return Ok();
  }

  Status PushNew(Value value) {
    IOTX_ASSIGN_OR_RETURN(ValuePtr ptr, New(std::move(value)));
    return Push(std::move(ptr));
  }

  // The entries above the innermost mark are all a pop may take (CPython's "fence").
  size_t Fence() const { return marks_.empty() ? 0 : marks_.back(); }

  Expected<ValuePtr> Pop() {
    if (stack_.size() <= Fence()) return Format("stack underflow");
    ValuePtr value = std::move(stack_.back());
    stack_.pop_back();
    return value;
  }

  Expected<ValuePtr> Top() {
    if (stack_.size() <= Fence()) return Format("stack underflow");
    return stack_.back();
  }

  Expected<std::vector<ValuePtr>> PopMark() {
    if (marks_.empty()) return Format("no MARK to pop to");
    size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<ValuePtr> items(std::make_move_iterator(stack_.begin() + mark),
                                std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return items;
  }

  Status PushTuple(std::vector<ValuePtr> items) {
    int depth = 0;
    for (const ValuePtr& item : items) depth = std::max(depth, item->depth);
    if (depth + 1 > kMaxTupleDepth)
      return Format("tuples nested deeper than " + std::to_string(kMaxTupleDepth));
    IOTX_ASSIGN_OR_RETURN(ValuePtr tuple, New(Value{Tuple{std::move(items)}}));
    tuple->depth = depth + 1;
    return Push(std::move(tuple));
  }

  Status PopTupleOf(size_t n) {
    if (stack_.size() < Fence() + n) return Format("stack underflow");
    std::vector<ValuePtr> items(std::make_move_iterator(stack_.end() - n),
                                std::make_move_iterator(stack_.end()));
    stack_.resize(stack_.size() - n);
    return PushTuple(std::move(items));
  }

  // --- values ---

  Status PushStr(std::span<const std::byte> bytes) {
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!IsValidUtf8(text)) return Format("string is not valid UTF-8");
    NoteKey(text);
    return PushNew(Value{Str{text}});
  }

  Status PushBytes(std::span<const std::byte> bytes) {
    return PushNew(Value{Bytes{bytes, owner_, /*latin1=*/false, bytes.size()}});
  }

  // Remembers `text` as the name of the dict entry being read when it lands in a key slot of
  // the top-level dict's SETITEM(S): right after the dict (or its MARK), or right after a
  // finished key/value pair. Errors while its array is built then name it. Best effort: a
  // str that is a piece of a value (a STACK_GLOBAL's module or name, an argument) always
  // follows a str, a global or a tuple, never a finished value.
  void NoteKey(std::string_view text) {
    if (stack_.empty() || !std::holds_alternative<Dict>(stack_[0]->v) || marks_.size() > 1) {
      return;
    }
    const size_t base = marks_.empty() ? 1 : marks_[0];
    if (stack_.size() < base || (stack_.size() - base) % 2 != 0) return;
    if (stack_.size() > base) {
      const auto& value = stack_.back()->v;
      const auto& key = stack_[stack_.size() - 2]->v;
      if (std::holds_alternative<Str>(value) || std::holds_alternative<Global>(value) ||
          std::holds_alternative<Tuple>(value) || !std::holds_alternative<Str>(key)) {
        return;
      }
    }
    key_hint_ = text;
  }

  Error WithKey(Error error) const {
    if (error.key.empty() && !key_hint_.empty()) error.key = key_hint_;
    return error;
  }

  Status PushInt(int64_t value) { return PushNew(Value{value}); }

  // LONG1/LONG4: little-endian two's complement of n bytes.
  Status PushLong(std::span<const std::byte> bytes) {
    if (bytes.size() > 8) return PushNew(Value{Opaque{"an int beyond 64 bits"}});
    uint64_t value = 0;
    for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
    if (!bytes.empty() && bytes.size() < 8 && (static_cast<uint8_t>(bytes.back()) & 0x80)) {
      value |= ~uint64_t{0} << (8 * bytes.size());  // sign-extend
    }
    return PushInt(static_cast<int64_t>(value));
  }

  Status Memoize(uint64_t index) {
    IOTX_ASSIGN_OR_RETURN(ValuePtr top, Top());
    if (memo_.size() >= kMaxMemo && !memo_.count(index)) {
      return Format("memo larger than " + std::to_string(kMaxMemo) + " entries");
    }
    memo_[index] = std::move(top);
    return Ok();
  }

  Status Recall(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return Format("memo entry " + std::to_string(index) + " is not set");
    return Push(it->second);
  }

  Status PushGlobal(std::string_view module, std::string_view name) {
    IOTX_ASSIGN_OR_RETURN(Global global, ResolveGlobal(module, name));
    return PushNew(Value{global});
  }

  // A dict built with nothing beneath it on the stack is the result {name: array}; a dict built
  // inside another value (a structured dtype's fields: {field: (dtype, offset)}) is not, and
  // its entries are no input names: it is kept opaque, so what refuses it is the value it is
  // part of ("structured dtypes are not supported"), not "input 'x' is a tuple".
  Value NewDict() const {
    if (stack_.empty()) return Value{Dict{}};
    return Value{Opaque{"a dict", /*is_container=*/true, /*is_mapping=*/true}};
  }

  // A dict, list or set the pickle builds: the top-level dict is the result; anything else is
  // kept only to be refused with a clear message if it ends up as a dict value.
  Status AddToContainer(std::vector<ValuePtr> items, bool pairs) {
    IOTX_ASSIGN_OR_RETURN(ValuePtr target, Top());
    if (Dict* dict = std::get_if<Dict>(&target->v); dict != nullptr && pairs) {
      if (items.size() % 2 != 0) return Format("odd number of items for a dict");
      for (size_t i = 0; i < items.size(); i += 2) {
        IOTX_RETURN_IF_ERROR(SetItem(*dict, *items[i], *items[i + 1]));
      }
      return Ok();
    }
    const Opaque* container = std::get_if<Opaque>(&target->v);
    if (container == nullptr || !container->is_container || pairs != container->is_mapping) {
      return Format(std::string(pairs ? "SETITEM" : "APPEND") + " on " + Describe(*target));
    }
    if (pairs && items.size() % 2 != 0) return Format("odd number of items for a dict");
    return Ok();  // the contents of lists, sets and inner dicts are never needed
  }

  Status Step() {
    switch (op_) {
      case kProto: {
        IOTX_ASSIGN_OR_RETURN(uint64_t version, TakeUint(1));
        if (version > 5)
          return Format("protocol " + std::to_string(version) + "; at most 5 is supported");
        return Ok();
      }
      case kFrame: {
        // Frames only group opcodes for buffered reading; the content is read the same way.
        IOTX_ASSIGN_OR_RETURN(uint64_t length, TakeUint(8));
        if (length > file_.size() - pos_)
          return Format("frame of " + std::to_string(length) + " bytes runs past the end");
        return Ok();
      }
      case kStop: {
        IOTX_ASSIGN_OR_RETURN(result_, Pop());
        if (!stack_.empty() || !marks_.empty()) return Format("values left on the stack at STOP");
        stopped_ = true;
        return Ok();
      }
      case kMark:
        if (marks_.size() >= kMaxMarks)
          return Format("more than " + std::to_string(kMaxMarks) + " open MARKs");
        marks_.push_back(stack_.size());
        return Ok();
      case kPop:
        if (stack_.size() > Fence()) {
          stack_.pop_back();
        } else if (!marks_.empty()) {
          marks_.pop_back();  // CPython: POP at a mark pops the mark
        } else {
          return Format("stack underflow");
        }
        return Ok();
      case kPopMark:
        if (auto popped = PopMark(); !popped) return Fail(std::move(popped).error());
        return Ok();
      case kDup: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr top, Top());
        return Push(std::move(top));
      }
      case kNone:
        return PushNew(Value{NoneValue{}});
      case kNewTrue:
        return PushNew(Value{true});
      case kNewFalse:
        return PushNew(Value{false});
      case kBinInt: {
        IOTX_ASSIGN_OR_RETURN(uint64_t v, TakeUint(4));
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(v)));
      }
      case kBinInt1: {
        IOTX_ASSIGN_OR_RETURN(uint64_t v, TakeUint(1));
        return PushInt(static_cast<int64_t>(v));
      }
      case kBinInt2: {
        IOTX_ASSIGN_OR_RETURN(uint64_t v, TakeUint(2));
        return PushInt(static_cast<int64_t>(v));
      }
      case kLong1:
      case kLong4: {
        IOTX_ASSIGN_OR_RETURN(uint64_t n, TakeUint(op_ == kLong1 ? 1 : 4));
        IOTX_ASSIGN_OR_RETURN(auto bytes, Take(n));
        return PushLong(bytes);
      }
      case kBinFloat: {
        IOTX_ASSIGN_OR_RETURN(auto bytes, Take(8));
        uint64_t bits = 0;
        for (std::byte b : bytes) bits = (bits << 8) | static_cast<uint8_t>(b);  // big-endian
        return PushNew(Value{std::bit_cast<double>(bits)});
      }
      case kShortBinUnicode:
      case kBinUnicode:
      case kBinUnicode8: {
        IOTX_ASSIGN_OR_RETURN(uint64_t n, TakeUint(op_ == kShortBinUnicode ? 1
                                                   : op_ == kBinUnicode    ? 4
                                                                           : 8));
        IOTX_ASSIGN_OR_RETURN(auto bytes, Take(n));
        return PushStr(bytes);
      }
      case kShortBinBytes:
      case kBinBytes:
      case kBinBytes8:
      case kByteArray8: {
        IOTX_ASSIGN_OR_RETURN(uint64_t n, TakeUint(op_ == kShortBinBytes ? 1
                                                   : op_ == kBinBytes    ? 4
                                                                         : 8));
        IOTX_ASSIGN_OR_RETURN(auto bytes, Take(n));
        return PushBytes(bytes);
      }
      case kEmptyTuple:
        return PushTuple({});
      case kTuple1:
        return PopTupleOf(1);
      case kTuple2:
        return PopTupleOf(2);
      case kTuple3:
        return PopTupleOf(3);
      case kTuple: {
        IOTX_ASSIGN_OR_RETURN(auto items, PopMark());
        return PushTuple(std::move(items));
      }
      case kEmptyDict:
        return PushNew(NewDict());
      case kDict: {
        IOTX_ASSIGN_OR_RETURN(auto items, PopMark());
        IOTX_RETURN_IF_ERROR(PushNew(NewDict()));
        return AddToContainer(std::move(items), true);
      }
      case kEmptyList:
        return PushNew(Value{Opaque{"a list", true}});
      case kList: {
        IOTX_RETURN_IF_ERROR(PopMark());
        return PushNew(Value{Opaque{"a list", true}});
      }
      case kEmptySet:
        return PushNew(Value{Opaque{"a set", true}});
      case kFrozenSet: {
        IOTX_RETURN_IF_ERROR(PopMark());
        return PushNew(Value{Opaque{"a frozenset", false}});
      }
      case kAppend: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr item, Pop());
        return AddToContainer({std::move(item)}, false);
      }
      case kAppends:
      case kAddItems: {
        IOTX_ASSIGN_OR_RETURN(auto items, PopMark());
        return AddToContainer(std::move(items), false);
      }
      case kSetItem: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr value, Pop());
        IOTX_ASSIGN_OR_RETURN(ValuePtr key, Pop());
        return AddToContainer({std::move(key), std::move(value)}, true);
      }
      case kSetItems: {
        IOTX_ASSIGN_OR_RETURN(auto items, PopMark());
        return AddToContainer(std::move(items), true);
      }
      case kBinPut: {
        IOTX_ASSIGN_OR_RETURN(uint64_t index, TakeUint(1));
        return Memoize(index);
      }
      case kLongBinPut: {
        IOTX_ASSIGN_OR_RETURN(uint64_t index, TakeUint(4));
        return Memoize(index);
      }
      case kMemoize:
        return Memoize(memo_.size());
      case kBinGet: {
        IOTX_ASSIGN_OR_RETURN(uint64_t index, TakeUint(1));
        return Recall(index);
      }
      case kLongBinGet: {
        IOTX_ASSIGN_OR_RETURN(uint64_t index, TakeUint(4));
        return Recall(index);
      }
      case kGlobal: {
        IOTX_ASSIGN_OR_RETURN(std::string_view module, TakeLine());
        IOTX_ASSIGN_OR_RETURN(std::string_view name, TakeLine());
        return PushGlobal(module, name);
      }
      case kStackGlobal: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr name, Pop());
        IOTX_ASSIGN_OR_RETURN(ValuePtr module, Pop());
        const Str* module_str = std::get_if<Str>(&module->v);
        const Str* name_str = std::get_if<Str>(&name->v);
        if (module_str == nullptr || name_str == nullptr)
          return Format("STACK_GLOBAL needs two strs");
        return PushGlobal(module_str->utf8, name_str->utf8);
      }
      case kReduce: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr args, Pop());
        IOTX_ASSIGN_OR_RETURN(ValuePtr callable, Pop());
        const Global* global = std::get_if<Global>(&callable->v);
        const Tuple* tuple = std::get_if<Tuple>(&args->v);
        if (global == nullptr || tuple == nullptr) {
          return Format("REDUCE calls " + Describe(*callable) + " with " + Describe(*args) +
                        "; expected an allowed global and a tuple");
        }
        auto result = Call(*global, *tuple, owner_);
        if (!result) return Fail(WithKey(std::move(result).error()));
        return PushNew(std::move(*result));
      }
      case kBuild: {
        IOTX_ASSIGN_OR_RETURN(ValuePtr state, Pop());
        IOTX_ASSIGN_OR_RETURN(ValuePtr target, Top());
        Status status = SetState(*target, *state, owner_);
        if (!status) return Fail(WithKey(std::move(status).error()));
        return Ok();
      }
      case kNextBuffer:
      case kReadOnlyBuffer:
        return Format("out-of-band buffers are not supported; pickle with the buffers in-band");
      default:
        return Format("opcode 0x" + Hex(op_) + " (" + std::string(OpcodeName(op_)) +
                      ") is not supported: expected a protocol 2-5 pickle of numpy arrays");
    }
  }

  static std::string Hex(uint8_t byte) {
    static const char* kDigits = "0123456789abcdef";
    return {kDigits[byte >> 4], kDigits[byte & 15]};
  }

  std::span<const std::byte> file_;
  std::shared_ptr<const void> owner_;
  std::string_view file_name_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  uint8_t op_ = 0;
  bool stopped_ = false;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, ValuePtr> memo_;
  size_t values_ = 0;
  std::string key_hint_;
  ValuePtr result_;
};

}  // namespace

Expected<std::vector<Tensor>> ParsePickle(std::span<const std::byte> file,
                                          std::shared_ptr<const void> owner,
                                          std::string_view file_name) {
  IOTX_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                        Machine(file, std::move(owner), file_name).Run());
  for (Tensor& tensor : tensors) tensor.file = std::string(file_name);
  return tensors;
}

Expected<std::vector<Tensor>> ReadPickle(const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file, files::MappedFile::Open(path));
  return ParsePickle(file->bytes(), file, path.string());
}

}  // namespace iotx::io
