// A minimal HTTP listener for Prometheus to scrape a live data plane: GET /metrics answers the text
// that `body()` returns at that moment (prometheus_text.hpp over the worker's published counters);
// any other path is 404, any other method 405. It runs on a thread of its own, one connection at a
// time (a scraper's pace), so a slow client never holds the data plane: the worker only publishes
// its counters to the board that `body` reads.
//
// A request is read for at most 1 s and 8 KiB, and the answer closes the connection. The listener is
// not authenticated: bind it to a loopback or management address.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace flowtrack {

class MetricsServer {
 public:
  // Listens on `address`:`port` (network-order IPv4, host-order port; 0 picks a free one). Throws
  // std::runtime_error naming the address and the problem.
  MetricsServer(std::uint32_t address, std::uint16_t port, std::function<std::string()> body);
  ~MetricsServer();  // stops the thread (within 100 ms) and closes the listener
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::uint16_t port() const { return port_; }  // host order: the one bound

 private:
  void run();
  void serve_one(int client) const;

  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::function<std::string()> body_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace flowtrack
