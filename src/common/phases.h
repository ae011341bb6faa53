// The phase model of a request/response cycle (aihkisalo-paaso II.B, E6).
//
// Eight points on one steady clock; the phases are the intervals between
// consecutive points and so add up to the round trip by construction. A
// stack that does not expose a point leaves it at 0, and the phases either
// side of it are merged (and named as merged) instead of guessed.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace wsb {

enum Mark : std::size_t {
  kInvoke,            // client: the call starts
  kRequestWritten,    // client: request encoded, about to be written. Marked
                      // before the write, not after: on one vCPU the kernel
                      // runs the woken server inside the client's send().
  kRequestReceived,   // server: request fully received
  kParsed,            // server: request decoded, service about to run
  kServiced,          // server: service done
  kMarshalled,        // server: response encoded
  kResponseReceived,  // client: response fully received
  kDecoded,           // client: response decoded, the call returns
  kPointCount
};

// Names of the phase that ends at each point (index 0 unused).
inline constexpr std::array<const char*, kPointCount> kPhaseNames = {
    "",        "client_marshal", "request_transfer",  "server_parse",
    "service", "server_marshal", "response_transfer", "client_parse"};

using Timeline = std::array<std::int64_t, kPointCount>;

// Where an in-process server leaves its points for the client to collect.
// Benchmarks keep one request outstanding at a time, so the last request's
// points are the ones the client's call produced. Servers call mark() from
// their request path; the mutex is uncontended there.
class ServerProbe {
 public:
  void begin_request();  // clears the server points
  void mark(Mark point, std::int64_t ns);
  // Copies the server points (kRequestReceived..kMarshalled) into `t`.
  void collect(Timeline& t) const;

 private:
  mutable std::mutex mutex_;
  Timeline points_{};
};

// The probe in-process servers write to.
ServerProbe& server_probe();

// One phase, possibly a merge of adjacent ones where a point is missing.
struct Phase {
  std::string name;  // e.g. "service" or "request_transfer+server_parse"
  std::int64_t ns = 0;
};

// True if the points present are in timeline order. A point out of order
// means a stack marks it at the wrong moment (or a remote clock); phases_of
// then merges across it, and the benchmark reports how often it happened.
bool in_order(const Timeline& t);

// Phases of one call; empty if kInvoke or kDecoded is missing.
std::vector<Phase> phases_of(const Timeline& t);

}  // namespace wsb
