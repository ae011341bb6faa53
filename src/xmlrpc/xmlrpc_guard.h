// The guard in front of xmlrpc-c 1.33.14's XML parser: one lexical pass that
// rejects the documents that crash, hang or fool it, before it parses. The
// codec, the stack's server and its client all parse through it.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <xmlrpc-c/base.hpp>

namespace wsb::xmlrpc {

// Rejects, with DecodeError, what xmlrpc-c's parser mishandles (listed in
// xmlrpc_guard.cpp). Holds a reusable stack; not thread-safe.
class InputGuard {
 public:
  void check(std::string_view doc);

 private:
  std::size_t start_tag(std::string_view doc, std::size_t lt);

  std::vector<std::uint32_t> open_;  // per open element: <member> children so far
};

// Checks `doc` against xmlrpc-c's size limit, the guard and its closing tag,
// e.g. "</methodCall>" (xmlrpc-c accepts a document whose final '>' is
// missing, so a body cut short by a byte would otherwise parse as whole).
// Throws DecodeError.
void check_document(std::string_view doc, std::string_view closing_tag, InputGuard& guard);

// Parses a methodResponse: a fault comes back in `outcome`, anything
// malformed throws DecodeError.
void parse_response(const std::string& wire, InputGuard& guard, xmlrpc_c::rpcOutcome& outcome);

}  // namespace wsb::xmlrpc
