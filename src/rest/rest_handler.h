// The REST API as resources: what each route does with a request that has
// been read whole (route, negotiate, decode, call the Service, encode), free
// of any HTTP library or socket. The beast stack's connection code
// (src/beast/beast_server.cpp) reads requests and writes what this answers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/codec.h"
#include "common/payload.h"
#include "common/phases.h"
#include "common/rpc_binding.h"
#include "rest/http_negotiation.h"

namespace wsb {
class Service;
}

namespace wsb::rest {

// The HTTP header that selects a codec for both directions on the common
// transport (every codec over the same HTTP code).
inline constexpr const char* kCodecHeader = "X-Wsbench-Codec";
// A request carrying this header (any value) gets the server's phases back
// in a Server-Timing header; others do not pay for building it.
inline constexpr const char* kTimingRequestHeader = kServerTimingRequestHeader;

enum class Method { get, post, put, delete_, other };

// A request read whole. Views into the connection's buffers, valid for the
// duration of RestHandler::handle.
struct RestRequest {
  Method method = Method::other;
  std::string_view method_name;  // as sent, for error messages
  std::string_view target;       // path and query
  std::string_view content_type;
  std::string_view accept;
  std::string_view codec;  // the X-Wsbench-Codec header, empty if absent
  std::string_view body;
  // When the last byte was read (kRequestReceived); 0 if neither a probe
  // nor Server-Timing wants the points, and then none is marked.
  std::int64_t received_ns = 0;
  bool server_timing = false;  // the request carries kTimingRequestHeader
  std::string_view host;       // the Host header, empty if absent
};

// What to answer. `body` is the connection's reusable buffer.
struct RestResponse {
  explicit RestResponse(std::string& reused_body) : body(reused_body) {}
  unsigned status = 200;
  std::string content_type;   // empty: no Content-Type
  std::string location;       // 201 Created
  std::string_view allow;     // 405
  std::string server_timing;  // parse, service, marshal in ms, if asked
  std::string& body;
};

// One per connection: it keeps a codec per format and the decoded payload
// between requests, so a steady state allocates little. Not thread-safe.
class RestHandler {
 public:
  explicit RestHandler(Service& service) : service_(service) {}

  // Fills `res` (reset first) for `req`; never throws for anything a client sent (bad
  // input becomes a 4xx, a failure of ours a 500). Marks kParsed,
  // kServiced and kMarshalled (mark_server) when req.received_ns is set. A
  // request whose X-Wsbench-Codec names a codec with an RPC binding is a
  // call of that protocol (rpc_handler.cpp), answered by its reply or fault.
  void handle(const RestRequest& req, RestResponse& res);

  // Frees what the last requests left for the next to reuse (decoded
  // payloads, codecs' buffers): for a connection gone idle after a large
  // body.
  void release_memory();

 private:
  void respond(const RestRequest& req, RestResponse& res);
  // rpc_handler.cpp
  void respond_rpc(const RestRequest& req, RpcBinding& rpc, RestResponse& res);
  void serve_call(std::string_view body, RpcBinding& rpc, RestResponse& res);
  RpcBinding* rpc_by_name(std::string_view name);
  void queue(const RestRequest& req, std::string_view id, RestResponse& res);
  void word(const RestRequest& req, std::string_view word, RestResponse& res);
  Format read_payload(const RestRequest& req, bool text_allowed);
  Codec& response_codec(const RestRequest& req, bool text_allowed, Format preferred);
  void write_payload(Codec& codec, const Payload& payload, RestResponse& res);
  void parsed();
  void serviced();
  void marshalled(RestResponse& res);
  void point(Mark m);
  Codec* codec_by_name(std::string_view name);
  Codec& codec_for(Format format);

  Service& service_;
  Payload payload_;   // decoded request body or service result
  std::string word_;  // the /words/{word} of the current request
  std::vector<std::unique_ptr<Codec>> codecs_;
  std::array<Codec*, 3> by_format_{};                  // json, xml, protobuf
  Codec* named_ = nullptr;                             // X-Wsbench-Codec of the current request
  std::vector<std::unique_ptr<RpcBinding>> bindings_;  // by codec registry index
  DecodedCall call_;                                   // the RPC call being served
  std::shared_ptr<const Payload> got_;                 // a get's result, until encoded
  std::array<std::int64_t, 4> marks_{};                // kRequestReceived..kMarshalled
  bool server_timing_ = false;
};

}  // namespace wsb::rest
