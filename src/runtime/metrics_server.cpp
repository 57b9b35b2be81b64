#include "flowtrack/runtime/metrics_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <string_view>

namespace flowtrack {
namespace {

constexpr std::size_t kMaxRequest = 8192;
constexpr int kPollMillis = 100;  // how often the thread looks at its stop flag

std::string http_reply(std::string_view status, std::string_view content_type, std::string_view body) {
  return fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", status,
                     content_type, body.size(), body);
}

}  // namespace

MetricsServer::MetricsServer(std::uint32_t address, std::uint16_t port, std::function<std::string()> body)
    : body_(std::move(body)) {
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_addr.s_addr = address;
  where.sin_port = htons(port);
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &where.sin_addr, text, sizeof(text));
  const auto failed = [&](const char* what) {
    const std::runtime_error error(fmt::format("metrics listener {}:{}: {}: {}", text, port, what, std::strerror(errno)));
    if (listener_ >= 0) ::close(listener_);
    return error;
  };
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw failed("socket");
  const int one = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listener_, reinterpret_cast<const sockaddr*>(&where), sizeof(where)) != 0) throw failed("bind");
  if (::listen(listener_, 16) != 0) throw failed("listen");
  socklen_t length = sizeof(where);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&where), &length);
  port_ = ntohs(where.sin_port);
  thread_ = std::thread([this] { run(); });
}

MetricsServer::~MetricsServer() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
  ::close(listener_);
}

void MetricsServer::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    pollfd waiting{listener_, POLLIN, 0};
    if (::poll(&waiting, 1, kPollMillis) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    serve_one(client);
    ::close(client);
  }
}

void MetricsServer::serve_one(int client) const {
  const timeval deadline{1, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline));
  ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline));
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequest) {
    const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  // The request line: METHOD SP TARGET SP VERSION.
  const std::string_view line = std::string_view(request).substr(0, request.find("\r\n"));
  const std::size_t space = line.find(' ');
  const std::string_view method = line.substr(0, space);
  std::string_view target = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  target = target.substr(0, target.find(' '));
  std::string answer;
  if (method != "GET") answer = http_reply("405 Method Not Allowed", "text/plain", "only GET\n");
  else if (target != "/metrics") answer = http_reply("404 Not Found", "text/plain", "try /metrics\n");
  else answer = http_reply("200 OK", "text/plain; version=0.0.4; charset=utf-8", body_());
  for (std::string_view rest = answer; !rest.empty();) {
    const ssize_t n = ::send(client, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace flowtrack
