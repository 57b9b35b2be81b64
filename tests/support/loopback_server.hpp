// A TCP server on 127.0.0.1 for the health checks' tests: it answers each connection with a fixed text
// (then closes it), or with nothing (keeping it open) when the text is empty, until destroyed. On a port
// of the kernel's choice, or on a given one (SO_REUSEADDR: a server stopped and started again on its
// port, as a backend restarted).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace flowtrack::testing {

class LoopbackServer {
 public:
  // `port`: network order, 0 for any.
  explicit LoopbackServer(std::string answer, std::uint16_t port = 0) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = port;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t length = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length);
    port_ = a.sin_port;
    EXPECT_EQ(listen(fd_, 64), 0);
    thread_ = std::thread([this] { serve(); });
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    for (const int c : held_) close(c);
    close(fd_);
  }
  std::uint16_t port() const { return port_; }  // network order

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 10) <= 0) continue;
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      if (answer_.empty()) {
        held_.push_back(c);
        continue;
      }
      char request[1024];
      [[maybe_unused]] const ssize_t n = recv(c, request, sizeof(request), 0);
      [[maybe_unused]] const ssize_t sent = send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
      close(c);
    }
  }

  std::string answer_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<int> held_;  // the silent server's connections, open until it stops
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace flowtrack::testing
