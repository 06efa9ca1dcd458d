// .npy cross-checks against numpy itself: files np.save writes are read correctly, and files
// iotx writes load in numpy with the same dtype, shape and bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bytes_equal.h"
#include "tensor_bytes.h"
#include "files/mapped_file.h"
#include "io/npy.h"
#include "support/process.h"
#include "support/reference_transpose.h"
#include "support/temp_dir.h"

namespace iotx::io {
namespace {

using test::ReadFile;
using test::RunPython;
using test::TempDir;

// Writes NAME.npy with numpy, plus NAME.expect: the bytes a reader must hand out (C order,
// little-endian), computed by numpy; and one manifest line "NAME DESCR SHAPE" where DESCR is
// the little-endian spelling the reader reports.
constexpr const char* kMakeNumpyFiles = R"PY(
import sys, numpy as np
from numpy.lib import format as fmt
out = sys.argv[1]
rng = np.random.default_rng(5)
def rand(shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.frombuffer(rng.bytes(n), dtype=dtype).reshape(shape).copy()
cases = {}
for d in ['|b1', '|i1', '|u1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8', '<f2', '<f4', '<f8',
          '<c8', '<c16', '|V2', '|S5', '<U3', '<M8[ns]', '<m8[s]']:
    a = rand((3, 5), d) if d != '|b1' else (rand((3, 5), 'u1') & 1).astype('?')
    cases['dtype_' + d.replace('<', 'le').replace('|', 'na').replace('[', '_').replace(']', '')] = a
cases['scalar_f4'] = np.array(3.5, dtype='<f4')
cases['scalar_u1'] = np.array(7, dtype='|u1')
cases['empty_1d'] = np.zeros((0,), dtype='<f4')
cases['empty_3d'] = np.zeros((3, 0, 2), dtype='<i8')
cases['big_1d'] = rand((1 << 20,), '<f4')
cases['rank8'] = rand((2, 1, 3, 1, 2, 2, 1, 3), '<i2')
cases['huge_dims'] = np.zeros((1 << 40, 0, 3), dtype='<f8')
cases['fortran_f4'] = np.asfortranarray(rand((2, 3, 4), '<f4'))
cases['fortran_u1'] = np.asfortranarray(rand((7, 5), '|u1'))
cases['fortran_c16'] = np.asfortranarray(rand((3, 4), '<c16'))
cases['big_endian_f4'] = rand((4, 6), '>f4')
cases['big_endian_i8'] = rand((5,), '>i8')
cases['big_endian_c8'] = rand((3, 2), '>c8')
cases['big_endian_U2'] = rand((4,), '>U2')
cases['big_endian_fortran_i2'] = np.asfortranarray(rand((3, 5), '>i2'))
manifest = []
def emit(name, a, version=None):
    with open(f'{out}/{name}.npy', 'wb') as f:
        fmt.write_array(f, a, version=version)
    le = a.dtype.newbyteorder('<') if a.dtype.byteorder == '>' else a.dtype
    with open(f'{out}/{name}.expect', 'wb') as f:
        f.write(np.ascontiguousarray(a.astype(le)).tobytes())
    shape = '[' + ', '.join(str(s) for s in a.shape) + ']'
    manifest.append(f'{name} {le.str} {shape}')
for name, a in cases.items():
    emit(name, a)
for v in [(1, 0), (2, 0), (3, 0)]:
    emit(f'version{v[0]}_f8', rand((4, 3), '<f8'), v)
    emit(f'version{v[0]}_fortran', np.asfortranarray(rand((4, 3), '<i4')), v)
# ml_dtypes' bfloat16 saves as '<V2'; numpy itself writes '|V2', so patch the descr in place.
a = rand((2, 8), 'V2')
emit('bf16_le_V2', a)
data = open(f'{out}/bf16_le_V2.npy', 'rb').read().replace(b"'|V2'", b"'<V2'", 1)
open(f'{out}/bf16_le_V2.npy', 'wb').write(data)
manifest[-1] = manifest[-1].replace('|V2', '<V2')
print('\n'.join(manifest))
)PY";

class NpyNumpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy not available";
  }
};

TEST_F(NpyNumpyTest, ReadsWhatNumpyWrites) {
  TempDir dir;
  auto made = RunPython(kMakeNumpyFiles, {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::istringstream manifest(made.out);
  std::string line;
  int cases = 0;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string name, descr, shape;
    fields >> name >> descr;
    std::getline(fields, shape);
    shape = shape.substr(1);
    SCOPED_TRACE(name);
    auto array = ReadNpy(dir / (name + ".npy"));
    ASSERT_TRUE(array) << array.error().ToString();
    EXPECT_EQ(array->descr, descr);
    EXPECT_EQ(ToString(array->shape), shape);
    std::string expect = ReadFile(dir / (name + ".expect"));
    EXPECT_EQ(test::COrderBytes(*array), expect);
    ++cases;
  }
  EXPECT_GE(cases, 40);
}

TEST_F(NpyNumpyTest, PlainFilesAreReadWithoutACopy) {
  TempDir dir;
  auto made =
      RunPython("import sys, numpy as np; np.save(sys.argv[1], np.arange(1000, dtype='<f4'))",
                {dir / "a.npy"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto array = ReadNpy(dir / "a.npy");
  ASSERT_TRUE(array);
  // The data lies inside the mapping that `owner` holds, 128 bytes (the header) from its start.
  auto mapping = std::static_pointer_cast<const files::MappedFile>(array->owner);
  EXPECT_EQ(array->stored.data(), mapping->bytes().data() + 128);
  EXPECT_TRUE(array->is_c_order());
}

// numpy loads what iotx writes: same dtype, shape and bytes; and for descrs numpy writes
// itself, the file is byte-for-byte what np.save writes for the loaded array.
TEST_F(NpyNumpyTest, NumpyLoadsWhatIotxWrites) {
  TempDir dir;
  struct Case {
    std::string descr;
    size_t itemsize;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {
      {"<f4", 4, {2, 3}},         {"|u1", 1, {17}},         {"<f8", 8, {}},
      {"<V2", 2, {4, 5}},         {"|b1", 1, {3, 3}},       {"<c8", 8, {2, 2, 2}},
      {"<i8", 8, {0, 4}},         {"<f2", 2, {1, 1, 1, 1}}, {"|V1", 1, {6}},
      {"<u2", 2, {1 << 16}},      {"|S3", 3, {4}},          {"<M8[ns]", 8, {2}},
      {"<f4", 4, {123456789, 0}},
  };
  std::string script = R"PY(
import sys, numpy as np
d = sys.argv[1]
for i, (descr, shape) in enumerate(zip(sys.argv[2::2], sys.argv[3::2])):
    a = np.load(f'{d}/{i}.npy')
    raw = open(f'{d}/{i}.raw', 'rb').read()
    want_descr = np.dtype(descr).str
    assert a.dtype.str == want_descr, (i, a.dtype.str, want_descr)
    assert str(list(a.shape)) == shape, (i, a.shape, shape)
    assert a.tobytes() == raw, i
    import io
    buf = io.BytesIO(); np.save(buf, a)
    same = buf.getvalue() == open(f'{d}/{i}.npy', 'rb').read()
    assert same == (descr == want_descr), (i, descr)
print('ok', len(sys.argv[2::2]))
)PY";
  std::vector<std::string> args = {dir.path()};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    size_t count = 1;
    for (int64_t d : c.shape) count *= static_cast<size_t>(d);
    std::vector<std::byte> bytes = test::RandomBytes(count * c.itemsize, i);
    if (c.descr == "|b1") {
      for (std::byte& b : bytes) b &= std::byte{1};
    }
    const Tensor tensor = test::ViewTensor("t", c.descr, c.itemsize, Dims(c.shape), bytes);
    ASSERT_TRUE(WriteNpy(dir / (std::to_string(i) + ".npy"), tensor)) << c.descr;
    test::WriteFile(dir / (std::to_string(i) + ".raw"),
                    std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    args.push_back(c.descr);
    args.push_back(ToString(c.shape));
  }
  auto r = RunPython(script, args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok " + std::to_string(cases.size()) + "\n");
}

// The header bytes match numpy's own header writer for every shape form.
TEST_F(NpyNumpyTest, HeaderMatchesNumpyByteForByte) {
  std::vector<std::vector<int64_t>> shapes = {
      {},
      {0},
      {5},
      {2, 3},
      {12345678901234},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
      {64},
      {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24},
  };
  std::string script = R"PY(
import sys, io, ast
from numpy.lib import format as fmt
for descr, shape in zip(sys.argv[1::2], sys.argv[2::2]):
    f = io.BytesIO()
    fmt.write_array_header_1_0(f, {'descr': descr, 'fortran_order': False,
                                   'shape': tuple(ast.literal_eval(shape))})
    sys.stdout.write(f.getvalue().hex() + '\n')
)PY";
  std::vector<std::string> args;
  std::string expected;
  for (const std::string descr : {"<f4", "|u1", "<c16", "<M8[us]"}) {
    for (const auto& shape : shapes) {
      args.push_back(descr);
      args.push_back(ToString(shape));
      auto header = MakeNpyHeader(descr, shape);
      ASSERT_TRUE(header) << header.error().ToString();
      static const char* kHex = "0123456789abcdef";
      for (char c : *header) {
        expected += kHex[static_cast<uint8_t>(c) >> 4];
        expected += kHex[static_cast<uint8_t>(c) & 15];
      }
      expected += '\n';
      EXPECT_EQ(header->size() % 64, 0u);
    }
  }
  auto r = RunPython(script, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
}

// Where ParseDescr accepts a type string numpy agrees on its element size; where numpy
// refuses one, so does ParseDescr (it also refuses some numpy takes: objects, no size).
TEST_F(NpyNumpyTest, DescrSizesAgreeWithNumpy) {
  std::vector<std::string> candidates = {
      "|b1", "<b1",      "|b2",  "|i1", "<i2", ">i4", "=i8",  "<i3",     "|u1",
      "<u2", ">u8",      "<u16", "<f2", "<f4", ">f8", "<f16", "<f3",     "<f1",
      "<c8", "<c16",     "<c32", "<c4", "|V1", "|V2", "<V2",  "|V7",     "|V0",
      "|S1", "|S5",      "|S0",  "<U1", ">U3", "<U0", "<M8",  "<M8[ns]", "<m8[25s]",
      "<M4", "<M8[xyz]", "|O8",  "<q8", "f4",  "i8",  "V3",   "<f04",    "<f4 ",
  };
  std::string script =
      "import sys, numpy as np\nfor d in sys.argv[1:]:\n"
      "    try: print(np.dtype(d).itemsize)\n"
      "    except Exception: print('bad')\n";
  auto r = RunPython(script, candidates);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  for (const std::string& descr : candidates) {
    std::string numpy;
    ASSERT_TRUE(std::getline(lines, numpy));
    std::optional<DescrInfo> ours = ParseDescr(descr);
    if (numpy == "bad") {
      EXPECT_FALSE(ours) << descr;
    } else if (ours) {
      EXPECT_EQ(std::to_string(ours->itemsize), numpy) << descr;
    }
  }
}

// A tensor described as stored big-endian in Fortran order (as the readers describe such
// files) is written as the C-order, little-endian array numpy reads the same values from.
TEST_F(NpyNumpyTest, WriteNpyConvertsAStoredLayout) {
  TempDir dir;
  const std::vector<int64_t> shape = {3, 1000, 7};
  std::vector<std::byte> stored = test::RandomBytes(3u * 1000 * 7 * 2, 99);
  const std::optional<DescrInfo> info = ParseDescr(">u2");
  ASSERT_TRUE(info);
  const Tensor tensor = DescribeStored("w", ">u2", *info, FortranLayout(shape), stored, nullptr);
  EXPECT_FALSE(tensor.is_c_order());
  EXPECT_EQ(tensor.descr, "<u2");
  ASSERT_TRUE(WriteNpy(dir / "w.npy", tensor));
  test::WriteFile(dir / "w.raw",
                  std::string(reinterpret_cast<const char*>(stored.data()), stored.size()));
  auto r = RunPython(
      "import sys, numpy as np\n"
      "a = np.load(sys.argv[1] + '/w.npy')\n"
      "want = np.frombuffer(open(sys.argv[1] + '/w.raw', 'rb').read(), '>u2')"
      ".reshape((3, 1000, 7), order='F')\n"
      "assert a.dtype == np.dtype('<u2') and a.shape == (3, 1000, 7)\n"
      "assert (a == want).all() and a.flags.c_contiguous\n"
      "print('ok')",
      {dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

}  // namespace
}  // namespace iotx::io
