// Payloads every codec must round-trip exactly: edge values first, then a
// small instance of every catalogue kind.
#pragma once

#include <string>
#include <vector>

#include "common/payload.h"

namespace wsb::testing {

struct NamedPayload {
  std::string name;
  Payload payload;
};

// Built once per process: test registration asks for it once per parameter.
const std::vector<NamedPayload>& conformance_payloads();

// Bytes 0..255 in order: every value a binary can hold.
Bytes all_byte_values();

}  // namespace wsb::testing
