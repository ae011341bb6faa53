// The common transport's RPC dispatch (rest_handler.h): a call of a
// protocol with requests of its own (SOAP, XML-RPC), POSTed to its
// binding's path, decoded into the model, run on the Service and answered
// with the protocol's reply, or its fault for anything refused. Phase
// points as for REST: kParsed once the call is in the model, kServiced
// after the Service returns, kMarshalled once the reply is encoded.
#include <stdexcept>
#include <string>
#include <utility>

#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "rest/rest_handler.h"

namespace wsb::rest {

void RestHandler::respond_rpc(const RestRequest& req, RpcBinding& rpc, RestResponse& res) {
  const std::string_view path = req.target.substr(0, req.target.find('?'));
  if (req.method == Method::get) {
    if (auto document = rpc.document(req.target, req.host)) {
      res.body = std::move(*document);
      res.content_type = "text/xml; charset=utf-8";
      return;
    }
  }
  // Not a call at all: plain HTTP errors, as for REST.
  if (path != rpc.path() || req.method != Method::post) {
    res.content_type = media_type(Format::text);
    if (path != rpc.path()) {
      res.status = 404;
      res.body = std::string(req.codec) + " calls are POSTed to " + std::string(rpc.path());
    } else {
      res.status = 405;
      res.allow = "POST";
      res.body = std::string(req.method_name) + " is not a " + std::string(req.codec) + " call";
    }
    return;
  }
  unsigned status = 0;
  std::string message;
  try {
    const auto query = req.target.find('?');
    rpc.set_call_query(query == std::string_view::npos ? std::string_view{}
                                                       : req.target.substr(query + 1));
    serve_call(req.body, rpc, res);
    return;
  } catch (const DecodeError& e) {
    status = 400;
    message = e.what();
  } catch (const ServiceError& e) {
    status = static_cast<unsigned>(e.http_status());
    message = e.what();
  } catch (const std::exception& e) {
    status = 500;
    message = e.what();
  }
  got_.reset();
  res.server_timing.clear();
  rpc.encode_fault(Fault{status, message}, res.body);
  res.status = rpc.fault_status();
  res.content_type = rpc.reply_content_type();
}

void RestHandler::serve_call(std::string_view body, RpcBinding& rpc, RestResponse& res) {
  DecodedCall& call = call_;
  rpc.decode_call(body, call);
  parsed();
  const Payload* result = &payload_;
  switch (call.op) {
    case Operation::ping:
      payload_ = Text{service_.ping()};
      break;
    case Operation::get:
      got_ = service_.get(call.spec);
      result = got_.get();
      break;
    case Operation::echo:  // the identity: what was decoded goes back
      result = &service_.echo(call.payload);
      break;
    case Operation::register_client:
      payload_ = Text{service_.register_client()};
      break;
    case Operation::send_message: {
      auto* message = std::get_if<Message>(&call.payload);
      if (message == nullptr) throw std::logic_error("rpc: send_message decoded without a message");
      service_.send_message(call.queue, std::move(*message));
      break;
    }
    case Operation::receive_messages:
      payload_ = MessageList{service_.receive_messages(call.queue)};
      break;
    case Operation::unregister_client:
      service_.unregister_client(call.queue);
      break;
    case Operation::primes:
      payload_ = Text{service_.primes(call.n)};
      break;
    case Operation::define:
      payload_ = Text{service_.define(call.word)};
      break;
    case Operation::put:
      service_.put(call.word, call.definition);
      break;
  }
  serviced();
  rpc.encode_reply(call.op, *result, res.body);
  res.content_type = rpc.reply_content_type();
  got_.reset();
  marshalled(res);
}

// One binding per codec and connection, made on first use.
RpcBinding* RestHandler::rpc_by_name(std::string_view name) {
  const auto& entries = all_codecs();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name != name) continue;
    if (!entries[i].make_rpc) return nullptr;
    if (bindings_.size() < entries.size()) bindings_.resize(entries.size());
    if (!bindings_[i]) bindings_[i] = entries[i].make_rpc();
    return bindings_[i].get();
  }
  return nullptr;
}

}  // namespace wsb::rest
