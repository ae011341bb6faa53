// Checks of a round trip's request direction, run while verifying a case
// (never while timing): what the server received must be what the client
// sent, so a stack that corrupts requests fails verification even where
// the reply cannot show it (a send has no reply body).
#pragma once

#include <string>

#include "common/payload.h"
#include "common/service.h"
#include "common/transport.h"

namespace wsb {

// Has the in-process service record the requests it receives while this
// lives (Service::record_requests).
class RequestRecording {
 public:
  explicit RequestRecording(Service& service) : service_(service) {
    service_.record_requests(true);
  }
  ~RequestRecording() { service_.record_requests(false); }
  RequestRecording(const RequestRecording&) = delete;
  RequestRecording& operator=(const RequestRecording&) = delete;

 private:
  Service& service_;
};

// Empty if the service's last recorded request (an echo's payload, a sent
// message) is `sent`, else what differs.
std::string check_received(const Service& service, const Payload& sent, DoubleFidelity fidelity);

// Receives `queue` back through `client` and checks that it holds exactly
// `sent`: the server's side of a send, seen from any host.
std::string check_queued(Client& client, const std::string& queue, const Message& sent,
                         DoubleFidelity fidelity);

}  // namespace wsb
