// The anchor registry. An anchor is a library's own minimal idiomatic
// client and server for ping and echo, built from wsbench's sources beside
// the stack it anchors, with none of wsbench's harness: no probes, no
// routing, no limits, no request recording. bench runs each as
// anchor/<library>/... round trips by the same kernel as the stack's rtt
// rows, so stack/anchor shows what wsbench adds (docs/anchors.md).
// Adding one: bench/anchors/<library>/ with its library and header
// (bench/anchors/CMakeLists.txt), and an entry in anchors.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/transport.h"

namespace wsb::anchors {

struct AnchorEntry {
  std::string library;      // "beast", "gsoap", "grpc-sync": the row's name
  std::string stack;        // the stack it anchors ("beast")
  std::string codec;        // and its codec ("json"): rtt/<stack>/<codec>/...
  std::string description;  // what it is, in the library's terms
  std::function<std::unique_ptr<Server>(const ServerOptions&)> start_server;
  std::function<std::unique_ptr<Client>(const Endpoint&)> connect;
  // StackEntry::library_thread_pool, as its stack's: gRPC's pollers grow
  // by load and stay until the server stops.
  bool library_thread_pool = false;
};

// Every anchor this build has (an anchor's library is built where its
// folder exists).
const std::vector<AnchorEntry>& all_anchors();

}  // namespace wsb::anchors
