// What the xmlrpc-c stack tests share (xmlrpc_stack_test.cpp,
// xmlrpc_server_client_test.cpp): a raw socket that reads Abyss's
// responses (its error pages are delimited by the close) and hand-written
// XML-RPC calls.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/transport.h"

namespace wsb::testing {

// ---- raw sockets ----

class Socket {
 public:
  explicit Socket(const Endpoint& to) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    // A test must fail, not hang, if the server never answers.
    const timeval timeout{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(to.port);
    inet_pton(AF_INET, to.host.c_str(), &a.sin_addr);
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("connect: " + std::string(std::strerror(errno)));
  }
  ~Socket() { close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // False if the peer reset the connection.
  bool send_all(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  void shutdown_write() { shutdown(fd_, SHUT_WR); }
  int fd() const { return fd_; }

  // Reads until `buffer_` holds `n` bytes; false at end of input or error.
  bool fill(std::size_t n) {
    char chunk[65536];
    while (buffer_.size() < n) {
      const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
      if (got <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
    return true;
  }

  struct Reply {
    int status = 0;  // 0: no (complete) response
    std::string headers;
    std::string body;
  };

  // One response: its header, then Content-Length bytes, or everything up
  // to the end of input when there is no Content-Length (Abyss's error
  // pages are delimited by the close).
  Reply read_reply() {
    Reply r;
    std::size_t end = 0;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill(buffer_.size() + 1)) return r;
    r.headers = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    std::string lower = r.headers;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (const auto at = lower.find("content-length:"); at != std::string::npos) {
      const std::size_t length = std::stoul(lower.substr(at + 15));
      if (!fill(length)) return r;
      r.body = buffer_.substr(0, length);
      buffer_.erase(0, length);
    } else {
      while (fill(buffer_.size() + 1)) {
      }
      r.body = std::move(buffer_);
      buffer_.clear();
    }
    r.status = std::stoi(r.headers.substr(r.headers.find(' ') + 1, 3));
    return r;
  }

  // True if the peer closed the connection (end of input) within 10 s.
  bool closed_by_peer() {
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }

 private:
  int fd_;
  std::string buffer_;
};

inline std::string post(const std::string& body, const std::string& path = "/RPC2",
                        const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/xml\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline std::string call_xml(const std::string& method, const std::string& params_xml = "") {
  return "<?xml version=\"1.0\"?><methodCall><methodName>" + method + "</methodName><params>" +
         params_xml + "</params></methodCall>";
}

inline std::string param(const std::string& value_xml) {
  return "<param><value>" + value_xml + "</value></param>";
}

inline std::uint16_t port_of(const sockaddr_in& a) { return ntohs(a.sin_port); }

inline const StackEntry& stack() { return find_stack("xmlrpc-c"); }

}  // namespace wsb::testing
