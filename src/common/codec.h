// The codec interface: every wire format sits behind it.
//
// A codec turns the common model into exactly the bytes its protocol puts on
// the wire for a response carrying the payload, and back. Instances hold
// reusable state (buffers, library contexts) and are not thread-safe: make
// one per thread.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "common/payload.h"

namespace wsb {

// Thrown by Codec::decode (and the decode stages) for malformed or
// unexpected input. Decoders never return partial results: on throw, the
// output payload's contents are unspecified and must not be used.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Deepest nesting (JSON arrays and objects, XML elements) any decoder
// accepts: the payloads nest a few levels, and refusing deeper input before
// a recursive parse keeps a hostile body from overflowing the stack.
inline constexpr std::size_t kMaxNestingDepth = 256;

// Optional split of encode and decode through the library's own
// representation (gSOAP structs, xmlrpc-c values, protobuf messages, a DOM),
// so the benchmark can show which part costs what. The representation lives
// inside the codec between calls.
class CodecStages {
 public:
  virtual ~CodecStages() = default;
  // Which directions go through an intermediate representation.
  virtual bool splits_encode() const = 0;
  virtual bool splits_decode() const = 0;
  // encode == bind then write.
  virtual void bind(const Payload& in) = 0;  // model -> representation
  virtual void write(std::string& out) = 0;  // representation -> bytes
  // decode == read then unbind.
  virtual void read(std::string_view wire) = 0;  // bytes -> representation
  virtual void unbind(Payload& out) = 0;         // representation -> model
  // True when unbind moves out of the representation instead of copying
  // (the next read discards it anyway, and a library user would move):
  // each unbind then needs its own read.
  virtual bool unbind_consumes() const { return false; }
};

// What a codec does with the library state it allocates (messages,
// documents, contexts, parsers, buffers) from one call to the next.
enum class Allocation {
  reuse,  // keep it and reuse what the library lets one reuse: steady state
  fresh,  // make it anew on every call, as typical user code does
};

class Codec {
 public:
  virtual ~Codec() = default;

  // Takes effect from the next call. docs/reference/codecs.md says, per codec, what
  // each policy keeps or remakes.
  void set_allocation(Allocation allocation) { allocation_ = allocation; }
  Allocation allocation() const { return allocation_; }

  // Why this codec cannot carry this payload at all (a limit of its
  // library, e.g. xmlrpc-c and 4-byte UTF-8), or empty if it can. Tests and
  // benchmarks skip such payloads with the reason.
  virtual std::string unsupported(const Payload&) const { return {}; }

  // Why this codec has nothing of its own to measure for this payload
  // (e.g. MTOM without a binary is plain SOAP), or empty if it has. The
  // codec still round-trips it; benchmarks skip it with the reason.
  virtual std::string not_applicable(const Payload&) const { return {}; }

  // How exactly doubles survive a round trip: bit-exact unless the library
  // cannot do better (xmlrpc-c). Verification compares with this.
  virtual DoubleFidelity double_fidelity() const { return {}; }

  // Replaces `out` with the wire bytes. Reusing `out` across calls keeps its
  // capacity, so a timed loop measures encoding, not buffer growth.
  virtual void encode(const Payload& in, std::string& out) = 0;

  // encode() of a bare Message (a client sending one), without copying it
  // into a Payload first. The default does copy; codecs that visit the
  // payload override it to encode the message in place (visit_model).
  virtual void encode_message(const Message& in, std::string& out) { encode(Payload{in}, out); }

  // Replaces `out` with the decoded payload; throws DecodeError.
  virtual void decode(std::string_view wire, Payload& out) = 0;

  // The HTTP Content-Type of the last encode's output.
  virtual std::string content_type() const = 0;

  // Non-null when the codec can report its binding step apart.
  virtual CodecStages* stages() { return nullptr; }

 protected:
  bool fresh() const { return allocation_ == Allocation::fresh; }

 private:
  Allocation allocation_ = Allocation::reuse;
};

// Applies `visitor` to the alternative a Payload holds, or directly to a
// bare alternative (a Message): one encoder serves encode and encode_message.
template <class Visitor, class Model>
decltype(auto) visit_model(Visitor&& visitor, const Model& model) {
  if constexpr (std::is_same_v<Model, Payload>)
    return std::visit(std::forward<Visitor>(visitor), model);
  else
    return std::forward<Visitor>(visitor)(model);
}

// A codec that goes through its library's representation both ways:
// encode and decode are exactly the stages, so what the stage benchmarks
// time adds up to what encode/decode time.
class StagedCodec : public Codec, public CodecStages {
 public:
  void encode(const Payload& in, std::string& out) final {
    bind(in);
    write(out);
  }
  void decode(std::string_view wire, Payload& out) final {
    read(wire);
    unbind(out);
  }
  CodecStages* stages() final { return this; }
  bool splits_encode() const final { return true; }
  bool splits_decode() const final { return true; }
};

class RpcBinding;  // common/rpc_binding.h

struct CodecEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Codec>()> make;
  // For a protocol with requests of its own (SOAP, XML-RPC): how the
  // common transport carries its calls. Empty for REST bodies.
  std::function<std::unique_ptr<RpcBinding>()> make_rpc;
  // Set to another codec's name when this one writes that codec's bytes and
  // only reads them another way (xml-dom: xml through a tree). It has
  // decode rows of its own but no encode rows, and no stack carries it.
  std::string decode_path_of = {};
  // True for a codec that carries only Text payloads, as their bare bytes
  // (text/plain): it has no syntax, so any UTF-8 is a valid body, and tests
  // of malformed, nested or hostile documents do not apply to it.
  bool texts_only = false;
  // Set to another codec's name when this one is that codec with one
  // library choice changed (json-simdjson: the parser; xml-unwrapped: the
  // base64 line breaks), so that a verdict resting on the choice has a row
  // of the other choice beside it. The beast stack carries it (by
  // X-Wsbench-Codec) even when it is a decode path; its round trips are in
  // the full sweep only.
  std::string alternative_of = {};
};

// Every codec wsbench knows, in report order (src/codecs.cpp).
const std::vector<CodecEntry>& all_codecs();
// Throws std::invalid_argument for an unknown name.
const CodecEntry& find_codec(std::string_view name);

}  // namespace wsb
