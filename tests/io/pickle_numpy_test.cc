// Pickle cross-checks against Python's pickle with numpy: what pickle.dump writes (protocols
// 2-5, numpy.core and numpy._core spellings) is read correctly; what iotx writes loads back
// into the same dict of arrays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bytes_equal.h"
#include "tensor_bytes.h"
#include "files/mapped_file.h"
#include "io/pickle.h"
#include "support/process.h"
#include "support/reference_transpose.h"
#include "support/temp_dir.h"

namespace iotx::io {
namespace {

using test::ReadFile;
using test::RunPython;
using test::TempDir;

// Writes pickles of one dict of arrays at every protocol, plus variants, and for every entry
// the bytes a reader must hand out (C order, little-endian) in E.bin. Manifest lines:
// "FILE E HEXNAME DESCR SHAPE", in each file's dict order.
constexpr const char* kMakePickles = R"PY(
import sys, io, pickle, types, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(11)
def rand(shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.frombuffer(rng.bytes(n), dtype=dtype).reshape(shape).copy()
arrays = {}
for d in ['|i1', '|u1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8', '<f2', '<f4', '<f8', '<c8',
          '<c16', '|V2', '|S5', '<U3']:
    arrays['dtype ' + d] = rand((3, 4), d)
arrays['bool'] = (rand((5,), 'u1') & 1).astype('?')
arrays['scalar'] = np.array(2.5, dtype='<f8')
arrays['empty'] = np.zeros((0, 3), dtype='<f4')
arrays['noncontiguous'] = rand((6, 8), '<i4')[::2, 1::3]
arrays['fortran'] = np.asfortranarray(rand((5, 7), '<f4'))
arrays['fortran3d'] = np.asfortranarray(rand((2, 3, 4), '<i2'))
arrays['big'] = rand((70000,), '<f4')
arrays['big_fortran'] = np.asfortranarray(rand((300, 301), '|u1'))
arrays['big_endian'] = rand((4, 5), '>f8')
arrays['big_endian_fortran'] = np.asfortranarray(rand((3, 4), '>i4'))
arrays['rank7'] = rand((2, 1, 3, 1, 2, 2, 3), '<u2')
arrays['huge_dims'] = np.zeros((1 << 33, 0, 70000), dtype='<f4')  # LONG1, BININT, BININT2
arrays['unicode key \u00fc\u4e2d'] = rand((2,), '<f4')
expect = {}
name_of = id
def expected(a):
    le = a.dtype.newbyteorder('<') if a.dtype.byteorder == '>' else a.dtype
    key = len(expect)
    expect[key] = name_of(a)
    with open(f'{out}/{key}.bin', 'wb') as f:
        f.write(np.ascontiguousarray(a).astype(le).tobytes())
    return f"{key} {le.str} [{', '.join(str(s) for s in a.shape)}]"
lines = {name: expected(a) for name, a in arrays.items()}
manifest = []
def emit(file, data, names):
    open(f'{out}/{file}', 'wb').write(data)
    for name in names:
        manifest.append(f"{file} {lines[name].split(' ')[0]} {name.encode().hex()} "
                        + ' '.join(lines[name].split(' ')[1:]))
for p in (2, 3, 4, 5):
    emit(f'p{p}.p', pickle.dumps(arrays, protocol=p), arrays)

# numpy 2 spells the module numpy._core: stand-ins registered under that name make pickle
# write it (the dump path only; the reader never imports anything).
real = {np.core.multiarray._reconstruct: ('numpy._core.multiarray', '_reconstruct'),
        np.core.numeric._frombuffer: ('numpy._core.numeric', '_frombuffer')}
fakes = {}
for func, (module, name) in real.items():
    mod = sys.modules.setdefault(module, types.ModuleType(module))
    fake = lambda *a: None
    fake.__module__, fake.__qualname__, fake.__name__ = module, name, name
    setattr(mod, name, fake)
    fakes[func] = fake
sys.modules.setdefault('numpy._core', types.ModuleType('numpy._core'))
korder = {}
class Respell(pickle.Pickler):
    def reducer_override(self, obj):
        if type(obj) is not np.ndarray:
            return NotImplemented
        if id(obj) in korder:
            base, axes = korder[id(obj)]
            return (fakes[np.core.numeric._frombuffer],
                    (pickle.PickleBuffer(base), base.dtype, base.shape, 'K', axes))
        r = obj.__reduce_ex__(self.protocol)
        return (fakes[r[0]],) + tuple(r[1:])
    def __init__(self, f, protocol):
        super().__init__(f, protocol=protocol)
        self.protocol = protocol
for p in (2, 5):
    buf = io.BytesIO()
    Respell(buf, p).dump(arrays)
    emit(f'core{p}.p', buf.getvalue(), arrays)
# numpy >= 2.1 pickles other dense stride orders as _frombuffer(buf, dtype, shape, 'K', axes).
base = rand((2, 3, 4), '<i4')
k = base.transpose(2, 0, 1)
korder[id(k)] = (base, (2, 0, 1))
lines['k'] = expected(k)
buf = io.BytesIO()
Respell(buf, 5).dump({'k': k})
emit('korder.p', buf.getvalue(), ['k'])
print('\n'.join(manifest))
)PY";

struct Entry {
  std::string expect_file;
  std::string name;
  std::string descr;
  std::string shape;
};

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

class PickleNumpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::PythonHasNumpy()) GTEST_SKIP() << "python3 with numpy not available";
  }
};

TEST_F(PickleNumpyTest, ReadsWhatPickleDumpsAtEveryProtocol) {
  TempDir dir;
  auto made = RunPython(kMakePickles, {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::map<std::string, std::vector<Entry>> files;
  std::istringstream manifest(made.out);
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream fields(line);
    std::string file, expect, hexname, descr, shape;
    fields >> file >> expect >> hexname >> descr;
    std::getline(fields, shape);
    files[file].push_back({expect + ".bin", FromHex(hexname), descr, shape.substr(1)});
  }
  ASSERT_EQ(files.size(), 7u);
  for (const auto& [file, entries] : files) {
    SCOPED_TRACE(file);
    auto arrays = ReadPickle(dir / file);
    ASSERT_TRUE(arrays) << arrays.error().ToString();
    ASSERT_EQ(arrays->size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& want = entries[i];
      const Tensor& got = (*arrays)[i];
      SCOPED_TRACE(want.name);
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(got.descr, want.descr);
      EXPECT_EQ(ToString(got.shape), want.shape);
      EXPECT_EQ(test::COrderBytes(got), ReadFile(dir / want.expect_file));
    }
  }
}

// Every protocol's arrays point into the mapped file: protocols 3-5 carry raw bytes, protocol 2
// latin-1 text, which is decoded only when the tensor is converted.
TEST_F(PickleNumpyTest, ArraysAreReadWithoutACopy) {
  TempDir dir;
  auto made = RunPython(
      "import sys, pickle, numpy as np\n"
      "a = np.arange(100000, dtype='<f4')\n"
      "for p in (2, 3, 4, 5):\n"
      "    open(f'{sys.argv[1]}/{p}.p', 'wb').write(pickle.dumps({'a': a}, protocol=p))\n",
      {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (int protocol : {2, 3, 4, 5}) {
    auto file = files::MappedFile::Open(dir / (std::to_string(protocol) + ".p"));
    ASSERT_TRUE(file);
    auto arrays = ParsePickle((*file)->bytes(), *file, "x.p");
    ASSERT_TRUE(arrays) << arrays.error().ToString();
    const Tensor& tensor = (*arrays)[0];
    const std::byte* data = tensor.stored.data();
    EXPECT_TRUE(data >= (*file)->bytes().data() &&
                data < (*file)->bytes().data() + (*file)->size())
        << protocol;
    EXPECT_EQ(tensor.layout.latin1, protocol == 2);
    EXPECT_EQ(tensor.byte_size(), 400000u);
    // The array keeps the mapping alive on its own.
    EXPECT_EQ(tensor.owner != nullptr, true);
  }
}

TEST_F(PickleNumpyTest, PythonLoadsWhatIotxWrites) {
  TempDir dir;
  struct Case {
    std::string name;
    std::string descr;
    size_t itemsize;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {
      {"f32", "<f4", 4, {2, 3}},
      {"bf16", "<V2", 2, {4, 5}},
      {"bool", "|b1", 1, {3}},
      {"u8 \u00fc", "|u1", 1, {2, 2, 2}},
      {"scalar", "<f8", 8, {}},
      {"empty with huge dims", "<i4", 4, {int64_t{1} << 33, 0, 70000}},
      {"big", "<i8", 8, {3, 10000}},
      {"complex", "<c8", 8, {2}},
      {"str", "<U3", 12, {2}},
      {"bytes", "|S5", 5, {2}},
      {"big endian", ">i2", 2, {3}},
      {"half", "<f2", 2, {1, 1, 1, 1, 1, 1, 1}},
      {std::string(300, 'n'), "<u2", 2, {5}},
  };
  for (int i = 0; i < 1100; ++i) cases.push_back({"many" + std::to_string(i), "|i1", 1, {1}});
  std::vector<std::vector<std::byte>> storage;
  std::vector<Tensor> arrays;
  std::string raw_all;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    size_t count = 1;
    for (int64_t d : c.shape) count *= static_cast<size_t>(d);
    storage.push_back(test::RandomBytes(count * c.itemsize, i));
    if (c.descr == "|b1") {
      for (std::byte& b : storage.back()) b &= std::byte{1};
    }
    raw_all.append(reinterpret_cast<const char*>(storage.back().data()), storage.back().size());
    arrays.push_back(test::ViewTensor(c.name, c.descr, c.itemsize, Dims(c.shape), storage.back()));
  }
  ASSERT_TRUE(WritePickle(dir / "out.p", arrays));
  test::WriteFile(dir / "raw.bin", raw_all);
  std::string spec;
  for (const Case& c : cases) {
    std::string hex;
    for (unsigned char ch : c.name) {
      static const char* kHex = "0123456789abcdef";
      hex += kHex[ch >> 4];
      hex += kHex[ch & 15];
    }
    spec += hex + " " + c.descr + " " + ToString(c.shape) + "\n";
  }
  test::WriteFile(dir / "spec.txt", spec);
  auto r = RunPython(R"PY(
import sys, pickle, ast, numpy as np
d = sys.argv[1]
got = pickle.load(open(d + '/out.p', 'rb'))
raw = open(d + '/raw.bin', 'rb').read()
spec = [l.split(' ', 2) for l in open(d + '/spec.txt').read().splitlines()]
assert type(got) is dict and list(got) == [bytes.fromhex(h).decode() for h, _, _ in spec]
offset = 0
for (h, descr, shape), (name, a) in zip(spec, got.items()):
    assert type(a) is np.ndarray, name
    # numpy's unpickling turns big-endian data native (same values); nothing else changes.
    want = np.dtype(descr)
    assert a.dtype in (want, want.newbyteorder('=')), (name, a.dtype, descr)
    assert list(a.shape) == ast.literal_eval(shape), (name, a.shape)
    n = a.nbytes
    assert a.astype(want).tobytes() == raw[offset:offset + n], name
    offset += n
assert offset == len(raw)
print('ok', len(got))
)PY",
                     {dir.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok " + std::to_string(cases.size()) + "\n");

  // And iotx reads its own file back to the same arrays.
  auto back = ReadPickle(dir / "out.p");
  ASSERT_TRUE(back) << back.error().ToString();
  ASSERT_EQ(back->size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ((*back)[i].name, arrays[i].name);
    EXPECT_EQ((*back)[i].shape, arrays[i].shape);
    std::string want(reinterpret_cast<const char*>(arrays[i].stored.data()),
                     arrays[i].stored.size());
    if (arrays[i].descr[0] == '>') {  // read back as little-endian
      for (size_t k = 0; k + 1 < want.size(); k += 2) std::swap(want[k], want[k + 1]);
    }
    EXPECT_EQ(test::COrderBytes((*back)[i]), want);
  }
}

// A pickle that runs a shell command when Python loads it is refused, and the command never
// runs. The same pickle is first shown to work as a weapon: Python's loader does create its
// marker file.
TEST_F(PickleNumpyTest, HostilePicklesAreRefusedAndNeverRun) {
  TempDir dir;
  auto made = RunPython(R"PY(
import sys, os, pickle, builtins, subprocess, numpy as np
d = sys.argv[1]
class Shell:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (os.system, ('touch ' + self.marker,))
class Eval:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self):
        return (builtins.eval, ("open(%r, 'w').close()" % self.marker,))
class Popen:
    def __init__(self, marker): self.marker = marker
    def __reduce__(self): return (subprocess.Popen, (['touch', self.marker],))
names = []
for p in range(0, 6):
    for kind in (Shell, Eval, Popen):
        for where in ('alone', 'after_array'):
            name = f'{kind.__name__}_{where}_p{p}'
            def payload(marker):
                obj = kind(marker)
                return obj if where == 'alone' else {'x': np.zeros(3, 'f4'), 'y': obj}
            open(f'{d}/{name}.p', 'wb').write(
                pickle.dumps(payload(f'{d}/{name}.marker'), protocol=p))
            open(f'{d}/{name}.proof.p', 'wb').write(
                pickle.dumps(payload(f'{d}/{name}.proof'), protocol=p))
            names.append(name)
print(' '.join(names))
)PY",
                        {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::istringstream names(made.out);
  std::string name;
  int count = 0;
  while (names >> name) {
    SCOPED_TRACE(name);
    auto proof = RunPython(
        "import sys, pickle, time\n"
        "pickle.load(open(sys.argv[1], 'rb'))\n"
        "for _ in range(100):\n"
        "    if __import__('os').path.exists(sys.argv[2]): break\n"
        "    time.sleep(0.02)\n",
        {dir / (name + ".proof.p"), dir / (name + ".proof")});
    ASSERT_EQ(proof.exit_code, 0) << proof.err;
    ASSERT_TRUE(std::filesystem::exists(dir / (name + ".proof"))) << "the weapon misfired";

    auto arrays = ReadPickle(dir / (name + ".p"));
    ASSERT_FALSE(arrays);
    EXPECT_EQ(arrays.error().code, ErrorCode::kPickleForbidden) << arrays.error().ToString();
    EXPECT_THAT(arrays.error().message, ::testing::HasSubstr("not on the allow-list"));
    EXPECT_EQ(arrays.error().file, dir / (name + ".p"));
    ++count;
  }
  EXPECT_EQ(count, 36);
  // Give a stray child (there must be none) time to act, then look for any marker.
  usleep(200000);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".marker") << entry.path();
  }
}

TEST_F(PickleNumpyTest, ScalarsListsAndTuplesAsValuesNameTheirKey) {
  TempDir dir;
  auto made = RunPython(R"PY(
import sys, pickle, numpy as np
d = sys.argv[1]
values = {'int': 3, 'float': 2.5, 'list': [np.zeros(2)], 'tuple': (np.zeros(2),),
          'none': None, 'str': 'text', 'nested': {'a': np.zeros(2)}, 'huge_int': 1 << 80,
          'set': {1, 2}, 'bytes': b'xyz', 'bool': True}
for p in (2, 3, 4, 5):
    for key, value in values.items():
        if key == 'set' and p < 4:
            continue  # protocols 2-3 pickle a set through the global builtins.set: forbidden
        obj = {'ok': np.ones(2, 'f4'), key: value}
        open(f'{d}/{key}_p{p}.p', 'wb').write(pickle.dumps(obj, protocol=p))
print(' '.join(values))
)PY",
                        {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::istringstream keys(made.out);
  std::string key;
  int count = 0;
  while (keys >> key) {
    for (int p : {2, 3, 4, 5}) {
      if (key == "set" && p < 4) continue;
      SCOPED_TRACE(key + " protocol " + std::to_string(p));
      auto arrays = ReadPickle(dir / (key + "_p" + std::to_string(p) + ".p"));
      ASSERT_FALSE(arrays);
      EXPECT_EQ(arrays.error().code, ErrorCode::kPickleUnsupportedValue)
          << arrays.error().ToString();
      EXPECT_EQ(arrays.error().key, key) << arrays.error().ToString();
      EXPECT_THAT(arrays.error().message, ::testing::HasSubstr("expected a numpy array"));
      ++count;
    }
  }
  EXPECT_EQ(count, 42);
}

TEST_F(PickleNumpyTest, NumpyScalarsAndObjectArraysAreRefusedClearly) {
  TempDir dir;
  auto made = RunPython(R"PY(
import sys, pickle, numpy as np
d = sys.argv[1]
open(d + '/scalar.p', 'wb').write(pickle.dumps({'s': np.float32(1.5)}, protocol=4))
open(d + '/object.p', 'wb').write(pickle.dumps({'o': np.array([1, 'a'], dtype=object)}, protocol=4))
open(d + '/struct.p', 'wb').write(pickle.dumps({'r': np.zeros(2, 'f4,i4')}, protocol=4))
open(d + '/datetime.p', 'wb').write(pickle.dumps({'t': np.zeros(2, 'M8[ns]')}, protocol=4))
)PY",
                        {dir.path()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto scalar = ReadPickle(dir / "scalar.p");
  ASSERT_FALSE(scalar);
  EXPECT_EQ(scalar.error().code, ErrorCode::kPickleForbidden);
  EXPECT_THAT(scalar.error().message, ::testing::HasSubstr("a numpy scalar"));
  for (const char* file : {"object.p", "struct.p", "datetime.p"}) {
    auto r = ReadPickle(dir / file);
    ASSERT_FALSE(r) << file;
    EXPECT_EQ(r.error().code, ErrorCode::kPickleUnsupportedValue) << r.error().ToString();
    EXPECT_FALSE(r.error().key.empty()) << r.error().ToString();
  }
}

}  // namespace
}  // namespace iotx::io
