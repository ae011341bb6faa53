// The REST resources (the table is in docs/reference/operations.md). Phase
// points: kParsed once the request is in the model (for a request without a
// body: after routing and negotiation), kServiced after the Service call,
// kMarshalled after the reply body is encoded. A request that asks for them
// (kTimingRequestHeader) gets the same intervals back in a Server-Timing
// header, so phases can be split across hosts too.
#include "rest/rest_handler.h"

#include <charconv>
#include <optional>
#include <stdexcept>

#include "common/clock.h"
#include "common/phases.h"
#include "common/service.h"

namespace wsb::rest {
namespace {

constexpr unsigned kOk = 200, kCreated = 201, kNoContent = 204, kBadRequest = 400, kNotFound = 404,
                   kMethodNotAllowed = 405, kNotAcceptable = 406, kUnsupportedMediaType = 415,
                   kInternalError = 500;

// Error replies quote at most this much of a client-supplied string.
constexpr std::size_t kQuoteLimit = 100;

// A reply other than success, raised anywhere in the request path.
struct HttpError {
  unsigned status;
  std::string message;
  std::string_view allow = {};  // for 405
};

std::string quote(std::string_view s) {
  if (s.size() > kQuoteLimit) return "'" + std::string(s.substr(0, kQuoteLimit)) + "...'";
  return "'" + std::string(s) + "'";
}

enum class Route { ping, payload, echo, queues, queue, primes, word };

struct Target {
  Route route;
  std::string_view arg;  // payload label, queue id, prime count or word
};

std::optional<Target> route_of(std::string_view path) {
  auto tail = [&](std::string_view prefix, std::string_view& arg) {
    if (path.size() <= prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
    arg = path.substr(prefix.size());
    return true;
  };
  std::string_view arg;
  if (path == "/ping") return Target{Route::ping, {}};
  if (path == "/echo") return Target{Route::echo, {}};
  if (path == "/queues") return Target{Route::queues, {}};
  // Labels contain slashes ("ints/3200"); queue ids and counts do not.
  if (tail("/payloads/", arg)) return Target{Route::payload, arg};
  if (tail("/queues/", arg) && arg.find('/') == std::string_view::npos)
    return Target{Route::queue, arg};
  if (tail("/primes/", arg) && arg.find('/') == std::string_view::npos)
    return Target{Route::primes, arg};
  if (tail("/words/", arg) && arg.find('/') == std::string_view::npos)
    return Target{Route::word, arg};
  return std::nullopt;
}

// The methods a route allows, for the check and the Allow header of a 405.
std::string_view allowed_methods(Route route) {
  switch (route) {
    // HEAD wherever GET is (RFC 9110 9.1): the connection code answers it
    // as a GET without the body.
    case Route::ping:
    case Route::payload:
    case Route::primes:
      return "GET, HEAD";
    case Route::echo:
    case Route::queues:
      return "POST";
    case Route::queue:
      return "GET, HEAD, PUT, DELETE";
    case Route::word:
      return "GET, HEAD, PUT";
  }
  return "";
}

bool allows(Route route, Method method) {
  switch (route) {
    case Route::ping:
    case Route::payload:
    case Route::primes:
      return method == Method::get;
    case Route::echo:
    case Route::queues:
      return method == Method::post;
    case Route::queue:
      return method == Method::get || method == Method::put || method == Method::delete_;
    case Route::word:
      return method == Method::get || method == Method::put;
  }
  return false;
}

void error_reply(RestResponse& res, const HttpError& e) {
  res.status = e.status;
  res.content_type = media_type(Format::text);
  res.location.clear();
  res.allow = e.allow;
  res.server_timing.clear();
  res.body.assign(e.message);
}

}  // namespace

void RestHandler::handle(const RestRequest& req, RestResponse& res) {
  // The reply starts empty; its strings keep their capacity.
  res.status = kOk;
  res.content_type.clear();
  res.location.clear();
  res.allow = {};
  res.server_timing.clear();
  res.body.clear();
  marks_[0] = req.received_ns;
  server_timing_ = req.server_timing;
  try {
    respond(req, res);
  } catch (const HttpError& e) {
    error_reply(res, e);
  } catch (const DecodeError& e) {
    error_reply(res, {kBadRequest, e.what()});
  } catch (const ServiceError& e) {
    error_reply(res, {static_cast<unsigned>(e.http_status()), e.what()});
  } catch (const std::exception& e) {
    // E.g. a payload the response codec cannot carry (a NUL in XML).
    error_reply(res, {kInternalError, e.what()});
  }
}

void RestHandler::release_memory() {
  // Moved out, not assigned over: a string assigned from an empty one
  // keeps its capacity (measured: a 24 MiB echo's text stayed).
  const auto drop = [](auto& value) {
    [[maybe_unused]] const auto dead = std::move(value);
    value = {};
  };
  drop(payload_);
  drop(word_);
  got_.reset();
  drop(call_);
  // Codecs and bindings keep parse trees and buffers; they are made again
  // on the next request that needs them.
  codecs_.clear();
  by_format_ = {};
  named_ = nullptr;
  bindings_.clear();
}

void RestHandler::respond(const RestRequest& req, RestResponse& res) {
  if (!req.codec.empty())
    if (RpcBinding* rpc = rpc_by_name(req.codec)) return respond_rpc(req, *rpc, res);
  const std::string_view path = req.target.substr(0, req.target.find('?'));
  const auto route = route_of(path);
  if (!route) throw HttpError{kNotFound, "no resource at " + quote(path)};
  if (!allows(route->route, req.method))
    throw HttpError{kMethodNotAllowed,
                    std::string(req.method_name) + " is not allowed on " + quote(path),
                    allowed_methods(route->route)};
  named_ = nullptr;
  if (!req.codec.empty()) {
    named_ = codec_by_name(req.codec);
    if (named_ == nullptr)
      throw HttpError{kBadRequest,
                      std::string(kCodecHeader) + " names no codec: " + quote(req.codec)};
  }

  switch (route->route) {
    case Route::ping: {
      Codec& out = response_codec(req, true, Format::json);
      parsed();
      payload_ = Text{service_.ping()};
      serviced();
      write_payload(out, payload_, res);
      break;
    }
    case Route::payload: {
      PayloadSpec spec;
      try {
        spec = parse_spec(route->arg);
      } catch (const std::invalid_argument&) {
        throw HttpError{kNotFound, "no payload " + quote(route->arg)};
      }
      Codec& out = response_codec(req, spec.kind == Kind::text, Format::json);
      parsed();
      const std::shared_ptr<const Payload> payload = service_.get(spec);
      serviced();
      write_payload(out, *payload, res);
      break;
    }
    case Route::echo: {
      // The reply mirrors the request's format unless Accept says otherwise.
      const Format in = read_payload(req, true);
      Codec& out = response_codec(req, std::holds_alternative<Text>(payload_), in);
      parsed();
      const Payload& echoed = service_.echo(payload_);
      serviced();
      write_payload(out, echoed, res);
      break;
    }
    case Route::queues: {
      parsed();
      const std::string id = service_.register_client();
      serviced();
      res.status = kCreated;
      res.location = "/queues/" + id;
      marshalled(res);
      break;
    }
    case Route::queue:
      queue(req, route->arg, res);
      break;
    case Route::primes: {
      std::uint32_t n = 0;
      const char* end = route->arg.data() + route->arg.size();
      const auto [ptr, ec] = std::from_chars(route->arg.data(), end, n);
      if (ec != std::errc{} || ptr != end)
        throw HttpError{kNotFound, "no prime count " + quote(route->arg)};
      Codec& out = response_codec(req, true, Format::json);
      parsed();
      payload_ = Text{service_.primes(n)};
      serviced();
      write_payload(out, payload_, res);
      break;
    }
    case Route::word:
      word(req, route->arg, res);
      break;
  }
}

// E8: GET answers the definition as text in the negotiated format; PUT
// takes it the same way and answers 204.
void RestHandler::word(const RestRequest& req, std::string_view word_view, RestResponse& res) {
  word_.assign(word_view);
  if (req.method == Method::put) {
    read_payload(req, true);
    auto* definition = std::get_if<Text>(&payload_);
    if (definition == nullptr) throw HttpError{kBadRequest, "PUT /words/{word} takes a text"};
    parsed();
    service_.put(word_, definition->value);
    serviced();
    res.status = kNoContent;
    marshalled(res);
    return;
  }
  Codec& out = response_codec(req, true, Format::json);
  parsed();
  payload_ = Text{service_.define(word_)};
  serviced();
  write_payload(out, payload_, res);
}

void RestHandler::queue(const RestRequest& req, std::string_view id_view, RestResponse& res) {
  const std::string id(id_view);
  switch (req.method) {
    case Method::put: {
      read_payload(req, false);
      auto* message = std::get_if<Message>(&payload_);
      if (message == nullptr) throw HttpError{kBadRequest, "PUT /queues/{id} takes a message"};
      parsed();
      service_.send_message(id, std::move(*message));
      serviced();
      res.status = kNoContent;
      marshalled(res);
      break;
    }
    case Method::get: {
      Codec& out = response_codec(req, false, Format::json);
      parsed();
      payload_ = MessageList{service_.receive_messages(id)};
      serviced();
      write_payload(out, payload_, res);
      break;
    }
    default: {  // DELETE; allows() let nothing else through
      parsed();
      service_.unregister_client(id);
      serviced();
      res.status = kNoContent;
      marshalled(res);
      break;
    }
  }
}

// Decodes the request body into payload_ with the codec X-Wsbench-Codec or
// Content-Type names; text/plain (if `text_allowed`) is taken as a Text.
// Returns the format, for mirroring in the reply.
Format RestHandler::read_payload(const RestRequest& req, bool text_allowed) {
  if (named_ != nullptr) {
    named_->decode(req.body, payload_);
    return Format::json;  // unused: the named codec answers too
  }
  const auto format = format_of_content_type(req.content_type);
  if (!format || (*format == Format::text && !text_allowed))
    throw HttpError{kUnsupportedMediaType,
                    "cannot read a body of type " + quote(req.content_type) +
                        "; send application/json, application/xml or application/x-protobuf"};
  // The text codec refuses a body that is not UTF-8, which echo would
  // otherwise return as it came, rewritten by no parser.
  codec_for(*format).decode(req.body, payload_);
  return *format;
}

// The codec for the reply.
Codec& RestHandler::response_codec(const RestRequest& req, bool text_allowed, Format preferred) {
  if (named_ != nullptr) return *named_;
  const auto format = negotiate(req.accept, text_allowed, preferred);
  if (!format)
    throw HttpError{kNotAcceptable,
                    "cannot answer in any of " + quote(req.accept) +
                        "; this resource is available as application/json, application/xml, "
                        "application/x-protobuf" +
                        (text_allowed ? ", text/plain" : "")};
  return codec_for(*format);
}

void RestHandler::write_payload(Codec& codec, const Payload& payload, RestResponse& res) {
  codec.encode(payload, res.body);
  res.content_type = codec.content_type();
  marshalled(res);
}

void RestHandler::parsed() { point(kParsed); }
void RestHandler::serviced() { point(kServiced); }
void RestHandler::marshalled(RestResponse& res) {
  point(kMarshalled);
  if (!server_timing_ || marks_[0] == 0) return;
  res.server_timing =
      format_server_timing({marks_[1] - marks_[0], marks_[2] - marks_[1], marks_[3] - marks_[2]});
}

// One clock read, for the probe and Server-Timing alike; none when the
// connection code took no received time (neither wants the points).
void RestHandler::point(Mark m) {
  if (marks_[0] == 0) return;
  const std::int64_t ns = now_ns();
  marks_[m - kRequestReceived] = ns;
  mark_server(m, ns);
}

// One instance per codec and connection (codecs are not thread-safe), made
// on first use.
Codec* RestHandler::codec_by_name(std::string_view name) {
  const auto& entries = all_codecs();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name != name) continue;
    if (codecs_.size() < entries.size()) codecs_.resize(entries.size());
    if (!codecs_[i]) codecs_[i] = entries[i].make();
    return codecs_[i].get();
  }
  return nullptr;
}

Codec& RestHandler::codec_for(Format format) {
  Codec*& cached = by_format_[static_cast<std::size_t>(format)];
  if (cached == nullptr) cached = codec_by_name(codec_name(format));
  if (cached == nullptr) throw std::logic_error("rest: codec " + quote(codec_name(format)));
  return *cached;
}

}  // namespace wsb::rest
