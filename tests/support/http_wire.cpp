#include "http_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <ctime>
#include <regex>
#include <stdexcept>

#include "common/tls.h"

namespace wsb::testing {

namespace {

bool equal_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// The field lines of a head (after the status line) as name/value pairs;
// throws with what is malformed (RFC 9112 section 5, RFC 9110 section 5.5).
std::vector<std::pair<std::string, std::string>> fields_of(std::string_view head) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = head.find("\r\n");
  while (at != std::string_view::npos) {
    const std::size_t start = at + 2;
    at = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, (at == std::string_view::npos ? head.size() : at) - start);
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t')
      throw std::runtime_error("obs-fold in the reply");
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      throw std::runtime_error("field line without a name and colon: " + std::string(line));
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_tchar))
      throw std::runtime_error("field name not a token: " + std::string(name));
    const std::string_view value = trim(line.substr(colon + 1));
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
      throw std::runtime_error("CR, LF or NUL in the value of " + std::string(name));
    out.emplace_back(std::string(name), std::string(value));
  }
  return out;
}

}  // namespace

std::vector<std::string> WireResponse::all(std::string_view name) const {
  std::vector<std::string> out;
  for (auto& [n, v] : fields_of(head))
    if (equal_nocase(n, name)) out.push_back(v);
  return out;
}

std::vector<std::string> WireResponse::names() const {
  std::vector<std::string> out;
  for (auto& [n, v] : fields_of(head)) out.push_back(lower(n));
  return out;
}

const char* to_string(Ending e) {
  switch (e) {
    case Ending::open:
      return "left open";
    case Ending::bytes:
      return "more bytes";
    case Ending::clean:
      return "closed";
    case Ending::no_notify:
      return "closed without a TLS close_notify";
    case Ending::reset:
      return "reset";
  }
  return "?";
}

struct WireConnection::Tls {
  tls::Context ctx = tls::make_context(tls::Side::client);
  SSL* ssl = nullptr;
  ~Tls() { SSL_free(ssl); }
};

WireConnection::WireConnection(const Endpoint& server, bool tls) {
  // A write to a server that has closed must fail, not kill the test (an
  // SSL_write has no MSG_NOSIGNAL).
  static const bool ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)ignored;
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port);
  ::inet_pton(AF_INET, server.host.c_str(), &addr.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect failed");
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!tls) return;
  tls_ = std::make_unique<Tls>();
  tls_->ssl = SSL_new(tls_->ctx.get());
  SSL_set_fd(tls_->ssl, fd_);
  SSL_set1_host(tls_->ssl, tls::kServerName);
  if (SSL_connect(tls_->ssl) != 1) {
    ERR_clear_error();
    ::close(fd_);
    throw std::runtime_error("TLS handshake failed");
  }
}

WireConnection::~WireConnection() {
  tls_.reset();
  ::close(fd_);
}

bool WireConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const int chunk = static_cast<int>(std::min<std::size_t>(bytes.size(), 1 << 20));
    const ssize_t n =
        tls_ ? SSL_write(tls_->ssl, bytes.data(), chunk)
             : ::send(fd_, bytes.data(), static_cast<std::size_t>(chunk), MSG_NOSIGNAL);
    if (n <= 0) {
      ERR_clear_error();
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void WireConnection::shutdown_write() {
  if (tls_) SSL_shutdown(tls_->ssl);
  ::shutdown(fd_, SHUT_WR);
}

WireConnection::Fill WireConnection::fill(std::chrono::milliseconds wait) {
  timeval tv{static_cast<time_t>(wait.count() / 1000),
             static_cast<suseconds_t>((wait.count() % 1000) * 1000)};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[64 * 1024];
  errno = 0;
  if (!tls_) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      pending_.append(buf, static_cast<std::size_t>(n));
      return Fill::data;
    }
    if (n == 0) return Fill::eof;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Fill::timeout;
    return errno == ECONNRESET ? Fill::reset : Fill::failed;
  }
  const int n = SSL_read(tls_->ssl, buf, sizeof buf);
  if (n > 0) {
    pending_.append(buf, static_cast<std::size_t>(n));
    return Fill::data;
  }
  const int error = SSL_get_error(tls_->ssl, n);
  const int saved = errno;
  const unsigned long reason = ERR_GET_REASON(ERR_peek_error());
  ERR_clear_error();
  if (error == SSL_ERROR_ZERO_RETURN) return Fill::eof;
  if (error == SSL_ERROR_WANT_READ || saved == EAGAIN || saved == EWOULDBLOCK) return Fill::timeout;
  if (saved == ECONNRESET) return Fill::reset;
  if (error == SSL_ERROR_SYSCALL || reason == SSL_R_UNEXPECTED_EOF_WHILE_READING)
    return Fill::eof_no_notify;
  return Fill::failed;
}

namespace {
const char* fill_error(int f) {
  static const char* const names[] = {"",
                                      "the connection closed",
                                      "the connection closed",
                                      "the connection was reset",
                                      "no reply in time",
                                      "the read failed"};
  return names[f];
}
}  // namespace

bool WireConnection::read_until(std::string_view what, std::chrono::milliseconds wait,
                                std::size_t& at, std::string& error) {
  while ((at = pending_.find(what)) == std::string::npos) {
    if (pending_.size() > (1 << 20)) {
      error = "no end of line in 1 MiB";
      return false;
    }
    if (const Fill f = fill(wait); f != Fill::data) {
      error = fill_error(static_cast<int>(f));
      return false;
    }
  }
  return true;
}

bool WireConnection::read_size(std::size_t n, std::chrono::milliseconds wait, std::string& error) {
  while (pending_.size() < n)
    if (const Fill f = fill(wait); f != Fill::data) {
      error = std::string(fill_error(static_cast<int>(f))) + " inside the body";
      return false;
    }
  return true;
}

WireResponse WireConnection::read(std::string_view method, std::chrono::milliseconds wait) {
  WireResponse r;
  std::size_t end = 0;
  if (!read_until("\r\n\r\n", wait, end, r.error)) {
    if (!pending_.empty()) r.error += " after " + std::to_string(pending_.size()) + " bytes";
    return r;
  }
  r.head = pending_.substr(0, end);
  pending_.erase(0, end + 4);
  static const std::regex status_line("HTTP/1\\.[01] ([0-9]{3}) [^\r\n]*");
  std::smatch m;
  const std::string line = r.head.substr(0, r.head.find("\r\n"));
  if (!std::regex_match(line, m, status_line)) {
    r.error = "bad status line: " + line.substr(0, 80);
    return r;
  }
  r.status = std::stoi(m[1]);
  std::vector<std::string> te, cl;
  try {
    te = r.all("Transfer-Encoding");
    cl = r.all("Content-Length");
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  const bool no_body = r.status / 100 == 1 || r.status == 204 || r.status == 304 ||
                       method == "HEAD" || (method == "CONNECT" && r.status / 100 == 2);
  if (no_body) return r;
  if (!te.empty()) {
    const std::string last = lower(trim(te.back().substr(te.back().rfind(',') + 1)));
    if (last != "chunked") {  // close-delimited
      while (fill(wait) == Fill::data) {
      }
      r.body = std::move(pending_);
      pending_.clear();
      return r;
    }
    for (;;) {
      if (!read_until("\r\n", wait, end, r.error)) return r;
      const std::string size_line = pending_.substr(0, end);
      pending_.erase(0, end + 2);
      std::size_t size = 0;
      try {
        size = std::stoul(size_line.substr(0, size_line.find(';')), nullptr, 16);
      } catch (const std::exception&) {
        r.error = "bad chunk size: " + size_line;
        return r;
      }
      if (size == 0) break;
      if (!read_size(size + 2, wait, r.error)) return r;
      r.body += pending_.substr(0, size);
      pending_.erase(0, size + 2);
    }
    // The trailer section, ended by an empty line.
    for (;;) {
      if (!read_until("\r\n", wait, end, r.error)) return r;
      pending_.erase(0, end + 2);
      if (end == 0) return r;
    }
  }
  if (cl.empty()) {  // close-delimited
    while (fill(wait) == Fill::data) {
    }
    r.body = std::move(pending_);
    pending_.clear();
    return r;
  }
  if (std::adjacent_find(cl.begin(), cl.end(), std::not_equal_to<>()) != cl.end() ||
      cl.front().empty() || !std::all_of(cl.front().begin(), cl.front().end(), ::isdigit)) {
    r.error = "bad Content-Length in the reply";
    return r;
  }
  const std::size_t length = std::stoul(cl.front());
  if (!read_size(length, wait, r.error)) return r;
  r.body = pending_.substr(0, length);
  pending_.erase(0, length);
  return r;
}

Ending WireConnection::ending(std::chrono::milliseconds wait) {
  if (!pending_.empty()) return Ending::bytes;
  switch (fill(wait)) {
    case Fill::data:
      return Ending::bytes;
    case Fill::eof:
      return Ending::clean;
    case Fill::eof_no_notify:
      return Ending::no_notify;
    case Fill::reset:
    case Fill::failed:
      return Ending::reset;
    case Fill::timeout:
      return Ending::open;
  }
  return Ending::open;
}

std::string check_imf_fixdate(std::string_view value, std::chrono::seconds slack) {
  static const std::regex imf(
      "(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) "
      "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) "
      "([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT");
  const std::string text(value);
  std::smatch m;
  if (!std::regex_match(text, m, imf)) return "not an IMF-fixdate: " + text;
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  static constexpr std::string_view kDays = "SunMonTueWedThuFriSat";
  std::tm tm{};
  tm.tm_mday = std::stoi(m[2]);
  tm.tm_mon = static_cast<int>(kMonths.find(m[3].str()) / 3);
  tm.tm_year = std::stoi(m[4]) - 1900;
  tm.tm_hour = std::stoi(m[5]);
  tm.tm_min = std::stoi(m[6]);
  tm.tm_sec = std::stoi(m[7]);
  const std::time_t when = ::timegm(&tm);
  if (static_cast<int>(kDays.find(m[1].str()) / 3) != tm.tm_wday)
    return "day name does not match the date: " + text;
  const auto off = std::chrono::seconds(std::abs(when - std::time(nullptr)));
  if (off > slack) return "off by " + std::to_string(off.count()) + " s: " + text;
  return "";
}

}  // namespace wsb::testing
