// safetensors cross-checks against an independent writer in Python (json + struct, following
// the reference implementation's rules; Debian has no safetensors package): files it writes
// are read correctly, and iotx writes byte-identical files for the same tensors.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bytes_equal.h"
#include "tensor_bytes.h"
#include "io/safetensors.h"
#include "support/process.h"
#include "support/reference_transpose.h"
#include "support/temp_dir.h"

namespace iotx::io {
namespace {

using test::ReadFile;
using test::RunPython;
using test::TempDir;

// The reference writer's rules, written down independently: tensors sorted by descending
// dtype (declaration order = alignment) then name, laid out contiguously, compact JSON with
// __metadata__ first, padded with spaces to a multiple of 8.
constexpr const char* kPythonSafetensors = R"PY(
import json, struct
ORDER = ['BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
         'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'C64',
         'F64', 'I64', 'U64']
BITS = {'BOOL': 8, 'F4': 4, 'F6_E2M3': 6, 'F6_E3M2': 6, 'C64': 64}
def bits(dtype):
    return BITS.get(dtype) or int(''.join(c for c in dtype.split('_')[0] if c.isdigit()))
def nbytes(dtype, shape):
    n = 1
    for s in shape: n *= s
    return n * bits(dtype) // 8
def serialize(tensors, metadata=None):
    items = sorted(tensors.items(), key=lambda kv: (-ORDER.index(kv[1][0]), kv[0].encode()))
    header, off, blobs = {}, 0, []
    if metadata is not None:
        header['__metadata__'] = metadata
    for name, (dtype, shape, data) in items:
        assert len(data) == nbytes(dtype, shape)
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [off, off + len(data)]}
        off += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(',', ':'), ensure_ascii=False).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    return struct.pack('<Q', len(h)) + h + b''.join(blobs)
)PY";

class SafetensorsPythonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunPython("import json, struct").exit_code != 0) GTEST_SKIP() << "no python3";
  }
};

TEST_F(SafetensorsPythonTest, ReadsWhatAnIndependentWriterWrites) {
  TempDir dir;
  auto made = RunPython(std::string(kPythonSafetensors) + R"PY(
import sys, os, random, json, struct
d = sys.argv[1]
rng = random.Random(3)
def blob(dtype, shape): return bytes(rng.randrange(256) for _ in range(nbytes(dtype, shape)))
tensors = {}
for i, dtype in enumerate(ORDER):
    shape = [2, 4] if bits(dtype) in (4, 6) else [3, 2]
    tensors[f'{dtype.lower()}.weight'] = (dtype, shape, blob(dtype, shape))
tensors['scalar'] = ('F32', [], blob('F32', []))
tensors['empty'] = ('F16', [0, 5], b'')
tensors['empty2'] = ('I64', [3, 0], b'')
tensors['name with \u00fc and "quotes"\n'] = ('U8', [5], blob('U8', [5]))
files = {
    'reference.safetensors': serialize(tensors, {'format': 'pt', '\u00e9': 'v\u00e9'}),
    'no_metadata.safetensors': serialize(tensors),
    'empty.safetensors': serialize({}),
}
# Another writer's style: header in name order, spaces, unknown fields, no padding, data
# in reverse order.
items = sorted(tensors.items())
header, off, blobs = {}, 0, []
for name, (dtype, shape, data) in reversed(items):
    header[name] = {'data_offsets': [off, off + len(data)], 'shape': shape, 'dtype': dtype,
                    'extra': {'note': [1, 2]}}
    off += len(data); blobs.append(data)
h = json.dumps(dict(sorted(header.items())), indent=1).encode()
files['other_writer.safetensors'] = struct.pack('<Q', len(h)) + h + b''.join(blobs)
manifest = []
for fname, data in files.items():
    open(f'{d}/{fname}', 'wb').write(data)
    n = struct.unpack('<Q', data[:8])[0]
    hdr = json.loads(data[8:8 + n])
    meta = hdr.pop('__metadata__', None)
    for name, info in sorted(hdr.items(), key=lambda kv: kv[1]['data_offsets']):
        b, e = info['data_offsets']
        manifest.append(' '.join([fname, name.encode().hex(), info['dtype'],
                                  json.dumps(info['shape']).replace(' ', ''),
                                  data[8 + n + b:8 + n + e].hex() or '-']))
    manifest.append(' '.join([fname, 'META', json.dumps(meta, ensure_ascii=True).encode().hex()]))
print('\n'.join(manifest))
)PY",
                        {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::map<std::string, std::vector<std::vector<std::string>>> expected;
  std::istringstream lines(made.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    std::string part;
    while (fields >> part) parts.push_back(part);
    expected[parts[0]].push_back(parts);
  }
  ASSERT_EQ(expected.size(), 4u);
  auto from_hex = [](const std::string& hex) {
    std::string out;
    if (hex == "-") return out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return out;
  };
  for (const auto& [file, rows] : expected) {
    SCOPED_TRACE(file);
    auto st = ReadSafetensors(dir / file);
    ASSERT_TRUE(st) << st.error().ToString();
    ASSERT_EQ(st->tensors.size() + 1, rows.size());
    for (size_t i = 0; i < st->tensors.size(); ++i) {
      const auto& row = rows[i];
      const Tensor& t = st->tensors[i];
      EXPECT_EQ(t.name, from_hex(row[1]));
      EXPECT_EQ(t.dtype, row[2]);
      std::string shape = ToString(t.shape);
      shape.erase(std::remove(shape.begin(), shape.end(), ' '), shape.end());
      EXPECT_EQ(shape, row[3]);
      EXPECT_EQ(test::COrderBytes(t), from_hex(row[4])) << t.name;
    }
    // Metadata, as Python's json.dumps(ensure_ascii=True) of a dict (or null).
    std::string meta = "null";
    if (st->metadata) {
      auto r = RunPython(
          "import sys, json; print(json.dumps(dict(json.loads(sys.stdin.read())), "
          "ensure_ascii=True), end='')",
          {}, [&] {
            std::string pairs = "[";
            for (const auto& [k, v] : *st->metadata) {
              if (pairs.size() > 1) pairs += ",";
              pairs += "[\"" + k + "\",\"" + v + "\"]";
            }
            return pairs + "]";
          }());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      meta = r.out;
    }
    EXPECT_EQ(meta, from_hex(rows.back()[2]));
  }
}

// iotx's writers (streaming and mapped) produce exactly the bytes of the independent writer.
TEST_F(SafetensorsPythonTest, WritesWhatTheReferenceWriterWrites) {
  TempDir dir;
  struct Spec {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Spec> specs = {
      {"b", "F32", {2, 3}},     {"a", "F32", {1}},  {"mask", "BOOL", {4}},
      {"emb", "BF16", {3, 5}},  {"z", "U8", {7}},   {"q", "F4", {2, 3}},
      {"k", "F8_E4M3", {2}},    {"i", "I64", {2}},  {"c", "C64", {1}},
      {"empty", "F16", {0, 4}}, {"s", "F64", {}},   {"\u00fc \"x\"\t", "I16", {3}},
      {"h", "U16", {1, 1, 1}},  {"aa", "F32", {2}},
  };
  std::vector<std::vector<std::byte>> storage;
  std::vector<Tensor> tensors;
  std::string spec_text;
  for (size_t i = 0; i < specs.size(); ++i) {
    const Spec& s = specs[i];
    size_t bits = *SafetensorsDTypeBits(s.dtype);
    size_t count = static_cast<size_t>(CheckedProduct(s.shape).value());
    storage.push_back(test::RandomBytes(count * bits / 8, 40 + i));
    tensors.push_back(test::SafetensorsView(s.name, s.dtype, Dims(s.shape), storage.back()));
    std::string hex_name, hex_data;
    for (unsigned char c : s.name)
      hex_name += "0123456789abcdef"[c >> 4], hex_name += "0123456789abcdef"[c & 15];
    for (std::byte b : storage.back()) {
      hex_data += "0123456789abcdef"[static_cast<uint8_t>(b) >> 4];
      hex_data += "0123456789abcdef"[static_cast<uint8_t>(b) & 15];
    }
    std::string shape = ToString(s.shape);
    shape.erase(std::remove(shape.begin(), shape.end(), ' '), shape.end());
    spec_text +=
        hex_name + " " + s.dtype + " " + shape + " " + (hex_data.empty() ? "-" : hex_data) + "\n";
  }
  SafetensorsMetadata metadata = {{"format", "pt"}, {"note", "line\nbreak \"quoted\" \u00e9"}};
  test::WriteFile(dir / "spec.txt", spec_text);

  ASSERT_TRUE(WriteSafetensors(dir / "streamed.safetensors", tensors, metadata));
  // The layout filled in pieces, last tensor first, as the producer's pipeline may.
  auto layout = SafetensorsLayout(tensors, metadata);
  ASSERT_TRUE(layout) << layout.error().ToString();
  auto pieces = files::AtomicFile::Create(dir / "pieces.safetensors");
  ASSERT_TRUE(pieces);
  ASSERT_TRUE(pieces->Reserve(layout->size));
  for (size_t i = tensors.size(); i-- > 0;) {
    ASSERT_EQ(layout->data_sizes[i], tensors[i].stored.size());
    ASSERT_TRUE(pieces->WriteAt(layout->data_offsets[i], tensors[i].stored));
  }
  ASSERT_TRUE(pieces->WriteAt(0, layout->literals.at(0).bytes));
  ASSERT_TRUE(pieces->Commit());
  ASSERT_TRUE(WriteSafetensors(dir / "bare.safetensors", tensors, std::nullopt));

  auto r = RunPython(std::string(kPythonSafetensors) + R"PY(
import sys, json
d = sys.argv[1]
tensors = {}
for line in open(d + '/spec.txt', encoding='utf-8').read().splitlines():
    name, dtype, shape, data = line.split(' ')
    tensors[bytes.fromhex(name).decode()] = (dtype, json.loads(shape),
                                             b'' if data == '-' else bytes.fromhex(data))
meta = {'format': 'pt', 'note': 'line\nbreak "quoted" \u00e9'}
want = serialize(tensors, meta)
for f in ('streamed', 'pieces'):
    assert open(f'{d}/{f}.safetensors', 'rb').read() == want, f
assert open(f'{d}/bare.safetensors', 'rb').read() == serialize(tensors), 'bare'
print('ok')
)PY",
                     {dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");

  // The reader gets everything back, with metadata in order.
  auto back = ReadSafetensors(dir / "pieces.safetensors");
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->metadata, metadata);
  EXPECT_EQ(back->tensors.size(), tensors.size());
}

}  // namespace
}  // namespace iotx::io
