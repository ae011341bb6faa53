// The data binding between the payload model (common/payload.h) and the
// gSOAP structs soapcpp2 generates from wsbench_service.h, shared by the
// codecs (soap_codec.cpp) and the gsoap stack's server and client, so every
// path puts the same elements on the wire.
//
// Internal to src/soap: includes the generated soapH.h.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/codec.h"
#include "common/payload.h"
#include "soapH.h"

namespace wsb::soap {

using Context = ::soap;  // gSOAP's engine context (this namespace shadows the name)

// ---- input limits: every gSOAP limit the codecs and the stack change ----
//
// gSOAP 2.8.124's defaults, checked on this machine: recv_maxlength 2 GiB - 1,
// maxoccurs 100,000, maxlevel 10,000, maxlength 0 (unbounded); the library
// is built with SOAP_MAXALLOCSIZE 0 (no allocation cap).
//
// XML nesting depth (soap::maxlevel). Our deepest element is 11 levels down
// (Envelope/Body/getResponse/buildings/featureMember/Building/footprint/
// Polygon/exterior/LinearRing/posList); 32 also admits
// a SOAP Fault's detail and stops deeply nested junk early.
// gSOAP reads elements without recursing on unknown ones, so this tighter
// limit, not kMaxNestingDepth, is the one its input meets.
inline constexpr unsigned kMaxLevel = 32;
static_assert(kMaxLevel <= kMaxNestingDepth);
// String length (soap::maxlength): unbounded, as by default; the message
// size limit bounds it.
inline constexpr long kMaxStringBytes = 0;

// Whether elements of this local name are of simple type in wsbench's
// messages (simple_elements.cpp): markup inside one is refused
// (SimpleContentCheck, common/input_checks.h).
bool is_simple_element(std::string_view local_name);
// Whether they are xsd:base64Binary: their text is held to its lexical
// form, which gSOAP's reader does not check (SimpleContentCheck).
bool is_base64_element(std::string_view local_name);
// Those local names, for a search of a message (XmlTextCheck::base64_elements).
const std::vector<std::string>& base64_element_names();

// Sets the limits for messages of at most `max_message_bytes`
// (soap::recv_maxlength). Elements per array (soap::maxoccurs) follow from
// it, so the message size, not the count, is what binds: the default
// would stop an array of 100,001 ints, and the smallest array element,
// <wsb:item>0</wsb:item>, is over 16 bytes.
inline void apply_input_limits(Context* ctx, ULONG64 max_message_bytes) {
  ctx->recv_maxlength = max_message_bytes;
  ctx->maxoccurs = static_cast<std::size_t>(max_message_bytes / 16);
  ctx->maxlevel = kMaxLevel;
  ctx->maxlength = kMaxStringBytes;
}

// Releases the structs of one message (managed C++ objects, then
// everything else allocated in the context). Not soap_end: that also
// clears the engine's temporary tables (soap_free_temp, ~50,000
// instructions: memsets of its pointer and id hash tables), which the next
// message's soap_begin or soap_begin_recv clears anyway.
inline void release_message(Context* ctx) {
  soap_destroy(ctx);
  soap_dealloc(ctx, nullptr);
}

// The local port of a context's socket (a connection's, or a listener's
// ephemeral one); 0 if the socket is not open.
inline std::uint16_t socket_port(SOAP_SOCKET socket) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (!soap_valid_socket(socket) ||
      ::getsockname(socket, reinterpret_cast<sockaddr*>(&local), &length) != 0)
    return 0;
  // sin_port and sin6_port sit at the same offset.
  return ntohs(reinterpret_cast<const sockaddr_in&>(local).sin_port);
}

// ---- the namespaces a message declares ----
//
// gSOAP declares every namespace of its context's table on the envelope
// (soap_set_namespaces sets the table; soapcpp2 generates `namespaces`, all
// of the schema's). Reading needs them all: an element whose prefix is
// bound to a URI the table lacks matches nothing. A message written
// declares only those it uses: SOAP-ENV always, wsb unless it is a SOAP
// Fault, gml when it carries buildings inline, xop when it carries an MTOM
// attachment. The
// writer switches its context to the table of what it wrote, and a
// context that also reads switches back before reading. SOAP-ENC, xsi and
// xsd, which no document/literal message of this schema uses, are never
// declared.
struct UsedNamespaces {
  bool wsb = true;   // every message but a SOAP Fault
  bool gml = false;  // buildings inline: <gml:featureMember>, ...
  bool xop = false;  // a binary as an MTOM attachment: <xop:Include>
};
inline constexpr UsedNamespaces kFaultNamespaces{.wsb = false};

// The table a message that uses `used` is written with.
const Namespace* written_namespaces(UsedNamespaces used);

// Switches `ctx` to `table` unless it has it already (soap_set_namespaces
// copies the table into the context: a few hundred instructions).
inline void use_namespaces(Context* ctx, const Namespace* table) {
  if (ctx->namespaces != table) soap_set_namespaces(ctx, table);
}
// Before writing a message that uses `used`.
inline void declare_used(Context* ctx, UsedNamespaces used = {}) {
  use_namespaces(ctx, written_namespaces(used));
}
// Before reading a message: every namespace of the schema.
inline void read_all_namespaces(Context* ctx) { use_namespaces(ctx, namespaces); }

// ---- engine contexts writing to and reading from memory ----
// (the codecs, soap_codec.cpp, and the RPC binding, soap_rpc.cpp)

struct ContextDeleter {
  void operator()(Context* ctx) const {
    soap_destroy(ctx);
    soap_end(ctx);
    soap_free(ctx);
  }
};
using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

// A context with wsbench's namespace table; throws std::bad_alloc.
ContextPtr new_context();

// What a soap::frecv reading from memory does: moves up to `size` bytes
// of `input` into `buf`, returns how many.
std::size_t take_input(std::string_view& input, char* buf, std::size_t size);

// After a parse: whether only XML white space is left, in the context's
// buffer and in the `unread` input.
bool only_space_left(const Context* ctx, std::string_view unread);

// gSOAP stops reading at </SOAP-ENV:Envelope> (or the closing MIME
// boundary); like any XML parser we reject non-whitespace after it, in
// what it buffered or in the `unread` input. Throws DecodeError naming `who`.
void check_no_trailing_content(const Context* ctx, std::string_view unread, const std::string& who);

// MIME type of the attachment parts (MTOM and SwA). Setting it on an
// xsd__base64Binary is what tells gSOAP (in SOAP_ENC_MTOM mode) to send the
// binary as an attachment.
inline constexpr char kAttachmentType[] = "application/octet-stream";
// MIME type of the GML document soap-mtom and soap-swa attach for a
// BuildingCollection.
inline constexpr char kGmlDocumentType[] = "application/gml+xml";

// How a message carries its binaries (and the GML document).
enum class Attachments : std::uint8_t {
  inline_base64,  // soap: base64 in the element
  mtom,           // soap-mtom: MTOM/XOP parts, gSOAP's SOAP_ENC_MTOM
  swa,            // soap-swa: SOAP with Attachments MIME parts, <... href="cid:..."/>
};

// One SwA part a Binder made: the bytes (not copied: the model's, or the
// GML document in the binding context) and the Content-ID the envelope's
// href names.
struct SwaPart {
  const void* data;
  std::size_t size;
  const char* type;
  std::string content_id;  // "<attachment-N>"
};

// Queues `parts` on `ctx` as the MIME attachments of the next message it
// writes (soap_set_mime, then soap_set_mime_attachment for each), after the
// root part holding the envelope. Call after soap_begin.
void attach_swa_parts(Context* ctx, const std::vector<SwaPart>& parts);

// Model -> structs, allocated in `ctx` (released by release_message).
// Binaries point at the model's bytes rather than copying them, as a gSOAP
// application hands over its buffer (the engine only reads through
// __ptr): the model must outlive the serialization. Attachments::mtom
// marks binaries as attachments; use it exactly when the context writes
// SOAP_ENC_MTOM (outside MTOM a typed binary would switch gSOAP to DIME). With
// attachments (mtom, swa) a BuildingCollection becomes a GML document of
// its own (<wsb:buildings> as the root, written by gSOAP into memory the
// context owns) attached as buildingsDocument, and Unbinder parses it back.
// With `swa` a binary is an empty element with href="cid:attachment-N",
// and its bytes a MIME part: collected in `parts` when given (a context
// other than the writing one binds), else queued on `ctx` directly, which
// must then be set up for MIME (soap_set_mime) before binding.
class Binder {
 public:
  Binder(Context* ctx, Attachments attachments, std::vector<SwaPart>* parts = nullptr)
      : ctx_(ctx), attachments_(attachments), parts_(parts) {}

  // The choice of one payload: sets the union and its discriminant.
  void payload(const Payload& in, int& choice, wsb__PayloadChoice& out) const;
  void message(const Message& in, wsb__Message& out) const;
  wsb__Message* new_message(const Message& in) const;

  // The namespaces of what it has bound so far (not SOAP-ENV and wsb,
  // which every message uses).
  UsedNamespaces used() const { return used_; }

 private:
  struct Visitor;
  // Points at `data` (no copy); `type` is the MIME type of its part.
  xsd__base64Binary* binary(const void* data, std::size_t size, const char* type) const;
  xsd__base64Binary* gml_document(const wsb__BuildingList& buildings) const;

  Context* ctx_;
  Attachments attachments_;
  std::vector<SwaPart>* parts_;
  mutable UsedNamespaces used_;
};

// Structs -> model, every choice and pointer checked (DecodeError prefixed
// with `who`). Strings and arrays are moved out of the structs, as every
// caller discards them next: a struct is unbound once.
class Unbinder {
 public:
  explicit Unbinder(std::string who) : who_(std::move(who)) {}

  // `element`: the element holding the choice, for the error message.
  Payload payload(int choice, wsb__PayloadChoice& in, const char* element) const;
  Message message(wsb__Message& in) const;

  [[noreturn]] void fail(const std::string& what) const;

 private:
  template <class T>
  T& present(T* p, const char* element) const;
  template <class T>
  static T take(T& value) {
    return std::move(value);
  }
  void bytes_of(const xsd__base64Binary& b, Bytes& out) const;
  BuildingCollection buildings(wsb__BuildingList& in) const;
  BuildingCollection buildings_document(const xsd__base64Binary& document) const;

  std::string who_;
};

}  // namespace wsb::soap
