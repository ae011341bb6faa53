#include "common/service.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

namespace wsb {

int ServiceError::http_status() const {
  switch (kind_) {
    case Kind::bad_request:
      return 400;
    case Kind::not_found:
      return 404;
    case Kind::too_large:
      return 413;
  }
  return 500;
}

void Service::check(const PayloadSpec& spec) const {
  std::size_t limit = 0;
  switch (spec.kind) {
    case Kind::text:
      return;
    case Kind::ints:
    case Kind::strings:
    case Kind::objects:
      limit = limits_.max_array_items;
      break;
    case Kind::message_a:
      limit = limits_.max_records;
      break;
    case Kind::message_b:
    case Kind::binary:
      limit = limits_.max_binary_bytes;
      break;
    case Kind::gml:
      limit = limits_.max_buildings;
      break;
  }
  if (spec.n > limit)
    throw ServiceError(ServiceError::Kind::too_large,
                       spec.label() + " exceeds the limit of " + std::to_string(limit));
}

std::shared_ptr<const Payload> Service::get(const PayloadSpec& spec) {
  called();
  check(spec);
  return payloads_.get(spec);
}

std::shared_ptr<const Payload> PayloadCache::get(const PayloadSpec& spec) {
  std::string key = spec.label();
  {
    const std::lock_guard lock(mutex_);
    if (auto hit = touch(key)) return hit;
  }
  auto made = std::make_shared<const Payload>(generate(spec));
  const std::size_t bytes = raw_size(*made);
  if (bytes > max_bytes_ || max_entries_ == 0) return made;
  const std::lock_guard lock(mutex_);
  // Another thread may have made the same payload meanwhile: keep its copy.
  if (auto hit = touch(key)) return hit;
  while (!order_.empty() && (bytes_ + bytes > max_bytes_ || order_.size() >= max_entries_)) {
    bytes_ -= order_.back().second.bytes;
    index_.erase(order_.back().first);
    order_.pop_back();
  }
  order_.emplace_front(key, Entry{made, bytes});
  index_.emplace(std::move(key), order_.begin());
  bytes_ += bytes;
  return made;
}

std::shared_ptr<const Payload> PayloadCache::touch(const std::string& key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second.payload;
}

std::size_t PayloadCache::cached_bytes() const {
  const std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t PayloadCache::cached_entries() const {
  const std::lock_guard lock(mutex_);
  return order_.size();
}

bool PayloadCache::contains(const std::string& label) const {
  const std::lock_guard lock(mutex_);
  return index_.count(label) != 0;
}

std::string Service::register_client() {
  called();
  const std::lock_guard lock(queues_mutex_);
  if (queues_.size() >= limits_.max_queues)
    throw ServiceError(ServiceError::Kind::too_large, "too many registered clients");
  std::string id = std::to_string(next_queue_++);
  queues_.emplace(id, std::vector<Message>{});
  return id;
}

const Payload& Service::echo(const Payload& payload) {
  called();
  if (recording_.load(std::memory_order_relaxed)) record(payload);
  return payload;
}

namespace {

// A 64-bit FNV-1a-style hash over every field of a payload in order, each string and vector
// preceded by its length, so a field's bytes cannot pass for its
// neighbour's.
class Fnv {
 public:
  template <class T>
  void value(T v) {
    static_assert(std::is_arithmetic_v<T>);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));  // doubles by their bits
    raw(bytes, sizeof(T));
  }
  void text(const std::string& s) {
    value(static_cast<std::uint64_t>(s.size()));
    raw(s.data(), s.size());
  }
  void bytes(const Bytes& b) {
    value(static_cast<std::uint64_t>(b.size()));
    raw(b.data(), b.size());
  }
  void message(const Message& m) {
    text(m.meta.recipient);
    text(m.meta.sender);
    text(m.meta.auth_token);
    value(m.meta.timestamp);
    value(static_cast<std::uint64_t>(m.records.size()));
    for (const auto& r : m.records) {
      text(r.title);
      text(r.author);
      text(r.body);
      for (const std::int64_t v : {r.sequence, r.created}) value(v);
      for (const std::int32_t v : {r.priority, r.category, r.flags}) value(v);
      value(r.ttl);
    }
    bytes(m.attachment);
  }
  void operator()(const Text& t) { text(t.value); }
  void operator()(const IntArray& a) {
    value(static_cast<std::uint64_t>(a.values.size()));
    for (const auto v : a.values) value(v);
  }
  void operator()(const StringArray& a) {
    value(static_cast<std::uint64_t>(a.values.size()));
    for (const auto& v : a.values) text(v);
  }
  void operator()(const ObjectArray& a) {
    value(static_cast<std::uint64_t>(a.values.size()));
    for (const auto& o : a.values) {
      value(o.id);
      text(o.name);
      value(o.value);
      value(o.active);
    }
  }
  void operator()(const Message& m) { message(m); }
  void operator()(const Binary& b) { bytes(b.data); }
  void operator()(const BuildingCollection& c) {
    value(static_cast<std::uint64_t>(c.buildings.size()));
    for (const auto& b : c.buildings) {
      text(b.id);
      text(b.name);
      value(b.height);
      value(b.floors);
      value(static_cast<std::uint64_t>(b.footprint.size()));
      for (const auto& p : b.footprint) {
        value(p.x);
        value(p.y);
      }
    }
  }
  void operator()(const MessageList& l) {
    value(static_cast<std::uint64_t>(l.messages.size()));
    for (const auto& m : l.messages) message(m);
  }
  std::uint64_t hash() const { return hash_; }

 private:
  // FNV-1a's step taken a 64-bit word at a time (the tail byte by byte):
  // every call pays it on the server inside the timed round trip, so it
  // must cost little beside a decode (byte-wise FNV-1a would add about
  // 1.5 ms per MiB). Each step is a bijection of the state, so changing
  // any one word or byte changes the hash.
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (; n >= 8; p += 8, n -= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      step(word);
    }
    for (; n > 0; ++p, --n) step(*p);
  }
  void step(std::uint64_t v) { hash_ = (hash_ ^ v) * 0x100000001b3ULL; }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::string upload_receipt(const Payload& payload) {
  Fnv fnv;
  std::visit(fnv, payload);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv.hash()));
  return std::to_string(raw_size(payload)) + " " + hex;
}

std::string Service::upload(const Payload& payload) {
  called();
  if (recording_.load(std::memory_order_relaxed)) record(payload);
  return upload_receipt(payload);
}

void Service::record_requests(bool on) {
  const std::lock_guard lock(recorded_mutex_);
  if (on) recorded_.reset();
  recording_.store(on, std::memory_order_relaxed);
}

std::optional<Payload> Service::last_request() const {
  const std::lock_guard lock(recorded_mutex_);
  return recorded_;
}

void Service::record(const Payload& request) {
  const std::lock_guard lock(recorded_mutex_);
  recorded_ = request;
}

void Service::send_message(const std::string& queue, Message message) {
  called();
  if (recording_.load(std::memory_order_relaxed)) record(message);
  const std::lock_guard lock(queues_mutex_);
  const auto it = queues_.find(queue);
  if (it == queues_.end())
    throw ServiceError(ServiceError::Kind::not_found, "no queue '" + queue + "'");
  if (it->second.size() >= limits_.max_messages_per_queue)
    throw ServiceError(ServiceError::Kind::too_large, "queue '" + queue + "' is full");
  it->second.push_back(std::move(message));
}

std::vector<Message> Service::receive_messages(const std::string& queue) {
  called();
  const std::lock_guard lock(queues_mutex_);
  const auto it = queues_.find(queue);
  if (it == queues_.end())
    throw ServiceError(ServiceError::Kind::not_found, "no queue '" + queue + "'");
  return std::exchange(it->second, {});
}

void Service::unregister_client(const std::string& queue) {
  called();
  const std::lock_guard lock(queues_mutex_);
  if (queues_.erase(queue) == 0)
    throw ServiceError(ServiceError::Kind::not_found, "no queue '" + queue + "'");
}

std::string Service::primes(std::uint32_t n) const {
  called();
  if (n > limits_.max_primes)
    throw ServiceError(ServiceError::Kind::too_large, "primes(" + std::to_string(n) +
                                                          ") exceeds the limit of " +
                                                          std::to_string(limits_.max_primes));
  // Trial division by the primes found so far, as costa-bernardino's service
  // computes them afresh on every call: the point is the CPU work.
  std::vector<std::uint32_t> found;
  found.reserve(n);
  std::string out = "FIRST " + std::to_string(n) + " numbers:";
  for (std::uint32_t candidate = 2; found.size() < n; ++candidate) {
    bool prime = true;
    for (const std::uint32_t p : found) {
      if (static_cast<std::uint64_t>(p) * p > candidate) break;
      if (candidate % p == 0) {
        prime = false;
        break;
      }
    }
    if (!prime) continue;
    found.push_back(candidate);
    out += ' ';
    out += std::to_string(candidate);
  }
  return out;
}

Service::~Service() = default;

Dictionary& Service::dictionary() {
  // Opened once; every later call is one atomic load.
  if (Dictionary* open = dictionary_.load(std::memory_order_acquire)) return *open;
  const std::lock_guard lock(dictionary_mutex_);
  if (!dictionary_owner_) {
    dictionary_owner_ = std::make_unique<Dictionary>(dictionary_options_);
    dictionary_.store(dictionary_owner_.get(), std::memory_order_release);
  }
  return *dictionary_owner_;
}

namespace {
void check_dictionary_word(const std::string& word) {
  try {
    check_word(word);
  } catch (const std::invalid_argument& e) {
    throw ServiceError(ServiceError::Kind::bad_request,
                       "word '" + word.substr(0, kMaxWordBytes) + "': " + e.what());
  }
}
}  // namespace

std::string Service::define(const std::string& word) {
  called();
  check_dictionary_word(word);
  auto definition = dictionary().define(word);
  if (!definition)
    throw ServiceError(ServiceError::Kind::not_found, "no word '" + word + "' in the dictionary");
  return std::move(*definition);
}

void Service::put(const std::string& word, const std::string& definition) {
  called();
  check_dictionary_word(word);
  if (definition.size() > kMaxDefinitionBytes)
    throw ServiceError(ServiceError::Kind::too_large,
                       "a definition of " + std::to_string(definition.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxDefinitionBytes));
  dictionary().put(word, definition);
}

}  // namespace wsb
