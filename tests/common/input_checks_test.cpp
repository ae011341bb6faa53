// The streaming input checks (common/input_checks.h) on known bytes, whole
// and fed one byte at a time.
#include "common/input_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace wsb {
namespace {

bool utf8_bytewise(std::string_view s) {
  Utf8Check check;
  for (const char c : s)
    if (!check.feed(std::string_view(&c, 1))) return false;
  return check.complete();
}

TEST(Utf8Check, AcceptsUtf8AndRefusesWhatRfc3629Excludes) {
  for (const std::string_view ok :
       {"", "plain ASCII text, longer than eight bytes", "caf\xc3\xa9", "\xe2\x82\xac euro",
        "\xf0\x9f\x98\x80 emoji", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_TRUE(valid_utf8(ok)) << ok;
    EXPECT_TRUE(utf8_bytewise(ok)) << ok;
  }
  for (const std::string_view bad : {
           "..\xc0\xaf..",             // overlong '/'
           "\xe0\x80\xaf",             // overlong, three bytes
           "\xf0\x80\x80\xaf",         // overlong, four bytes
           "\xed\xa0\x80",             // a surrogate
           "\xf4\x90\x80\x80",         // beyond U+10FFFF
           "stray \x80 continuation",  //
           "byte \xff",                //
           "cut \xe2\x82",             // unfinished at the end
           "12345678\xc3",             // unfinished after a whole ASCII word
       }) {
    EXPECT_FALSE(valid_utf8(bad)) << bad;
    EXPECT_FALSE(utf8_bytewise(bad)) << bad;
  }
}

std::string dechunk(std::string_view framed, std::string* error, bool bytewise) {
  ChunkedCheck check;
  std::string data;
  auto sink = [&data](std::string_view d) { data += d; };
  if (bytewise) {
    for (const char c : framed)
      if (*error = check.feed(std::string_view(&c, 1), sink); !error->empty()) return data;
  } else {
    *error = check.feed(framed, sink);
  }
  if (error->empty() && !check.done()) *error = "not done";
  return data;
}

TEST(ChunkedCheck, PassesTheDataOfValidFramingAndRefusesMalformedFraming) {
  for (const bool bytewise : {false, true}) {
    std::string error;
    EXPECT_EQ(
        dechunk("4\r\nabcd\r\nA;ext=1\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", &error, bytewise),
        "abcd0123456789");
    EXPECT_EQ(error, "");
    for (const std::string_view bad : {"zz-not-hex\r\nabcd\r\n0\r\n\r\n", "4\r\nabcdX\r\n0\r\n\r\n",
                                       "\r\nabcd\r\n", "4\nabcd\r\n0\r\n\r\n"}) {
      dechunk(bad, &error, bytewise);
      EXPECT_EQ(error, "malformed chunked encoding") << bad;
    }
  }
}

// Where the message ends in the bytes that brought its last chunk: what
// follows is the next request's.
TEST(ChunkedCheck, SaysHowManyBytesOfTheLastFeedAreTheMessages) {
  ChunkedCheck check;
  auto ignore = [](std::string_view) {};
  EXPECT_EQ(check.feed("4\r\nab", ignore), "");
  EXPECT_EQ(check.used(), 5u);
  EXPECT_FALSE(check.done());
  const std::string_view last = "cd\r\n0\r\n\r\nPOST / HTTP/1.1\r\n";
  EXPECT_EQ(check.feed(last, ignore), "");
  EXPECT_TRUE(check.done());
  EXPECT_EQ(last.substr(check.used()), "POST / HTTP/1.1\r\n");
}

bool is_simple(std::string_view name) { return name == "text" || name == "item"; }

std::string xml_check(std::string_view doc, bool multipart = false) {
  return XmlTextCheck(multipart, is_simple).feed(doc);
}

TEST(XmlTextCheck, RefusesMarkupInSimpleElementsDtdsAndUndeclaredEntities) {
  EXPECT_EQ(xml_check("<a:e><a:text>x &lt;b&gt; &#x41; &#65; &amp;</a:text><list><item/>"
                      "<item>1</item></list></a:e>"),
            "");
  EXPECT_EQ(xml_check("<e><text><![CDATA[<b>bold</b>]]]></text><!-- <b> --></e>"), "");
  EXPECT_EQ(xml_check("<e><text><b>bold</b></text></e>"),
            "markup inside <text>, an element of simple type");
  EXPECT_EQ(xml_check("<e><a:text attr=\"v\"><b/></a:text></e>"),
            "markup inside <a:text>, an element of simple type");
  EXPECT_EQ(xml_check("<?xml version=\"1.0\"?><!DOCTYPE e [<!ENTITY x \"y\">]><e/>"),
            "DTDs are not accepted");
  EXPECT_EQ(xml_check("<e><text>&x;</text></e>"), "reference to undeclared entity &x;");
  EXPECT_EQ(xml_check("<e><text>\xc0\xaf</text></e>"), "the message is not valid UTF-8");
}

bool is_base64(std::string_view name) { return name == "bin"; }

std::string base64_doc(std::string_view text) {
  return XmlTextCheck(false, nullptr, is_base64)
      .feed("<r><bin>" + std::string(text) + "</bin></r>");
}

TEST(XmlTextCheck, HoldsBase64TextToItsLexicalForm) {
  for (const char* good :
       {"", "AAAA", "AA==", "AAA=", " A A\r\n=\t= ", "&#65;AA&#x41;", "AA=&#61;"})
    EXPECT_EQ(base64_doc(good), "") << good;
  for (const char* bad : {"AAA=A", "A===", "AAAAA", "AA==AAAA", "====", "AA", "AA=&#65;"})
    EXPECT_NE(base64_doc(bad).find("base64"), std::string::npos) << bad;
  // Split anywhere between feeds.
  const std::string doc = "<r><bin>AAA=A</bin></r>";
  for (std::size_t at = 0; at <= doc.size(); ++at) {
    XmlTextCheck check(false, nullptr, is_base64);
    const std::string first = check.feed(std::string_view(doc).substr(0, at));
    EXPECT_NE(first.empty() ? check.feed(std::string_view(doc).substr(at)) : first, "") << at;
  }
  // Under MTOM the element holds an <xop:Include>; hidden text is refused.
  EXPECT_EQ(base64_doc("<xop:Include href=\"cid:a\"/>"), "");
  EXPECT_NE(base64_doc("AA<!-- -->=="), "");
}

std::string searched(std::string_view doc, bool multipart = false) {
  static const std::vector<std::string> names = {"bin"};
  return XmlTextCheck::base64_elements(multipart, names, is_base64, doc);
}

// The codecs' search for base64 elements holds their text as the lexer does.
TEST(XmlTextCheck, Base64ElementsFoundBySearchAreChecked) {
  for (const char* good :
       {"", "AAAA", "AA==", " A A\r\n=\t= ", "&#65;AA&#x41;", "<xop:Include href=\"cid:a\"/>"})
    EXPECT_EQ(searched("<r><bin>" + std::string(good) + "</bin></r>"), "") << good;
  for (const char* bad : {"AAA=A", "A===", "AAAAA", "AA", "AA=&#65;", "AA<!-- -->==", "AA<?p?>=="})
    EXPECT_NE(searched("<r><bin>" + std::string(bad) + "</bin></r>"), "") << bad;
  // A prefixed element, one with attributes, and an empty one.
  EXPECT_NE(searched("<r><p:bin>AAA</p:bin></r>"), "");
  EXPECT_NE(searched("<r><p:bin\ta=\"x>\">AAA</p:bin></r>"), "");
  EXPECT_NE(searched("<r><bin/><bin>AAA</bin></r>"), "");
  EXPECT_EQ(searched("<r><bin/><p:bin a='1'/></r>"), "");
  // The name elsewhere than in a start tag: text, attributes, longer names,
  // end tags, a prefix with two colons.
  for (const char* other :
       {"<r a=\"bin AAA\">bin AAA</r>", "<r><binary>AAA</binary><xbin>AAA</xbin></r>",
        "<r><x:binx>AAA</x:binx></r>", "<r></bin>AAA</r>", "<r><a:b:bin>AAA</a:b:bin></r>"})
    EXPECT_EQ(searched(other), "") << other;
  // Inside a comment, CDATA section, PI or declaration nothing is checked.
  for (const char* hidden :
       {"<!-- <bin>AAA</bin> --><r/>", "<r><![CDATA[<bin>AAA</bin>]]></r>",
        "<?p <p:bin>AAA</p:bin>?><r/>", "<!DOCTYPE r><r><!-- - --><!-- <bin>A --></r>",
        "<r><![CDATA[ ]] ]]]><!--><bin>AAA</bin>--></r>"})
    EXPECT_EQ(searched(hidden), "") << hidden;
  EXPECT_NE(searched("<!-- <bin>AAAA</bin> --><r><bin>AAA</bin></r>"), "");
  EXPECT_NE(searched("<?xml version=\"1.0\"?><r><![CDATA[x]]><bin>AAA</bin></r>"), "");
  // Only a package's root part is searched.
  const std::string package =
      "\r\n--b0undary\r\nContent-Type: application/xop+xml\r\n\r\n<e><bin>ROOT</bin></e>"
      "\r\n--b0undary\r\n\r\n<bin>A</bin>\r\n--b0undary--\r\n";
  EXPECT_EQ(searched(package, true), "");
  std::string bad = package;
  bad.replace(bad.find("ROOT"), 4, "ROO");
  EXPECT_NE(searched(bad, true), "");
}

// Four names of four bytes or more: the search tests a position's first
// four bytes against each.
const std::vector<std::string> kFourNames = {"bits", "binary", "attachment", "buildingsDocument"};
bool is_one_of_four(std::string_view name) {
  return std::find(kFourNames.begin(), kFourNames.end(), name) != kFourNames.end();
}

// The search's vector passes take 128, 64 and 16 bytes a round: every text
// and element is tried at every offset against those rounds, long enough
// to fill them, and the search must answer as the lexer does.
TEST(XmlTextCheck, Base64ElementsFoundBySearchAgreeWithTheLexerAtEveryOffset) {
  // After 200 or more plain bytes: good ends, then bad ones (11 of them).
  const std::vector<std::string> tails = {
      "",         "AA==",         "AAA=",         "AAAA",      "AA= =",
      " AAAA",    "A\nAA=",       "AAA&#61;",     "A&#65;A=",  "A",
      "AA",       "AAA",          "A===",         "AA=A",      "AAA=A",
      "AA==AA==", "AAA=<!-- -->", "A<!-- -->AA=", "AA<?p?>==", "\u00e9AA="};
  std::size_t refused = 0;
  for (const bool without_avx2 : {false, true}) {
    detail::base64_search_without_avx2 = without_avx2;
    for (std::size_t offset = 0; offset < 160; ++offset) {
      // Tags that begin as the names do, and '<', ':' and '>' before 'b';
      // then the element at `offset` from the last of them, its text's end
      // at another offset, and bytes after it for a round to read.
      const std::string filler =
          "<r><bi>b:b>b</bi><x:binar></x:binar><attach/><build></build>" + std::string(offset, 'b');
      const std::string& name = kFourNames[offset % kFourNames.size()];
      const std::string run(200 + offset * 28 % 128, 'A');  // a multiple of 4
      for (const std::string& tail : tails) {
        for (const std::string& open : {"<" + name + ">", "<p:" + name + " a='>'>"}) {
          const std::string doc = filler + open + run + tail + "</" + name + "><bits/>" +
                                  std::string(150, 'z') + "</r>";
          const std::string lexed = XmlTextCheck::base64_only(false, is_one_of_four).feed(doc);
          EXPECT_EQ(XmlTextCheck::base64_elements(false, kFourNames, is_one_of_four, doc), lexed)
              << without_avx2 << ' ' << offset << ' ' << tail;
          refused += lexed.empty() ? 0 : 1;
        }
      }
    }
  }
  detail::base64_search_without_avx2 = false;
  // Both answers occur: the comparison is not of two constants.
  EXPECT_EQ(refused, 2u * 160 * 2 * 11);
}

TEST(XmlTextCheck, ChecksOnlyTheRootPartOfAMultipartPackage) {
  const std::string package =
      "\r\n--b0undary\r\nContent-Type: application/xop+xml\r\nContent-ID: <SOAP-ENV:Envelope>"
      "\r\n\r\n<e><text>ROOT</text></e>\r\n--b0undary\r\nContent-Type: "
      "application/octet-stream\r\n\r\n\xff\xfe<!DOCTYPE binary\r\n--b0undary--\r\n";
  EXPECT_EQ(xml_check(package, true), "");
  std::string bad = package;
  bad.replace(bad.find("ROOT"), 4, "\xc0\xaf");
  EXPECT_EQ(xml_check(bad, true), "the message is not valid UTF-8");
  // Without a leading boundary, the body is one document.
  EXPECT_EQ(xml_check("<e><text><b/></text></e>", true),
            "markup inside <text>, an element of simple type");
}

}  // namespace
}  // namespace wsb
