// The service every protocol exposes, written once: the stacks only map
// their requests onto these calls and the results back onto their wire.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/dictionary.h"
#include "common/payload.h"

namespace wsb {

// A request the service refuses: maps to HTTP 400/404/413, a SOAP Fault or
// an XML-RPC fault, never to a dropped connection.
class ServiceError : public std::runtime_error {
 public:
  enum class Kind { bad_request, not_found, too_large };
  ServiceError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }
  int http_status() const;

 private:
  Kind kind_;
};

// Named limits; every one is enforced with a ServiceError, not a crash.
struct ServiceLimits {
  std::size_t max_array_items = 100'000;                 // ints/strings/objects N
  std::size_t max_records = 10'000;                      // message-a records
  std::size_t max_binary_bytes = std::size_t{64} << 20;  // binary, message-b
  std::size_t max_buildings = 10'000;                    // gml N
  std::uint32_t max_primes = 1'000'000;                  // primes(n)
  std::size_t max_queues = 10'000;
  std::size_t max_messages_per_queue = 10'000;
  // The generated payloads kept for repeated gets (sum of raw_size, and
  // entries); least recently used ones are dropped beyond either.
  std::size_t max_cached_payload_bytes = std::size_t{256} << 20;
  std::size_t max_cached_payloads = 1024;
};

// Generated payloads by label, bounded by total raw bytes and entry count,
// evicting the least recently used. Thread-safe; a payload is shared, so
// one evicted while a server still sends it stays valid.
class PayloadCache {
 public:
  PayloadCache(std::size_t max_bytes, std::size_t max_entries)
      : max_bytes_(max_bytes), max_entries_(max_entries) {}

  // The cached payload for spec, else generate(spec) (outside the lock: a
  // 64 MiB binary must not stall other calls), kept if it fits the budget.
  std::shared_ptr<const Payload> get(const PayloadSpec& spec);

  std::size_t cached_bytes() const;
  std::size_t cached_entries() const;
  bool contains(const std::string& label) const;

 private:
  struct Entry {
    std::shared_ptr<const Payload> payload;
    std::size_t bytes;
  };
  using Order = std::list<std::pair<std::string, Entry>>;  // most recent first
  // The entry for key, made the most recent; null if absent. Mutex held.
  std::shared_ptr<const Payload> touch(const std::string& key);

  std::size_t max_bytes_;
  std::size_t max_entries_;
  mutable std::mutex mutex_;
  Order order_;
  std::unordered_map<std::string, Order::iterator> index_;
  std::size_t bytes_ = 0;
};

inline constexpr const char* kPingReply = "pong";

// What an upload's reply says of the payload received: "<raw_size> <a 64-bit
// FNV-1a-style hash of its fields, taken 8 bytes at a time, hex>". The
// client computes it from what it sent; doubles are hashed by their bits,
// so it checks an exact round trip.
std::string upload_receipt(const Payload& payload);

class Service {
 public:
  // Runs on entry to every operation, on the server's thread. For tests
  // that need a service of known cost (a sleep) behind every stack; unset
  // it is one null check.
  using CallHook = std::function<void()>;

  explicit Service(ServiceLimits limits = {}, CallHook on_call = {},
                   DictionaryOptions dictionary = {})
      : limits_(limits),
        on_call_(std::move(on_call)),
        payloads_(limits.max_cached_payload_bytes, limits.max_cached_payloads),
        dictionary_options_(std::move(dictionary)) {}
  ~Service();

  // E1: a fixed short string.
  std::string ping() const {
    called();
    return kPingReply;
  }

  // E3: a catalogue payload, generated once per spec and shared while it
  // stays in the bounded cache.
  std::shared_ptr<const Payload> get(const PayloadSpec& spec);
  // Raw bytes of the payloads the cache keeps now.
  std::size_t cached_bytes() const { return payloads_.cached_bytes(); }

  // The echo service is the identity: returns what it was sent. Every
  // stack's echo passes its decoded request through here, so verification
  // sees what the server received.
  const Payload& echo(const Payload& payload);

  // E9's upload (cha-et-al's direction: the client sends the large data):
  // takes any payload and answers with upload_receipt() of what it decoded,
  // so the client can tell a wrong decode from a right one by a short reply.
  std::string upload(const Payload& payload);

  // E5: the messaging service. Queue ids are opaque decimal strings.
  std::string register_client();
  void send_message(const std::string& queue, Message message);
  // All messages queued since the last receive, oldest first; the queue is
  // emptied.
  std::vector<Message> receive_messages(const std::string& queue);
  void unregister_client(const std::string& queue);

  // E7: "FIRST n numbers: 2 3 5 ...", computed on every call.
  std::string primes(std::uint32_t n) const;

  // E8: a word's definition (ServiceError not_found if there is none) and
  // insert-or-replace. A word that check_word() refuses, or a definition
  // over kMaxDefinitionBytes, is a ServiceError too.
  std::string define(const std::string& word);
  void put(const std::string& word, const std::string& definition);
  // The SQLite dictionary behind them, opened (built, on first use) by the
  // first call; throws what Dictionary's constructor throws, and the next
  // call tries again.
  Dictionary& dictionary();
  // The dictionary if a call has opened it, else null; never opens it.
  const Dictionary* opened_dictionary() const {
    return dictionary_.load(std::memory_order_acquire);
  }

  const ServiceLimits& limits() const { return limits_; }

  // Verification of the request direction: while on, the service keeps a
  // copy of the last echo's or upload's payload or sent message, for the benchmark to
  // compare with what its client sent. Off (and copying nothing) while a
  // benchmark times; switching it on forgets the previous record.
  void record_requests(bool on);
  std::optional<Payload> last_request() const;

 private:
  void check(const PayloadSpec& spec) const;
  void called() const {
    if (on_call_) on_call_();
  }

  void record(const Payload& request);

  ServiceLimits limits_;
  CallHook on_call_;
  std::atomic<bool> recording_{false};
  mutable std::mutex recorded_mutex_;
  std::optional<Payload> recorded_;
  PayloadCache payloads_;
  std::mutex queues_mutex_;
  std::map<std::string, std::vector<Message>> queues_;
  std::uint64_t next_queue_ = 1;
  DictionaryOptions dictionary_options_;
  std::mutex dictionary_mutex_;
  std::atomic<Dictionary*> dictionary_{nullptr};
  std::unique_ptr<Dictionary> dictionary_owner_;
};

}  // namespace wsb
