// Telling safetensors, pickles and .npy apart (issue 18, item 5): a safetensors file whose
// header length has 0x80 in its low byte starts with the pickle PROTO opcode, and must still be
// read as safetensors; pickles of every protocol must still be read as pickles.
#include "io/tensor_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/pickle.h"
#include "io/safetensors.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace iotx::io {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// A safetensors file whose header is `json` padded with spaces to `length` bytes.
std::string Safetensors(const std::string& json, size_t length, const std::string& data) {
  std::string header = json;
  header.resize(length, ' ');
  std::string out;
  for (size_t i = 0; i < 8; ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + header + data;
}

TEST(TensorFormatTest, HeaderLengthsStartingWithThePickleOpcodeAreSafetensors) {
  const std::string json = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  // Every header length with 0x80 as its first byte, up to 4 KiB: 128, 384, 640, ...
  for (size_t length = 128; length < 4096; length += 256) {
    SCOPED_TRACE(length);
    const std::string file = Safetensors(json, length, "abcd");
    ASSERT_EQ(static_cast<unsigned char>(file[0]), 0x80);
    EXPECT_EQ(DetectTensorFileFormat(Bytes(file), "weights.bin"), TensorFileFormat::kSafetensors);
    EXPECT_EQ(DetectTensorFileFormat(Bytes(file), "w.safetensors"),
              TensorFileFormat::kSafetensors);
    EXPECT_TRUE(ParseSafetensors(Bytes(file), nullptr, "weights.bin"));
  }
}

TEST(TensorFormatTest, IotxReadsBackWhatItWritesForEveryNameLength) {
  test::TempDir dir;
  const std::vector<std::byte> data(4, std::byte{7});
  // Name lengths 1..200 cover every header length the writer's padding produces.
  for (size_t name_length = 1; name_length <= 200; ++name_length) {
    SCOPED_TRACE(name_length);
    const std::string name(name_length, 'n');
    Tensor tensor;
    tensor.name = name;
    tensor.dtype = "F32";
    tensor.descr = "<f4";
    tensor.element_bits = 32;
    tensor.shape = Dims{1};
    tensor.stored = data;
    const std::string path = dir / "out.safetensors";
    ASSERT_TRUE(WriteSafetensors(path, std::span<const Tensor>(&tensor, 1), std::nullopt));
    const std::string bytes = test::ReadFile(path);
    EXPECT_EQ(DetectTensorFileFormat(Bytes(bytes), dir / "no_extension"),
              TensorFileFormat::kSafetensors);
  }
}

TEST(TensorFormatTest, PicklesOfEveryProtocolStayPickles) {
  test::TempDir dir;
  const std::vector<std::byte> data(24, std::byte{1});
  Tensor a;
  a.name = "a";
  a.descr = "<f4";
  a.element_bits = 32;
  a.shape = {2, 3};
  a.stored = data;
  const std::string path = dir / "in.safetensors";  // a misleading name does not matter
  ASSERT_TRUE(WritePickle(path, std::span<const Tensor>(&a, 1)));
  EXPECT_EQ(DetectTensorFileFormat(Bytes(test::ReadFile(path)), path), TensorFileFormat::kPickle);
  if (test::PythonHasNumpy()) {
    const test::ProcessResult made = test::RunPython(R"PY(
import pickle, sys, numpy as np
for p in range(0, pickle.HIGHEST_PROTOCOL + 1):
    for name in ('a', 'n' * 65, 'x' * 300):
        sys.stdout.write(pickle.dumps({name: np.zeros((2, 3), np.float32)}, protocol=p).hex() + '\n')
)PY");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    size_t lines = 0;
    for (size_t at = 0; at < made.out.size();) {
      const size_t end = made.out.find('\n', at);
      std::string bytes;
      for (size_t i = at; i + 1 < end; i += 2) {
        bytes += static_cast<char>(std::stoi(made.out.substr(i, 2), nullptr, 16));
      }
      at = end + 1;
      ++lines;
      EXPECT_EQ(DetectTensorFileFormat(Bytes(bytes), "in.p"), TensorFileFormat::kPickle) << lines;
    }
    EXPECT_GE(lines, 6u);
  }
}

TEST(TensorFormatTest, NpyMagicAndNamesDecideTheRest) {
  EXPECT_EQ(DetectTensorFileFormat(Bytes(std::string("\x93NUMPY\x01\x00", 8)), "x.p"),
            TensorFileFormat::kNpy);
  // Broken safetensors named so: its reader says what is wrong.
  EXPECT_EQ(DetectTensorFileFormat(Bytes(std::string(8, '\xff') + "{}"), "m.safetensors"),
            TensorFileFormat::kSafetensors);
  // Anything else is the pickle reader's to refuse with a message.
  EXPECT_EQ(DetectTensorFileFormat(Bytes("cos\nsystem\n"), "in.bin"), TensorFileFormat::kPickle);
  EXPECT_EQ(DetectTensorFileFormat(Bytes(""), "in.bin"), TensorFileFormat::kPickle);
  // A length that fits, but the bytes it spans are no JSON object.
  EXPECT_EQ(DetectTensorFileFormat(Bytes(Safetensors("[1]", 3, "")), "in.bin"),
            TensorFileFormat::kPickle);
}

}  // namespace
}  // namespace iotx::io
