// One operation of a round-trip case (OpRunner, rtt_internal.h): its
// untimed set-up, the timed call, the untimed clean-up, and the checks of
// what came back and of what the server received.
#include <optional>
#include <stdexcept>
#include <variant>

#include "common/clock.h"
#include "common/codec.h"
#include "common/dictionary.h"
#include "common/service.h"
#include "harness/profiling.h"
#include "harness/request_check.h"
#include "payload_cache.h"
#include "rtt_internal.h"

namespace wsb::bench::rtt {

OpRunner::OpRunner(Client& client, const RttCase& c)
    : client_(client), c_(c), fidelity_(find_codec(c.codec).make()->double_fidelity()) {
  if (c.op == Op::get || c.op == Op::echo || c.op == Op::send || c.op == Op::receive ||
      c.op == Op::upload)
    payload_ = &cached_payload(c.spec);
  if (c.op == Op::send || c.op == Op::receive) {
    message_ = std::get_if<Message>(payload_);
    if (message_ == nullptr) throw std::invalid_argument("send/receive need a message payload");
  }
  if (payload_ != nullptr) unsupported_ = find_codec(c.codec).make()->unsupported(*payload_);
  if (c.op == Op::primes) expected_text_ = pool->service().primes(c.primes);
  if (c.op == Op::define || c.op == Op::put)
    expected_text_ = generated_definition(kDictionaryWord, c.size_multiple);
  // The receipt the server must send back: computed here from what is
  // sent, once, outside every timed call.
  if (c.op == Op::upload) expected_text_ = upload_receipt(*payload_);
}

OpRunner::~OpRunner() {
  if (!queue_.empty()) {
    try {
      client_.unregister_client(queue_);
    } catch (const std::exception&) {
      // The server may already be gone; nothing measured depends on it.
    }
  }
}

void OpRunner::set_up() {
  switch (c_.op) {
    case Op::send:
    case Op::receive:
    case Op::unregister:
      if (queue_.empty()) queue_ = client_.register_client();
      if (c_.op == Op::receive) client_.send_message(queue_, *message_);
      break;
    default:
      break;
  }
}

std::string OpRunner::verify() {
  // An anchor's server records nothing (rtt_bench.cpp labels its rows so).
  Service* service =
      c_.anchor == nullptr && pool->in_process(*c_.stack) ? &pool->service() : nullptr;
  std::string diff;
  {
    std::optional<RequestRecording> recording;
    if (service != nullptr) recording.emplace(*service);
    set_up();
    call();
    diff = check();
    if (diff.empty() && service != nullptr) diff = check_request(*service);
  }
  if (!diff.empty()) return diff;
  // The sent message comes back (untimed) and must be what was sent;
  // receiving it empties the queue, as clean_up() would.
  if (c_.op == Op::send) return check_queued(client_, queue_, *message_, fidelity_);
  // What was put is read back (untimed) and must be what was sent.
  if (c_.op == Op::put && client_.define(kDictionaryWord) != expected_text_)
    return "put: the word's definition read back differs";
  clean_up();
  return diff;
}

std::string OpRunner::check_request(const Service& service) const {
  if (c_.op == Op::echo || c_.op == Op::upload)
    return check_received(service, *payload_, fidelity_);
  if (c_.op == Op::send) return check_received(service, *message_, fidelity_);
  return "";
}

// The timed region, in nanoseconds: the whole call as the application
// sees it: client marshal, request transfer, server parse + service +
// marshal, response transfer, client parse. Set-up and clean-up calls
// are outside. Under callgrind the call alone is counted (unless the
// floor is: kCountingFloor).
std::int64_t OpRunner::timed_call() {
  const std::int64_t start = now_ns();
  {
    const CountedCall counted(CountedCall::Threads::others_too, !kCountingFloor);
    call();
  }
  return now_ns() - start;
}

void OpRunner::call() {
  switch (c_.op) {
    case Op::ping:
      text_ = client_.ping();
      break;
    case Op::get:
      client_.get(c_.spec, out_);
      break;
    case Op::echo:
      client_.echo(*payload_, out_);
      break;
    case Op::register_client:
      text_ = client_.register_client();
      break;
    case Op::send:
      client_.send_message(queue_, *message_);
      break;
    case Op::receive:
      client_.receive_messages(queue_, messages_);
      break;
    case Op::unregister:
      client_.unregister_client(queue_);
      queue_.clear();
      break;
    case Op::primes:
      text_ = client_.primes(c_.primes);
      break;
    case Op::define:
      text_ = client_.define(kDictionaryWord);
      break;
    case Op::put:
      client_.put(kDictionaryWord, expected_text_);
      break;
    case Op::upload:
      text_ = client_.upload(*payload_);
      break;
  }
}

void OpRunner::clean_up() {
  if (c_.op == Op::register_client) client_.unregister_client(text_);
  if (c_.op == Op::send) client_.receive_messages(queue_, messages_);
}

std::string OpRunner::check() const {
  switch (c_.op) {
    case Op::ping:
      return text_ == kPingReply ? "" : "ping returned '" + text_ + "'";
    case Op::get:
    case Op::echo:
      return describe_difference(*payload_, out_, fidelity_);
    case Op::register_client:
      return text_.empty() ? "empty queue id" : "";
    case Op::receive:
      if (messages_.size() != 1)
        return "received " + std::to_string(messages_.size()) + " messages, not 1";
      return describe_difference(*message_, messages_.front(), fidelity_);
    case Op::primes:
      return text_ == expected_text_ ? "" : "primes reply differs";
    case Op::define:
      return text_ == expected_text_ ? "" : "define reply differs";
    case Op::upload:
      return text_ == expected_text_
                 ? ""
                 : "upload receipt '" + text_ + "', expected '" + expected_text_ + "'";
    default:
      return "";
  }
}

}  // namespace wsb::bench::rtt
