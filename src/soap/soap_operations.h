// The gsoap server's request handling (soap_operations.cpp), as the
// connection code (soap_server.cpp, soap_connection.h) uses it: it makes
// one Operations per connection and, for each request it has read up to
// the SOAP Body, calls dispatch(), which runs the operation and writes its
// reply. A fault is left in soap::error for the connection code to send.
// See docs/servers/stacks/gsoap.md.
//
// Internal to src/soap: includes the generated soapwsbenchService.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/payload.h"
#include "common/service.h"
#include "common/transport.h"
#include "soap/soap_binding.h"
#include "soapwsbenchService.h"

namespace wsb::soap {

// Name used in the server's errors.
inline constexpr char kServerName[] = "gsoap server";

// The request in progress on a connection, shared by the connection code,
// which resets it before each request, and the operations.
struct Exchange {
  bool refused = false;     // the operation answered with the fault in soap::error
  bool responding = false;  // kServiced is marked: what is sent now is the reply

  // The connection code's part when a request reaches its operation: it has
  // been read to its end and no reply has begun. Defined in
  // soap_serve_loop.cpp (not virtual: one connection model at a time).
  // False if the request cannot be read to its end after all (its body
  // was cut short): the operation is not run.
  bool operation_entered(Context* ctx);
};

// The generated service's operations over one connection's context.
class Operations final : public wsbenchService {
 public:
  Operations(Context* ctx, Service& service, Exchange& exchange)
      : wsbenchService(ctx), service_(service), exchange_(exchange) {}

  // gSOAP's "no copy": the connection code copies the context instead.
  wsbenchService* copy() override { return nullptr; }

  // After each request's reply (or fault): its structs and what the reply
  // pointed at.
  void release();

  int ping(wsb__pingResponse& response) override;
  int get(const std::string& kind, LONG64 n, wsb__getResponse& response) override;
  int echo(wsb__Payload* payload, wsb__echoResponse& response) override;
  int RegisterClient(wsb__RegisterClientResponse& response) override;
  int SendMessage(const std::string& queue, wsb__Message* message,
                  wsb__SendMessageResponse& response) override;
  int ReceiveMessage(const std::string& queue, wsb__ReceiveMessageResponse& response) override;
  int UnregisterClient(const std::string& queue, wsb__UnregisterClientResponse& response) override;
  int primes(unsigned int n, std::string& result) override;
  int define(const std::string& word, std::string& definition) override;
  int put(const std::string& word, const std::string& definition,
          wsb__putResponse& response) override;
  int upload(wsb__Payload* payload, std::string& receipt) override;

 private:
  template <class F>
  int run(F&& operation);
  int client_fault(const char* what);
  void parsed();
  void serviced();
  Binder binder() const { return Binder(soap, attachments_); }
  // The request's structs are released after the reply: move out of them.
  Unbinder unbinder() const { return Unbinder(kServerName); }

  Service& service_;
  Exchange& exchange_;
  Attachments attachments_ = Attachments::inline_base64;
  UsedNamespaces used_;  // by the reply being bound
  // What the reply's binaries point at, kept until it is written.
  std::shared_ptr<const Payload> got_;
  Payload echoed_;
  std::vector<Message> received_;
};

// Answers a GET (gSOAP's soap::fget): the WSDL at /?wsdl and /wsbench.wsdl,
// its location the endpoint the client addressed, or `listening` if the
// Host header does not say; the XOP schema it imports at /xop.xsd; an HTTP
// status (404) for any other path.
int answer_get(Context* ctx, const Endpoint& listening);

}  // namespace wsb::soap
