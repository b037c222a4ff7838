// train/json.h: the strict JSON reader of safetensors headers (its messages
// in context: safetensors_test.cpp).
#include "train/json.h"

#include <gtest/gtest.h>

#include <string>

namespace tenet::json {
namespace {

Error error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << text;
  return Error(Error::Category::Syntax, "", std::nullopt);
}

Error error_of_limited(const std::string& text, const Limits& limits) {
  try {
    parse(text, limits);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << text;
  return Error(Error::Category::Syntax, "", std::nullopt);
}

TEST(Json, ReadsEveryKindInDocumentOrder) {
  const Value v = parse(R"( {"b": [1, -2.5e3, true, null], "a": "x\u00e9\ud83d\ude00\n"} )");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].key, "b");
  const Value& items = *v.find("b");
  ASSERT_EQ(items.items.size(), 4u);
  EXPECT_EQ(items.items[0].as_uint64(), 1u);
  EXPECT_EQ(items.items[1].text, "-2.5e3");
  EXPECT_FALSE(items.items[1].as_uint64());
  EXPECT_TRUE(items.items[2].boolean);
  EXPECT_EQ(std::string(items.items[3].kind_name()), "null");
  EXPECT_EQ(v.find("a")->text, "x\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_EQ(v.find("c"), nullptr);
}

TEST(Json, IntegersAreExactUpTo64Bits) {
  EXPECT_EQ(parse("18446744073709551615").as_uint64(), UINT64_MAX);
  EXPECT_FALSE(parse("18446744073709551616").as_uint64());
  EXPECT_EQ(parse("9007199254740993").as_uint64(), 9007199254740993u);  // 2^53 + 1
}

TEST(Json, NestingStopsAt64Levels) {
  EXPECT_NO_THROW(parse(std::string(64, '[') + std::string(64, ']')));
  const Error e = error_of(std::string(65, '[') + std::string(65, ']'));
  EXPECT_EQ(e.category, Error::Category::Depth);
  EXPECT_STREQ(e.what(), "nested deeper than 64 levels");
}

TEST(Json, ADuplicateKeyNamesItsPath) {
  const Error e = error_of(R"({"t": [{"k": 1, "k": 2}]})");
  EXPECT_EQ(e.category, Error::Category::Duplicate);
  EXPECT_EQ(e.key, "k");
  EXPECT_EQ(e.path, (std::vector<std::string>{"t", ""}));
}

TEST(Json, SyntaxErrorsSayWhereAndWhat) {
  const Error e = error_of("[1 2]");
  EXPECT_EQ(e.offset, 3u);
  EXPECT_STREQ(e.what(), "unexpected '2'; expected ',' or ']'");
  EXPECT_STREQ(error_of("01").what(), "unexpected text after the JSON value");
  EXPECT_STREQ(error_of("\"\\x\"").what(), "invalid string: unknown escape");
  EXPECT_STREQ(error_of("\"\\udc00\"").what(),
               "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
  EXPECT_STREQ(error_of("\"\xc0\xaf\"").what(), "invalid UTF-8 in a string");  // overlong '/'
  EXPECT_STREQ(error_of("-").what(), "invalid number: expected a digit");
  EXPECT_STREQ(error_of("1.").what(), "invalid number: expected a digit after '.'");
  EXPECT_EQ(error_of("1e999").category, Error::Category::Range);
  EXPECT_NO_THROW(parse("1e-999"));  // underflow to 0 is a number
}

TEST(Json, MoreSyntaxErrorsInOurWords) {
  EXPECT_STREQ(error_of("{\"a\":x}").what(), "unexpected 'x'; expected a value");
  EXPECT_EQ(error_of("{\"a\":x}").offset, 5u);
  EXPECT_STREQ(error_of("[1,]").what(), "unexpected ']'; expected a value");
  EXPECT_STREQ(error_of("{x}").what(), "unexpected 'x'; expected a member name in quotes");
  EXPECT_STREQ(error_of("[1 x]").what(), "unexpected 'x'; expected ',' or ']'");
  EXPECT_STREQ(error_of("{\"a\":1 2}").what(), "unexpected '2'; expected ',' or '}'");
  EXPECT_STREQ(error_of("[true true]").what(), "unexpected 't'; expected ',' or ']'");
  EXPECT_EQ(error_of("[true true]").offset, 6u);
  EXPECT_STREQ(error_of("nux").what(), "invalid literal");
  EXPECT_STREQ(error_of("1e").what(), "invalid number: expected a digit in the exponent");
  EXPECT_STREQ(error_of("\"ab").what(), "invalid string: missing closing quote");
  EXPECT_STREQ(error_of("\xef\xbb\xbf{}").what(), "unexpected byte; expected a value");
  EXPECT_STREQ(error_of("{} [").what(), "unexpected text after the JSON value");
  EXPECT_EQ(error_of("{}  [").offset, 4u);
  // A sign is kept: -0 is no unsigned integer.
  EXPECT_EQ(parse("-0").text, "-0");
  EXPECT_FALSE(parse("-0").as_uint64());
  EXPECT_EQ(parse("-9223372036854775808").text, "-9223372036854775808");
}

TEST(Json, ValuesAreCounted) {
  const Limits three{kMaxDepth, 3};
  EXPECT_NO_THROW(parse("[1, 2]", three));
  const Error e = error_of_limited("[1, [2]]", three);
  EXPECT_EQ(e.category, Error::Category::Size);
  EXPECT_STREQ(e.what(), "holds more than 3 values");
}

// A duplicate check per key that scans the object's keys made 200,000 keys
// take minutes (safetensors_test.cpp reads as many); 50,000 take tens of
// milliseconds (quadratic, seconds).
TEST(Json, ManyKeysReadInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 50000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":[1,2]";
  text += "}";
  const Value v = parse(text);
  ASSERT_EQ(v.members.size(), 50000u);
  EXPECT_EQ(v.members[49999].key, "k49999");
  EXPECT_EQ(error_of(text.substr(0, text.size() - 1) + ",\"k7\":1}").path,
            std::vector<std::string>{});
}

TEST(Json, QuotesWhatItReadsBack) {
  const std::string s = "a\"b\\c\n\x01\xe2\x82\xac";
  ASSERT_TRUE(is_utf8(s));
  EXPECT_EQ(quote(s), "\"a\\\"b\\\\c\\u000a\\u0001\xe2\x82\xac\"");
  EXPECT_EQ(parse(quote(s)).text, s);
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // an encoded surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
}

}  // namespace
}  // namespace tenet::json
