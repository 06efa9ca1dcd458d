#include "io/safetensors_header.h"

#include <nlohmann/json.hpp>
#include <new>
#include <unordered_set>

#include "core/text.h"
#include "io/descr.h"

namespace iotx::io {
namespace {

// Real headers nest three levels (file, tensor, shape); unknown tensor fields may nest more.
constexpr int kMaxJsonDepth = 64;

// The SAX events of nlohmann's parser, turned into a SafetensorsHeader. Each handler returns
// false to stop the parse; `error_` then says why.
class HeaderReader {
 public:
  using json = nlohmann::json;

  bool null() { return Scalar("null"); }
  bool boolean(bool) { return Scalar("a bool"); }
  bool number_integer(json::number_integer_t value) {
    if (value >= 0) return number_unsigned(static_cast<uint64_t>(value));
    return Scalar("a negative number");
  }
  bool number_unsigned(json::number_unsigned_t value) {
    if (state_ == State::kShape || state_ == State::kOffsets) {
      if (state_ == State::kShape) {
        if (current_.shape.size() >= kMaxRank) {
          return Fail("shape has more than " + std::to_string(kMaxRank) + " dimensions",
                      current_.name);
        }
        if (value > static_cast<uint64_t>(INT64_MAX)) {
          return Fail("shape dimension " + std::to_string(value) + " exceeds 2^63 - 1",
                      current_.name);
        }
        current_.shape.push_back(static_cast<int64_t>(value));
      } else {
        if (offsets_seen_ >= 2) return Fail("data_offsets must be [begin, end]", current_.name);
        (offsets_seen_++ == 0 ? current_.begin : current_.end) = value;
      }
      return true;
    }
    return Scalar("a number");
  }
  bool number_float(json::number_float_t, const json::string_t&) {
    return Scalar("a non-integer number");
  }
  bool string(json::string_t& value) {
    if (state_ == State::kMetadata) {
      header_.metadata->emplace_back(std::move(pending_key_), std::move(value));
      return true;
    }
    if (state_ == State::kTensor && field_ == Field::kDType) {
      current_.dtype = std::move(value);
      have_dtype_ = true;
      return true;
    }
    return Scalar("a string");
  }
  bool binary(json::binary_t&) { return Scalar("binary"); }

  bool start_object(std::size_t) {
    if (++depth_ > kMaxJsonDepth)
      return Fail("nested deeper than " + std::to_string(kMaxJsonDepth));
    keys_.emplace_back();
    switch (state_) {
      case State::kStart:
        state_ = State::kTop;
        return true;
      case State::kTop:
        if (pending_key_ == "__metadata__") {
          header_.metadata.emplace();
          state_ = State::kMetadata;
        } else {
          current_ = SafetensorsEntry{};
          current_.name = std::move(pending_key_);
          have_dtype_ = have_shape_ = have_offsets_ = false;
          state_ = State::kTensor;
        }
        return true;
      case State::kTensor:
        if (field_ == Field::kOther) return Skip();
        break;
      case State::kSkip:
        ++skip_depth_;
        return true;
      default:
        break;
    }
    return Scalar("an object");
  }

  bool key(json::string_t& key) {
    if (!keys_.back().insert(key).second) {
      // Named by the entry it is repeated in: a tensor's field, a __metadata__ key, or a tensor.
      const std::string in = state_ == State::kTop        ? key
                             : state_ == State::kMetadata ? std::string("__metadata__")
                                                          : current_.name;
      return Fail("key \"" + key + "\" appears twice", in);
    }
    if (state_ == State::kTensor) {
      field_ = key == "dtype"          ? Field::kDType
               : key == "shape"        ? Field::kShape
               : key == "data_offsets" ? Field::kOffsets
                                       : Field::kOther;  // ignored, as the reference does
    }
    pending_key_ = std::move(key);
    return true;
  }

  bool end_object() {
    --depth_;
    keys_.pop_back();
    switch (state_) {
      case State::kTop:
        state_ = State::kDone;
        return true;
      case State::kMetadata:
        state_ = State::kTop;
        return true;
      case State::kTensor:
        for (auto [have, name] : {std::pair{have_dtype_, "dtype"}, std::pair{have_shape_, "shape"},
                                  std::pair{have_offsets_, "data_offsets"}}) {
          if (!have) return Fail(std::string("tensor lacks \"") + name + "\"", current_.name);
        }
        header_.tensors.push_back(std::move(current_));
        state_ = State::kTop;
        return true;
      case State::kSkip:
        return EndSkip();
      default:
        return Fail("unexpected end of object");
    }
  }

  bool start_array(std::size_t) {
    if (++depth_ > kMaxJsonDepth)
      return Fail("nested deeper than " + std::to_string(kMaxJsonDepth));
    if (state_ == State::kTensor) {
      if (field_ == Field::kShape) {
        current_.shape.clear();
        state_ = State::kShape;
        return true;
      }
      if (field_ == Field::kOffsets) {
        offsets_seen_ = 0;
        state_ = State::kOffsets;
        return true;
      }
      if (field_ == Field::kOther) return Skip();
    }
    if (state_ == State::kSkip) {
      ++skip_depth_;
      return true;
    }
    return Scalar("an array");
  }

  bool end_array() {
    --depth_;
    if (state_ == State::kShape) {
      have_shape_ = true;
      state_ = State::kTensor;
      return true;
    }
    if (state_ == State::kOffsets) {
      if (offsets_seen_ != 2) return Fail("data_offsets must be [begin, end]", current_.name);
      have_offsets_ = true;
      state_ = State::kTensor;
      return true;
    }
    if (state_ == State::kSkip) return EndSkip();
    return Fail("unexpected end of array");
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return Fail("not valid JSON: " + std::string(JsonErrorText(e.what())));
  }

  Expected<SafetensorsHeader> Result(bool parsed) {
    if (!parsed || !error_.empty()) {
      return iotx::Fail(
          Error(ErrorCode::kSafetensorsFormat, "header: " + error_).AtKey(error_key_));
    }
    return std::move(header_);
  }

 private:
  enum class State { kStart, kTop, kMetadata, kTensor, kShape, kOffsets, kSkip, kDone };
  enum class Field { kDType, kShape, kOffsets, kOther };

  bool Fail(std::string message, std::string key = {}) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_key_ = std::move(key);
    }
    return false;
  }

  // A scalar, or a container where none belongs: say what was expected where.
  bool Scalar(const char* what) {
    switch (state_) {
      case State::kStart:
        return Fail(std::string("is ") + what + ", expected a JSON object");
      case State::kTop:
        if (pending_key_ == "__metadata__" && std::string_view(what) == "null") return true;
        if (pending_key_ == "__metadata__") {
          return Fail(std::string("__metadata__ is ") + what + ", expected an object of strings");
        }
        return Fail(std::string("tensor entry is ") + what + ", expected an object", pending_key_);
      case State::kMetadata:
        return Fail(std::string("__metadata__ value is ") + what + ", expected a string",
                    pending_key_);
      case State::kTensor:
        if (field_ == Field::kOther) return true;  // an ignored field's scalar value
        return Fail("\"" + pending_key_ + "\" is " + what + ", expected " +
                        (field_ == Field::kDType ? "a string" : "an array of integers"),
                    current_.name);
      case State::kShape:
      case State::kOffsets:
        return Fail(std::string(state_ == State::kShape ? "shape" : "data_offsets") + " holds " +
                        what + ", expected non-negative integers",
                    current_.name);
      case State::kSkip:
        return true;
      case State::kDone:
        break;
    }
    return Fail("unexpected value after the header object");
  }

  // Enters an ignored field's container (the opening event already counted in depth_).
  bool Skip() {
    state_ = State::kSkip;
    skip_depth_ = 1;
    return true;
  }
  bool EndSkip() {
    if (--skip_depth_ == 0) {
      state_ = State::kTensor;
    }
    return true;
  }

  SafetensorsHeader header_;
  SafetensorsEntry current_;
  State state_ = State::kStart;
  Field field_ = Field::kOther;
  std::string pending_key_;
  std::vector<std::unordered_set<std::string>> keys_;  // per open object
  bool have_dtype_ = false, have_shape_ = false, have_offsets_ = false;
  int offsets_seen_ = 0;
  int depth_ = 0;
  int skip_depth_ = 0;
  std::string error_;
  std::string error_key_;
};

}  // namespace

Expected<SafetensorsHeader> ParseSafetensorsHeader(std::string_view json) {
  // nlohmann's lexer takes a NUL byte for the end of the input, so '{...}\0junk' would parse;
  // JSON has no raw NUL anywhere (inside a string it must be escaped as \u0000).
  if (const size_t nul = json.find('\0'); nul != std::string_view::npos) {
    return Fail(ErrorCode::kSafetensorsFormat,
                "header: not valid JSON: NUL byte at offset " + std::to_string(nul) +
                    " of the header (JSON text holds none; the writer pads with spaces)");
  }
  HeaderReader reader;
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(json, &reader);
  } catch (const std::bad_alloc&) {  // the only exception the SAX parser lets through
    return Fail(ErrorCode::kOutOfMemory, "out of memory reading a safetensors header of " +
                                             std::to_string(json.size()) + " bytes");
  }
  return reader.Result(parsed);
}

}  // namespace iotx::io
