// The pickle reader on hand-assembled pickles (no Python needed): malformed, truncated,
// lying and hostile input gets a clear error, and memory stays bounded.
#include "io/pickle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tensor_bytes.h"

namespace iotx::io {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace pickle_test {

using ::testing::HasSubstr;
using namespace std::string_literals;

// Pieces of protocol 4 pickles, spelled out byte by byte.
// (Built with append: GCC 12 warns falsely on `"literal" + std::string(...)` here.)
std::string Op(char opcode, const std::string& argument) {
  std::string out(1, opcode);
  out.append(argument);
  return out;
}
std::string Str(const std::string& s) {
  return Op('\x8c', std::string(1, static_cast<char>(s.size())) + s);
}
std::string Global(const std::string& module, const std::string& name) {
  return Str(module) + Str(name) + "\x93";
}
std::string Int1(int v) { return Op('K', std::string(1, static_cast<char>(v))); }
std::string ShortBytes(const std::string& b) {
  return Op('C', std::string(1, static_cast<char>(b.size())) + b);
}
// numpy's dtype('f4') with its version 3 state.
std::string DType(const std::string& code, char order) {
  return Global("numpy", "dtype") + Str(code) + "\x89\x88\x87R" + "(" + Int1(3) +
         Str(std::string(1, order)) + "NNN" + "J\xff\xff\xff\xff" + "J\xff\xff\xff\xff" + Int1(0) +
         "tb";
}
// _reconstruct(ndarray, (0,), b'b') + BUILD (1, shape, dtype, fortran, data).
std::string Array(const std::string& shape_ops, const std::string& dtype, bool fortran,
                  const std::string& data) {
  return Global("numpy.core.multiarray", "_reconstruct") + Global("numpy", "ndarray") + Int1(0) +
         "\x85" + ShortBytes("b") + "\x87R" + "(" + Int1(1) + "(" + shape_ops + "t" + dtype +
         (fortran ? "\x88" : "\x89") + ShortBytes(data) + "tb";
}
std::string Dict(const std::string& items) { return "\x80\x04}(" + items + "u."; }

Expected<std::vector<Tensor>> Parse(const std::string& pickle) {
  // The result views its input: a copy owned by the result keeps it valid.
  auto owner = std::make_shared<const std::string>(pickle);
  return ParsePickle(std::as_bytes(std::span<const char>(owner->data(), owner->size())), owner,
                     "in.p");
}

void ExpectError(const std::string& pickle, ErrorCode code, const std::string& fragment) {
  auto r = Parse(pickle);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, code) << r.error().ToString();
  EXPECT_THAT(r.error().ToString(), HasSubstr(fragment));
  EXPECT_EQ(r.error().file, "in.p");
}

const std::string kF4Array =
    Array(Int1(2), DType("f4", '<'), false, std::string("\0\0\x80?\0\0\0@", 8));

TEST(PickleTest, ReadsAHandBuiltDict) {
  auto r = Parse(Dict(Str("w") + kF4Array + Str("b") +
                      Array(Int1(2) + Int1(3), DType("u1", '|'), true, "adbecf")));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "w");
  EXPECT_EQ((*r)[0].descr, "<f4");
  EXPECT_EQ(ToString((*r)[0].shape), "[2]");
  EXPECT_EQ((*r)[1].name, "b");
  EXPECT_EQ((*r)[1].descr, "|u1");
  // Fortran order converted to C order.
  EXPECT_EQ(test::COrderBytes((*r)[1]), "abcdef");
}

TEST(PickleTest, EmptyDictAndRepeatedKeys) {
  auto empty = Parse("\x80\x04}.");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  // Python keeps a repeated key at its first position with the last value.
  auto r = Parse(Dict(Str("a") + kF4Array + Str("b") + kF4Array + Str("a") +
                      Array("", DType("i1", '|'), false, "z")));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "a");
  EXPECT_EQ((*r)[0].descr, "|i1");
  EXPECT_EQ((*r)[1].name, "b");
}

TEST(PickleTest, EveryTruncationIsAnError) {
  const std::string pickle = Dict(Str("w") + kF4Array);
  ASSERT_TRUE(Parse(pickle));
  for (size_t n = 0; n < pickle.size(); ++n) {
    auto r = Parse(pickle.substr(0, n));
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, ErrorCode::kPickleFormat) << n;
  }
}

TEST(PickleTest, LyingLengthsAreCheckedBeforeUse) {
  ExpectError(
      "\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f"
      "12345678"s,
      ErrorCode::kPickleFormat,
      "byte 2 (BINBYTES8): truncated: needs 9223372036854775807 bytes, 8 remain");
  ExpectError("\x80\x04\x96\x00\x00\x00\x00\x01\x00\x00\x00"s, ErrorCode::kPickleFormat,
              "BYTEARRAY8): truncated: needs 4294967296 bytes");
  ExpectError("\x80\x04\x8b\xff\xff\xff\x7f"s, ErrorCode::kPickleFormat, "(LONG4): truncated");
  ExpectError(
      "\x80\x04X\x10\x00\x00\x00"
      "abc"s,
      ErrorCode::kPickleFormat, "(BINUNICODE): truncated");
  ExpectError("\x80\x04\x95\x00\x10\x00\x00\x00\x00\x00\x00}."s, ErrorCode::kPickleFormat,
              "frame of 4096 bytes runs past the end");
}

TEST(PickleTest, StackAndMemoMisuse) {
  ExpectError(
      "\x80\x04"
      "0",
      ErrorCode::kPickleFormat, "(POP): stack underflow");
  ExpectError(
      "\x80\x04"
      "t",
      ErrorCode::kPickleFormat, "(TUPLE): no MARK to pop to");
  ExpectError(
      "\x80\x04"
      "(\x85",
      ErrorCode::kPickleFormat, "(TUPLE1): stack underflow");
  ExpectError("\x80\x04h\x05", ErrorCode::kPickleFormat, "memo entry 5 is not set");
  ExpectError("\x80\x04\x94", ErrorCode::kPickleFormat, "(MEMOIZE): stack underflow");
  ExpectError("\x80\x04}N.", ErrorCode::kPickleFormat, "values left on the stack at STOP");
  ExpectError(
      "\x80\x04}(NNN"
      "u.",
      ErrorCode::kPickleFormat, "odd number of items");
  ExpectError("\x80\x04N(Nu.", ErrorCode::kPickleFormat, "SETITEM on None");
  ExpectError("\x80\x04NNR.", ErrorCode::kPickleFormat, "REDUCE calls None");
  ExpectError("\x80\x04}.junk", ErrorCode::kPickleFormat, "4 bytes after the STOP opcode");
  ExpectError("\x80\x04}", ErrorCode::kPickleFormat, "without a STOP opcode");
  ExpectError("\x80\x06}.", ErrorCode::kPickleFormat, "protocol 6; at most 5");
  ExpectError("\x80\x05\x97", ErrorCode::kPickleFormat, "out-of-band buffers");
  ExpectError("\x80\x04\xff", ErrorCode::kPickleFormat, "opcode 0xff (unknown) is not supported");
  ExpectError("\x80\x04S'abc'\n.", ErrorCode::kPickleFormat, "(STRING) is not supported");
}

TEST(PickleTest, NestingMarksStackAndMemoAreBounded) {
  std::string deep = "\x80\x04N" + std::string(40, '\x85');
  ExpectError(deep, ErrorCode::kPickleFormat, "tuples nested deeper than 32");
  ExpectError("\x80\x04" + std::string(300, '('), ErrorCode::kPickleFormat,
              "more than 256 open MARKs");
  ExpectError("\x80\x04" + std::string((size_t{1} << 20) + 1, 'N'), ErrorCode::kPickleFormat,
              "stack deeper than 1048576");
  std::string memo = "\x80\x04N";
  for (size_t i = 0; i <= (size_t{1} << 20); ++i) memo += "\x94";
  ExpectError(memo, ErrorCode::kPickleFormat, "memo larger than 1048576 entries");
}

TEST(PickleTest, ForbiddenGlobalsAreRefusedBeforeAnythingRuns) {
  // GLOBAL and INST name their target inline: refused by the scan before any opcode runs,
  // even behind a stack underflow the VM would otherwise hit first.
  ExpectError(
      "\x80\x02"
      "0cos\nsystem\n.",
      ErrorCode::kPickleForbidden, "byte 3 (GLOBAL): global 'os.system' is not on the allow-list");
  ExpectError("(ios\nsystem\nS'x'\n.", ErrorCode::kPickleForbidden, "(INST): global 'os.system'");
  ExpectError("\x80\x02\x82\x01.", ErrorCode::kPickleForbidden, "(EXT1): extension codes");
  ExpectError("\x80\x02Pfoo\n.", ErrorCode::kPickleForbidden, "(PERSID): persistent ids");
  ExpectError("\x80\x04" + Global("builtins", "eval") + ".", ErrorCode::kPickleForbidden,
              "(STACK_GLOBAL): global 'builtins.eval'");
  // STACK_GLOBAL's names may come from the memo: the VM checks them when it gets there.
  ExpectError("\x80\x04" + Str("os") + "\x94" + Str("system") +
                  "\x94"
                  "00h\x00h\x01\x93."s,
              ErrorCode::kPickleForbidden, "global 'os.system'");
  // Control characters in names are not echoed.
  ExpectError(
      "\x80\x02"
      "cos\x1b[31m\nsystem\n.",
      ErrorCode::kPickleForbidden, "global 'os?[31m.system'");
}

TEST(PickleTest, BadArrayPiecesNameTheirKey) {
  // Four data bytes for two f4 elements.
  auto r = Parse(Dict(Str("weights") + Array(Int1(2), DType("f4", '<'), false, "abcd")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kPickleFormat);
  EXPECT_EQ(r.error().key, "weights");
  EXPECT_THAT(r.error().message,
              HasSubstr("array data has 4 bytes, but shape [2] of '<f4' needs 8"));
  ExpectError(Dict(Str("x") + Array(Int1(2), DType("O8", '|'), false, "")),
              ErrorCode::kPickleUnsupportedValue, "object arrays are not supported");
  ExpectError(Dict(Str("x") + Array(Int1(2), DType("zz", '|'), false, "")),
              ErrorCode::kPickleFormat, "numpy.dtype('zz'): not a numpy type string");
  ExpectError("\x80\x04" + DType("f4", '<') + "(" + Int1(3) + Str("<") + "NNN" +
                  "J\xff\xff\xff\xff"
                  "J\xff\xff\xff\xff" +
                  Int1(0) + "tb.",
              ErrorCode::kPickleFormat, "BUILD applied twice to one dtype");
  ExpectError(Dict(Str("x") + Global("numpy.core.multiarray", "_reconstruct") +
                   Global("numpy", "dtype") + Int1(0) + "\x85" + ShortBytes("b") + "\x87R"),
              ErrorCode::kPickleFormat, "_reconstruct expects (numpy.ndarray, shape, typecode)");
  // _frombuffer(buf, dtype, shape, 'K', axes) with axes that are not a permutation.
  ExpectError(Dict(Str("k") + Global("numpy._core.numeric", "_frombuffer") + "(" +
                   ShortBytes("abcdef") + DType("u1", '|') + Int1(2) + Int1(3) + "\x86" + Str("K") +
                   Int1(0) + Int1(0) + "\x86" + "tR"),
              ErrorCode::kPickleFormat, "axes [0, 0] are not a permutation");
  // protocol 2's latin-1 text may not hold characters above U+00FF.
  ExpectError(
      "\x80\x02"
      "c_codecs\nencode\nX\x03\x00\x00\x00\xe2\x82\xacX\x06\x00\x00\x00"
      "latin1\x86R."s,
      ErrorCode::kPickleFormat, "character above U+00FF");
  ExpectError(Dict("X\x02\x00\x00\x00\xc3\x28"s + kF4Array), ErrorCode::kPickleFormat,
              "string is not valid UTF-8");
}

TEST(PickleTest, FromBufferInAllOrders) {
  const std::string buf = ShortBytes("abcdef");
  auto call = [&](const std::string& order_ops) {
    return Parse(Dict(Str("k") + Global("numpy._core.numeric", "_frombuffer") + "(" + buf +
                      DType("u1", '|') + Int1(2) + Int1(3) + "\x86" + order_ops + "tR"));
  };
  auto c = call(Str("C"));
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(test::COrderBytes((*c)[0]), "abcdef");
  // order 'F' with shape (2, 3): memory holds the columns.
  auto f = call(Str("F"));
  ASSERT_TRUE(f);
  EXPECT_EQ(test::COrderBytes((*f)[0]), "acebdf");
  // order 'K', axes (1, 0): frombuffer(buf).reshape(2, 3).transpose(1, 0).
  auto k = call(Str("K") + Int1(1) + Int1(0) + "\x86");
  ASSERT_TRUE(k) << k.error().ToString();
  EXPECT_EQ(ToString((*k)[0].shape), "[3, 2]");
  EXPECT_EQ(test::COrderBytes((*k)[0]), "adbecf");
}

// Arrays that share one memoized buffer (BINGET of the same bytes) are views of the same
// bytes, however they need converting: reading copies nothing (issue 18, item 9), the
// conversion happens per tensor when it is used.
TEST(PickleTest, ArraysSharingAMemoizedBufferShareItsBytes) {
  const std::string data = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c";
  auto shared = [&](int i, bool fortran) {
    // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, an error under the ci
    // presets) on this chain of operator+ on temporaries.
    std::string name = "a";
    name += std::to_string(i);
    std::string out = Str(name);
    out += Global("numpy.core.multiarray", "_reconstruct");
    out += Global("numpy", "ndarray");
    out += Int1(0);
    out += "\x85";
    out += ShortBytes("b");
    out += "\x87R(";
    out += Int1(1);
    out += "(";
    out += Int1(2);
    out += Int1(3);
    out += "t";
    out += DType("u2", '>');
    out += fortran ? "\x88" : "\x89";
    if (i == 0) {
      out += ShortBytes(data);
      out += "\x94";
    } else {
      out.append("h\x00", 2);
    }
    out += "tb";
    return out;
  };
  std::string items;
  for (int i = 0; i < 40; ++i) items += shared(i, i % 2 == 0);
  const std::string pickle = Dict(items);
  auto r = Parse(pickle);
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 40u);
  for (const Tensor& t : *r) {
    EXPECT_EQ(t.stored.data(), (*r)[0].stored.data()) << t.name;
    EXPECT_EQ(t.descr, "<u2");
    EXPECT_FALSE(t.is_c_order());
  }
  // (2, 3) big-endian u2: C order holds 0201 0403 ..., Fortran order reads them columnwise.
  EXPECT_EQ(test::COrderBytes((*r)[1]), "\x02\x01\x04\x03\x06\x05\x08\x07\x0a\x09\x0c\x0b");
  EXPECT_EQ(test::COrderBytes((*r)[0]), "\x02\x01\x06\x05\x0a\x09\x04\x03\x08\x07\x0c\x0b");
}

TEST(PickleTest, TopLevelMustBeADict) {
  ExpectError("\x80\x04N.", ErrorCode::kPickleUnsupportedValue,
              "the pickle holds None, expected a dict of numpy arrays");
  ExpectError("\x80\x04" + kF4Array + ".", ErrorCode::kPickleUnsupportedValue,
              "holds a numpy array, expected a dict");
}

}  // namespace pickle_test
}  // namespace iotx::io
