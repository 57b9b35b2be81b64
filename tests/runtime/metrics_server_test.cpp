// The metrics listener (runtime/metrics_server.hpp): GET /metrics answers what the body function
// returns at that moment, as text/plain 0.0.4; other paths and methods get 404 and 405; it stops
// when destroyed.
#include "flowtrack/runtime/metrics_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace flowtrack {
namespace {

// One HTTP exchange with the listener on 127.0.0.1:`port`: the whole answer.
std::string http_exchange(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(port);
  where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&where), sizeof(where)) == 0) {
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

TEST(MetricsServer, GetMetricsAnswersTheBodyOfTheMoment) {
  std::atomic<int> scrapes{0};
  MetricsServer server(htonl(INADDR_LOOPBACK), 0, [&] { return "flowtrack_scrapes " + std::to_string(++scrapes) + "\n"; });
  ASSERT_NE(server.port(), 0);
  for (int i = 1; i <= 2; ++i) {
    const std::string answer = http_exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
    EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
    const std::string body = "flowtrack_scrapes " + std::to_string(i) + "\n";
    EXPECT_NE(answer.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos) << answer;
    EXPECT_TRUE(answer.ends_with("\r\n\r\n" + body)) << answer;
  }
}

TEST(MetricsServer, OtherPathsAndMethodsAreRefused) {
  MetricsServer server(htonl(INADDR_LOOPBACK), 0, [] { return std::string("x 1\n"); });
  EXPECT_TRUE(http_exchange(server.port(), "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 ")) << "path /";
  EXPECT_TRUE(http_exchange(server.port(), "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
  EXPECT_TRUE(http_exchange(server.port(), "garbage\r\n\r\n").starts_with("HTTP/1.1 405 "));
  EXPECT_TRUE(http_exchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 ")) << "still serving";
}

TEST(MetricsServer, AnAddressInUseIsAClearError) {
  MetricsServer first(htonl(INADDR_LOOPBACK), 0, [] { return std::string(); });
  try {
    MetricsServer second(htonl(INADDR_LOOPBACK), first.port(), [] { return std::string(); });
    FAIL() << "two listeners on one port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flowtrack
