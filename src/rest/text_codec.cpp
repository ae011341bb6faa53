// REST's text/plain body: the string itself, UTF-8, with no markup. It
// carries only texts (ping's reply, primes, define), and gives E1 the REST
// row the paper measured beside JSON: what a reply costs with nothing to
// parse.
#include <string>

#include "common/input_checks.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

class TextCodec final : public Codec {
 public:
  std::string unsupported(const Payload& p) const override {
    if (std::holds_alternative<Text>(p)) return {};
    return "text/plain carries only a text (ping's reply, the text payload, primes, define)";
  }

  void encode(const Payload& in, std::string& out) override {
    const auto* text = std::get_if<Text>(&in);
    if (text == nullptr) throw std::invalid_argument(unsupported(in));
    out = text->value;  // assign keeps out's capacity
  }

  void decode(std::string_view wire, Payload& out) override {
    if (!valid_utf8(wire)) throw DecodeError("text: the body is not valid UTF-8");
    if (auto* text = std::get_if<Text>(&out))
      text->value.assign(wire);
    else
      out = Text{std::string(wire)};
  }

  std::string content_type() const override { return "text/plain; charset=utf-8"; }
};

}  // namespace

std::unique_ptr<Codec> make_text_codec() { return std::make_unique<TextCodec>(); }

}  // namespace wsb::rest
