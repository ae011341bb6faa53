#include "harness/request_check.h"

#include <vector>

namespace wsb {

std::string check_received(const Service& service, const Payload& sent, DoubleFidelity fidelity) {
  const std::optional<Payload> received = service.last_request();
  if (!received) return "the server recorded no request";
  const std::string diff = describe_difference(sent, *received, fidelity);
  return diff.empty() ? "" : "the server received something else: " + diff;
}

std::string check_queued(Client& client, const std::string& queue, const Message& sent,
                         DoubleFidelity fidelity) {
  std::vector<Message> queued;
  client.receive_messages(queue, queued);
  if (queued.size() != 1)
    return "the queue holds " + std::to_string(queued.size()) + " messages after one send";
  const std::string diff = describe_difference(sent, queued.front(), fidelity);
  return diff.empty() ? "" : "the server queued something else: " + diff;
}

}  // namespace wsb
