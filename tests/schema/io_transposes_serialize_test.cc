// SerializeIoTransposes against Python's own json.dumps on the same data. The data goes to
// Python as hex-encoded UTF-8 and plain integers, so nothing of our JSON writer is involved on
// that side.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "iotx/io_transposes.h"
#include "support/process.h"

namespace iotx {
namespace {

// Reads lines "<name hex> L,<dims...> L,<axes...>" and prints json.dumps(list_of_dicts).
constexpr const char* kPythonDumps = R"(
import json, sys
def ints(field):
    return [int(x) for x in field.split(',')[1:]]
out = []
for line in sys.stdin.read().splitlines():
    name, reshape, transpose = line.split(' ')
    out.append({"input_name": bytes.fromhex(name).decode('utf-8', 'replace'),
                "reshape": ints(reshape), "transpose": ints(transpose)})
sys.stdout.write(json.dumps(out))
)";

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 0xF];
  }
  return out;
}

std::string IntsField(const Dims& values) {
  std::string out = "L";
  for (const int64_t v : values) {
    out += ',';
    out += std::to_string(v);
  }
  return out;
}

std::string PythonDumps(const SpecMap& specs) {
  std::string input;
  for (const NamedSpec& e : specs) {
    for (const std::string& field :
         {Hex(e.input_name), IntsField(e.spec.reshape), IntsField(e.spec.transpose)}) {
      input += field;
      input += ' ';
    }
    input.back() = '\n';
  }
  const test::ProcessResult r = test::RunPython(kPythonDumps, {}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::string Utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

TEST(SerializeIoTransposesTest, SourceExampleMatchesTheDocumentedBytes) {
  SpecMap specs;
  specs.TryEmplace("p0", {{3, 2048, 2, 128}, {0, 3, 2, 1}});
  EXPECT_EQ(SerializeIoTransposes(specs),
            R"([{"input_name": "p0", "reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]}])");
  EXPECT_EQ(SerializeIoTransposes(SpecMap()), "[]");
}

TEST(SerializeIoTransposesTest, MatchesPythonOnOddNames) {
  SpecMap specs;
  int i = 0;
  for (const std::string& name :
       {std::string("p0"), std::string("weight_7"), std::string("caf\xc3\xa9"),
        std::string("\xe6\x97\xa5\xe6\x9c\xac"), std::string("\xf0\x9f\x98\x80 emoji"),
        std::string("ctl\x01\x1f\x7f"), std::string("tab\there\nnew\rline\b\f"),
        std::string("quote\" back\\slash"), std::string("\xe2\x80\xa8sep"),
        std::string("\xef\xbf\xbf max bmp"), std::string("\xf4\x8f\xbf\xbf max"),
        std::string("..."), std::string(" "), std::string("<>&'")}) {
    specs.TryEmplace(name, {{2, 3, int64_t{1} << 40}, {2, 0, 1}});
    specs.TryEmplace(name + std::to_string(i++), {{}, {}});
  }
  EXPECT_EQ(SerializeIoTransposes(specs), PythonDumps(specs));
}

TEST(SerializeIoTransposesTest, MatchesPythonOnRandomNames) {
  std::mt19937_64 rng(42);
  const auto uniform = [&rng](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  SpecMap specs;
  for (int n = 0; n < 300; ++n) {
    std::string name = "n";
    name += std::to_string(n);
    const uint32_t length = uniform(0, 12);
    for (uint32_t k = 0; k < length; ++k) {
      char32_t cp = 0;
      switch (uniform(0, 3)) {
        case 0:
          cp = uniform(0x01, 0x7F);
          break;
        case 1:
          cp = uniform(0x80, 0x7FF);
          break;
        case 2:
          do cp = uniform(0x800, 0xFFFF);
          while (cp >= 0xD800 && cp <= 0xDFFF);  // not encodable in UTF-8
          break;
        default:
          cp = uniform(0x10000, 0x10FFFF);
          break;
      }
      name += Utf8(cp);
    }
    Dims reshape;
    for (uint32_t d = uniform(0, 7); d > 0; --d) reshape.push_back(uniform(0, 100000));
    Dims transpose;
    for (size_t a = reshape.size(); a > 0; --a) transpose.push_back(static_cast<int64_t>(a - 1));
    specs.TryEmplace(name, {reshape, transpose});
  }
  EXPECT_EQ(SerializeIoTransposes(specs), PythonDumps(specs));
}

TEST(SerializeIoTransposesTest, InvalidUtf8IsWrittenAsPythonReplacesIt) {
  SpecMap specs;
  for (const char* bytes : {"\xff", "a\x80z", "\xe6\x97", "\xe6\x97x", "\xc0\xaf", "\xed\xa0\x80",
                            "\xf4\x90\x80\x80", "\xf0\x9f\x98", "\xc3", "\xe0\x80\x80"}) {
    specs.TryEmplace(bytes, {{1}, {0}});
  }
  EXPECT_EQ(SerializeIoTransposes(specs), PythonDumps(specs));
}

TEST(SerializeIoTransposesTest, PythonOutputParsesBackToTheSameBytes) {
  SpecMap specs;
  specs.TryEmplace("p0", {{3, 2048, 2, 128}, {0, 3, 2, 1}});
  specs.TryEmplace("\xf0\x9f\x98\x80\tx\x01", {{768, 768}, {1, 0}});
  specs.TryEmplace("z", {{0, 4}, {0, 1}});
  const std::string python = PythonDumps(specs);
  const auto parsed = ParseIoTransposes(python, "python.json");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(SerializeIoTransposes(parsed->specs), python);
}

TEST(ToJsonTest, MatchesPythonForOneSpec) {
  const TransposeSpec spec{{3, 2048, 2, 128}, {0, 3, 2, 1}};
  const test::ProcessResult r = test::RunPython(
      "import json, sys; sys.stdout.write(json.dumps({'reshape': [3, 2048, 2, 128], "
      "'transpose': [0, 3, 2, 1]}))");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ToJson(spec), r.out);
}

}  // namespace
}  // namespace iotx
