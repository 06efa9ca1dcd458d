// The text helpers every diagnostic goes through: escaping control characters, cutting echoed
// input, short lists.
#include "core/text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/utf8.h"
#include "iotx/dims.h"
#include "iotx/status.h"

namespace iotx {
namespace {

// True when `text` holds no byte a terminal would act on: C0 controls, DEL, C1 controls in
// UTF-8 (C2 80..C2 9F) and bytes that are not UTF-8 (a lone 0x9b is CSI on a Latin-1 terminal).
bool IsPrintable(std::string_view text) {
  if (!IsValidUtf8(text)) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return false;
    }
  }
  return true;
}

TEST(EscapeControlTest, EscapesEveryControlCharacter) {
  EXPECT_EQ(EscapeControl("plain name_7"), "plain name_7");
  EXPECT_EQ(EscapeControl("a\nIOTX_E000 forged"), "a\\nIOTX_E000 forged");
  EXPECT_EQ(EscapeControl("\r\t"), "\\r\\t");
  EXPECT_EQ(EscapeControl("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(EscapeControl(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeControl("\x7f"), "\\x7f");
  EXPECT_EQ(EscapeControl("\xc2\x9b" "2J"), "\\u009b2J");  // U+009B, CSI
  EXPECT_EQ(EscapeControl("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeControl("\x9b"), "\\x9b");  // CSI on a Latin-1 terminal
  // Printable non-ASCII and backslashes stay.
  EXPECT_EQ(EscapeControl("caf\xc3\xa9 \xe2\x82\xac a\\b"), "caf\xc3\xa9 \xe2\x82\xac a\\b");
  EXPECT_EQ(EscapeControl("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is no control
}

TEST(EscapeControlTest, RandomBytesComeOutPrintableAndEscapingIsIdempotent) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 20000; ++round) {
    std::string text(std::uniform_int_distribution<size_t>(0, 24)(rng), '\0');
    for (char& c : text) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    const std::string escaped = EscapeControl(text);
    ASSERT_TRUE(IsPrintable(escaped)) << escaped;
    ASSERT_EQ(EscapeControl(escaped), escaped);
    if (IsPrintable(text)) {
      ASSERT_EQ(escaped, text);
    }
  }
}

TEST(ExcerptTest, CutsLongTextOnACharacterBoundary) {
  EXPECT_EQ(Excerpt("p0"), "\"p0\"");
  const std::string long_name(1 << 20, 'n');
  std::string expected = "\"";  // appended: GCC 12 warns falsely on "literal" + std::string
  expected.append(kMaxEchoBytes, 'n').append("\"... (1048576 bytes)");
  EXPECT_EQ(Excerpt(long_name), expected);
  // 'a' then two-byte characters: the cut never splits one.
  std::string euros = "a";
  for (int i = 0; i < 200; ++i) euros += "\xc3\xa9";
  const std::string cut = Excerpt(euros);
  EXPECT_TRUE(IsValidUtf8(cut)) << cut;
  EXPECT_EQ(cut.substr(0, 3), "\"a\xc3");
  EXPECT_NE(cut.find("... (401 bytes)"), std::string::npos);
  EXPECT_EQ(Excerpt("a\nb"), "\"a\\nb\"");
}

TEST(ShortListTest, ListsShortOnesWholeAndSaysHowLongALongOneIs) {
  EXPECT_EQ(ShortList(Dims{}), "[]");
  EXPECT_EQ(ShortList(Dims{3, 2048, 2, 128}), ToString(Dims{3, 2048, 2, 128}));
  std::vector<int64_t> sixteen(16, 7);
  EXPECT_EQ(ShortList(sixteen), ToString(sixteen));
  std::vector<int64_t> million(1000000, 1);
  million.back() = 9;
  EXPECT_EQ(ShortList(million),
            "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ..., 9] (1000000 values)");
}

TEST(ListFirstNamesTest, ListsTheFirstNamesAndSaysNoneOnlyForNoItems) {
  const auto self = [](const std::string& s) -> const std::string& { return s; };
  EXPECT_EQ(ListFirstNames(std::vector<std::string>{}, self), "none");
  EXPECT_EQ(ListFirstNames(std::vector<std::string>{"a", "b"}, self), "a, b");
  // A tensor may be named "": it is listed, not taken for no inputs at all.
  EXPECT_EQ(ListFirstNames(std::vector<std::string>{""}, self), "\"\"");
  EXPECT_EQ(ListFirstNames(std::vector<std::string>{"a", "", "c"}, self), "a, \"\", c");
  EXPECT_EQ(ListFirstNames(std::vector<std::string>{"1", "2", "3"}, self, 2), "1, 2, ...");
}

TEST(ErrorToStringTest, EscapesEveryPartAndBoundsTheMessage) {
  const Error forged = Error(ErrorCode::kUnsafeName, "bad name \"x\nIOTX_E000 all fine\"")
                           .InFile("dir\n/io.json")
                           .AtElement(0)
                           .AtKey("\x1b]0;title\x07");
  const std::string text = forged.ToString();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text,
            "IOTX_E115 dir\\n/io.json: element 0, key \"\\x1b]0;title\\x07\": bad name "
            "\"x\\nIOTX_E000 all fine\"");
  const Error huge(ErrorCode::kNotPermutation, std::string(3 << 20, 'm'));
  EXPECT_LT(huge.ToString().size(), 5000u);
  EXPECT_NE(huge.ToString().find("(message cut: 3145728 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace iotx
