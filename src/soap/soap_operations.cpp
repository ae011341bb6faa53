// The gsoap server's request handling: what each operation of the generated
// wsbenchService answers, and the WSDL. No sockets or connection state here
// (soap_server.cpp and the files soap_connection.h lists have them); see
// docs/servers/stacks/gsoap.md.
//
// A request that came in as MTOM is answered in MTOM, one that came as a
// SOAP with Attachments package in SwA. A wsb::ServiceError,
// DecodeError or a request the model rejects is a SOAP-ENV:Client fault,
// anything else SOAP-ENV:Server.
#include "soap/soap_operations.h"

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "common/codec.h"
#include "common/phases.h"
#include "soap/soap_documents.h"
#include "soap/soap_stack.h"

namespace wsb::soap {

int Operations::ping(wsb__pingResponse& response) {
  return run([&] {
    parsed();
    response.reply = service_.ping();
    serviced();
  });
}

int Operations::get(const std::string& kind, LONG64 n, wsb__getResponse& response) {
  return run([&] {
    if (n < 0) throw ServiceError(ServiceError::Kind::bad_request, "negative size");
    const PayloadSpec spec{kind_from_name(kind), static_cast<std::size_t>(n)};
    parsed();
    got_ = service_.get(spec);
    serviced();
    const Binder binder = this->binder();
    binder.payload(*got_, response.__union_payload, response.payload);
    used_ = binder.used();
  });
}

int Operations::echo(wsb__Payload* payload, wsb__echoResponse& response) {
  return run([&] {
    if (payload == nullptr) throw DecodeError("echo without a payload");
    // Materialised in the model, as every stack's echo is, then bound back:
    // the server's parse and marshal costs are those of a real service.
    echoed_ = unbinder().payload(payload->__union_payload, payload->payload, "payload");
    parsed();
    const Payload& echoed = service_.echo(echoed_);
    serviced();
    const Binder binder = this->binder();
    binder.payload(echoed, response.__union_payload, response.payload);
    used_ = binder.used();
  });
}

int Operations::RegisterClient(wsb__RegisterClientResponse& response) {
  return run([&] {
    parsed();
    response.queue = service_.register_client();
    serviced();
  });
}

int Operations::SendMessage(const std::string& queue, wsb__Message* message,
                            wsb__SendMessageResponse&) {
  return run([&] {
    if (message == nullptr) throw DecodeError("SendMessage without a message");
    Message sent = unbinder().message(*message);
    parsed();
    service_.send_message(queue, std::move(sent));
    serviced();
  });
}

int Operations::ReceiveMessage(const std::string& queue, wsb__ReceiveMessageResponse& response) {
  return run([&] {
    parsed();
    received_ = service_.receive_messages(queue);
    serviced();
    response.message.resize(received_.size());
    const Binder binder = this->binder();
    for (std::size_t i = 0; i < received_.size(); ++i)
      binder.message(received_[i], response.message[i]);
    used_ = binder.used();
  });
}

int Operations::UnregisterClient(const std::string& queue, wsb__UnregisterClientResponse&) {
  return run([&] {
    parsed();
    service_.unregister_client(queue);
    serviced();
  });
}

int Operations::primes(unsigned int n, std::string& result) {
  return run([&] {
    parsed();
    result = service_.primes(n);
    serviced();
  });
}

int Operations::define(const std::string& word, std::string& definition) {
  return run([&] {
    parsed();
    definition = service_.define(word);
    serviced();
  });
}

// The payload is unbound into the model, as echo's is, so the receipt is
// of what a service would have received.
int Operations::upload(wsb__Payload* payload, std::string& receipt) {
  return run([&] {
    if (payload == nullptr) throw DecodeError("upload without a payload");
    echoed_ = unbinder().payload(payload->__union_payload, payload->payload, "payload");
    parsed();
    receipt = service_.upload(echoed_);
    serviced();
  });
}

int Operations::put(const std::string& word, const std::string& definition, wsb__putResponse&) {
  return run([&] {
    parsed();
    service_.put(word, definition);
    serviced();
  });
}

void Operations::release() {
  release_message(soap);
  got_.reset();
  // Moved out, not assigned over: a string assigned from an empty one
  // keeps its capacity, and the last echo's text stayed with the
  // connection.
  { [[maybe_unused]] const Payload done = std::move(echoed_); }
  received_.clear();
}

// Picks the reply's format and turns exceptions into SOAP Faults (an
// exception must not unwind through the engine). The operation marks
// kParsed once its request is in the model: gSOAP has deserialised it into
// its structs before calling, and unbinding them is part of the parse.
template <class F>
int Operations::run(F&& operation) {
  if (!exchange_.operation_entered(soap)) return soap->error = SOAP_EOF;
  // gSOAP sets SOAP_ENC_MTOM in soap::mode when the request was an MTOM
  // package; any other MIME package (SwA) leaves its parts in
  // soap::mime.list (SOAP_ENC_MIME is cleared at its closing boundary). The
  // reply's format is soap::omode, which persists on the connection, so it
  // is set either way.
  if ((soap->mode & SOAP_ENC_MTOM) != 0)
    attachments_ = Attachments::mtom;
  else if (soap->mime.list != nullptr)
    attachments_ = Attachments::swa;
  else
    attachments_ = Attachments::inline_base64;
  if (attachments_ == Attachments::mtom)
    soap_set_omode(soap, SOAP_ENC_MTOM);
  else
    soap_clr_omode(soap, SOAP_ENC_MTOM);
  // SwA: the binder queues the reply's parts on the context as it binds.
  if (attachments_ == Attachments::swa)
    soap_set_mime(soap, nullptr, nullptr);
  else
    soap_clr_mime(soap);
  used_ = {};
  try {
    operation();
    // A reply without parts goes as plain SOAP, as MTOM's does.
    if (attachments_ == Attachments::swa && soap->mime.first == nullptr) soap_clr_mime(soap);
    declare_used(soap, used_);
    return SOAP_OK;
  } catch (const ServiceError& e) {
    return client_fault(e.what());
  } catch (const DecodeError& e) {
    return client_fault(e.what());
  } catch (const std::invalid_argument& e) {  // kind_from_name
    return client_fault(e.what());
  } catch (const std::exception& e) {
    declare_used(soap, kFaultNamespaces);
    if (!exchange_.responding) serviced();
    exchange_.refused = true;
    soap_clr_mime(soap);  // a Fault carries no parts
    return soap_receiver_fault(soap, e.what(), nullptr);
  }
}

int Operations::client_fault(const char* what) {
  declare_used(soap, kFaultNamespaces);
  if (!exchange_.responding) serviced();
  exchange_.refused = true;
  soap_clr_mime(soap);  // a Fault carries no parts
  return soap_sender_fault(soap, what, nullptr);
}

void Operations::parsed() { mark_server(kParsed); }

void Operations::serviced() {
  mark_server(kServiced);
  exchange_.responding = true;
}

int answer_get(Context* ctx, const Endpoint& listening) {
  const std::string_view path = ctx->path;
  // gSOAP's server sets soap::endpoint to "http://" + Host header + path.
  std::string_view addressed = ctx->endpoint;
  if (addressed.size() > path.size() + 7 && addressed.ends_with(path))
    addressed.remove_suffix(path.size());
  else
    addressed = {};
  const std::string location =
      (addressed.empty() ? "http://" + listening.to_string() : std::string(addressed)) + "/";
  const auto document = published_document(path, location);
  if (!document) return 404;
  ctx->http_content = "text/xml; charset=utf-8";
  if (soap_response(ctx, SOAP_FILE) || soap_send_raw(ctx, document->data(), document->size()) ||
      soap_end_send(ctx))
    return soap_closesock(ctx);
  return SOAP_OK;
}

}  // namespace wsb::soap
