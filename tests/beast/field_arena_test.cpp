// The header fields' arena (src/beast/field_arena.h): a message's fields
// come from the connection's block, which is reused once they are freed;
// what does not fit comes from the heap, and a header of either kind parses
// to the same fields.

#include "beast/field_arena.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <optional>
#include <string>

#include "beast/beast_rest.h"

namespace wsb::beast_stack {
namespace {

bool in_block(const FieldArena& arena, const void* p) {
  const auto* start = reinterpret_cast<const char*>(&arena);
  return p >= static_cast<const void*>(start) &&
         p < static_cast<const void*>(start + sizeof(FieldArena));
}

TEST(FieldArena, BlockIsReusedOnceEverythingInItIsFreed) {
  FieldArena arena;
  void* a = arena.allocate(100, 8);
  void* b = arena.allocate(100, 8);
  EXPECT_TRUE(in_block(arena, a));
  EXPECT_NE(a, b);
  arena.deallocate(a);
  void* c = arena.allocate(100, 8);  // b is still live: no reuse yet
  EXPECT_NE(c, a);
  arena.deallocate(b);
  arena.deallocate(c);
  EXPECT_EQ(arena.allocate(100, 8), a);  // empty again: from the start
}

TEST(FieldArena, WhatDoesNotFitComesFromTheHeap) {
  FieldArena arena;
  void* big = arena.allocate(FieldArena::kBytes + 1, 8);
  EXPECT_FALSE(in_block(arena, big));
  arena.deallocate(big);  // operator delete: ASan sees a mismatch
  void* small = arena.allocate(16, 8);
  EXPECT_TRUE(in_block(arena, small));
}

// Headers below and far above the block, one after another on one arena,
// parse to their fields.
TEST(FieldArena, HeadersOfAnySizeParseToTheirFields) {
  FieldArena arena;
  std::optional<RequestParser> parser;
  for (const int fields : {1, 200, 3, 200, 1}) {
    std::string request = "GET /ping HTTP/1.1\r\nHost: h\r\n";
    for (int i = 0; i < fields; ++i)
      request += "X-Field-" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
    request += "\r\n";
    auto& p = next_parser(parser, arena, std::string());
    p.header_limit(64 * 1024);
    boost::beast::error_code ec;
    p.put(boost::asio::buffer(request), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_TRUE(p.is_done());
    EXPECT_EQ(scan_header(p.get()).fields, static_cast<std::size_t>(fields) + 1);
    EXPECT_EQ(p.get()["Host"], "h");
    EXPECT_EQ(p.get()["X-Field-" + std::to_string(fields - 1)], std::string(40, 'v'));
  }
}

}  // namespace
}  // namespace wsb::beast_stack
