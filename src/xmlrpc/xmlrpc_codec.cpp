// XML-RPC bodies via xmlrpc-c's C++ API (libxmlrpc++ 1.33.14, Debian 12).
//
// Encode builds an xmlrpc_c::value tree from the model (bind) and has
// xmlrpc_c::xml::generateResponse serialise it as a methodResponse (write).
// Decode parses with xmlrpc_c::xml::parseResponse into an rpcOutcome (read)
// and walks the value tree into the model (unbind). The mapping
// (xmlrpc_mapping.cpp) and the guard in front of the parser
// (xmlrpc_guard.cpp) are shared with the xmlrpc-c stack's server and client.
//
// Body shape: the response's one param is a struct whose one member names
// the payload, as in the JSON codec:
//   text: string        ints: array of i4        strings: array of string
//   objects: array of struct {id: i4, name: string, value: double, active: boolean}
//   message: struct {recipient, sender, authToken: string, timestamp: i8,
//                    records: array of struct {title, author, body: string,
//                        sequence, created: i8, priority, category, flags, ttl: i4},
//                    attachment: base64}
//   messages: array of message structs (as above)
//   binary: base64
//   buildings: array of struct {id, name: string, height: double, floors: i4,
//                               footprint: array of [x: double, y: double]}
// "records" and "attachment" may be absent when empty; every other member is
// required. Types are checked: 64-bit fields are written as <i8> (the
// extension xmlrpc-c writes in its default dialect; servers write a decimal
// <string> instead for calls to /RPC2?int64=string) and read as <i8>, <i4>
// or such a string, 32- and 16-bit fields must be <i4>/<int>, doubles
// <double>.
//
// What xmlrpc-c 1.33.14 cannot carry, whatever API is used (each pinned by
// tests/xmlrpc/xmlrpc_test.cpp):
// - Exact doubles. Its formatter (xmlrpc_formatFloat) prints about 16
//   significant digits computed in floating point, truncating, and its
//   parser sums the digits in floating point too, so even "0.3" comes back
//   one ulp off. Measured over the generator's ranges: about 70% of values
//   move, by at most 17 ulps (relative error below 2.5e-15); the error grows
//   past 1e-14 near 1e-300, denormals lose digits or become 0, and -0.0
//   becomes 0. XML-RPC has no exponent: 1e300 is written as 301 digits.
// - Characters above U+FFFD in strings (emoji, any 4-byte UTF-8): refused
//   when a value is built and when a document is parsed. encode throws
//   std::invalid_argument; unsupported() says so up front.
// - CR in strings: encode writes it as &#x0d;, but the parser turns CR and
//   CRLF into LF.
// - NaN and infinity: XML-RPC has no spelling for them; xmlrpc-c writes NaN
//   as 0 and overflows the stack on infinity, so encode refuses both.
#include "xmlrpc/xmlrpc_codec.h"

#include <optional>
#include <string>
#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/xml.hpp>

#include "xmlrpc/xmlrpc_guard.h"
#include "xmlrpc/xmlrpc_limits.h"
#include "xmlrpc/xmlrpc_mapping.h"

namespace wsb::xmlrpc {
namespace {

class XmlrpcCodec final : public StagedCodec {
 public:
  XmlrpcCodec() { raise_xml_size_limit(); }

  std::string unsupported(const Payload& payload) const override {
    return unsupported_reason(payload);
  }

  // The loss measured above, with margin: within 1e-14 relative (seen: at
  // most 2.3e-15 over the generator's ranges), and nothing left below
  // 1e-290 in magnitude.
  DoubleFidelity double_fidelity() const override { return {1e-14, 1e-290}; }

  std::string content_type() const override { return "text/xml"; }

  void bind(const Payload& in) override {
    bound_.reset();
    bound_.emplace(payload_value(in));
  }

  void write(std::string& out) override {
    if (!bound_) throw std::logic_error("xmlrpc: write without bind");
    // generateResponse assigns a fresh string: out's capacity is not reused.
    xmlrpc_c::xml::generateResponse(xmlrpc_c::rpcOutcome(*bound_), xmlrpc_dialect_i8, &out);
  }

  void read(std::string_view wire) override {
    result_.reset();
    if (fresh()) {
      // xmlrpc-c builds a new value tree on every parse whatever the
      // policy; what is left to remake is ours: the copy's buffer and the
      // guard's element stack.
      wire_ = std::string();
      guard_ = InputGuard();
    }
    // parseResponse takes a std::string: one copy, into a buffer reused
    // unless the policy is fresh.
    wire_.assign(wire);
    xmlrpc_c::rpcOutcome outcome;
    parse_response(wire_, guard_, outcome);
    if (!outcome.succeeded()) {
      const xmlrpc_c::fault f = outcome.getFault();
      throw DecodeError("xmlrpc: fault response " + std::to_string(static_cast<int>(f.getCode())) +
                        ": " + f.getDescription());
    }
    result_.emplace(outcome.getResult());
  }

  void unbind(Payload& out) override {
    if (!result_) throw std::logic_error("xmlrpc: unbind without a successful read");
    out = payload_of(*result_);
  }

 private:
  // xmlrpc_c::value cannot be reassigned once it holds a value, hence optional.
  std::optional<xmlrpc_c::value> bound_;   // bind's tree
  std::optional<xmlrpc_c::value> result_;  // read's tree
  std::string wire_;
  InputGuard guard_;
};

}  // namespace

std::unique_ptr<Codec> make_xmlrpc_codec() { return std::make_unique<XmlrpcCodec>(); }

}  // namespace wsb::xmlrpc
