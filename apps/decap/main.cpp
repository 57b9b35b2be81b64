// flowtrack-decap: the backend's end of a load balancer's tunnel (nf/tunnel.hpp), in userspace, for
// hosts whose kernel has neither the ipip nor the fou module. It receives IPIP packets on a raw socket of
// protocol 4, GUE (variant 1) packets on a UDP socket bound to the tunnel's port, or both, takes each
// client's packet out (ipip_inner, gue_inner: a malformed one is counted and dropped) and writes it into
// a TUN device, so that this host's kernel receives it as if it had arrived on that device: a packet
// from the client to the VIP, which the host holds on its loopback, and answers the client directly.
//
//   flowtrack-decap --tun NAME [--ipip] [--gue PORT]
//
// The TUN device is created (or attached to) and brought up. For the kernel to take the packets, the
// device must not filter them by their source (rp_filter 0 on it and on "all") and the VIP must be a
// local address (`ip addr add VIP/32 dev lo`). Stops on SIGINT or SIGTERM and prints what it counted as
// one JSON line: {"received": n, "decapsulated": n, "malformed": n, "write_errors": n}.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "flowtrack/nf/tunnel.hpp"
#include "flowtrack/runtime/tun_device.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Fd open_ipip() {
  Fd s(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_IPIP));
  if (s.get() < 0) fail("a raw socket of protocol 4 (IPIP)");
  return s;
}

Fd open_gue(std::uint16_t port) {
  Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) fail("a UDP socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(s.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    fail("bind UDP port " + std::to_string(port));
  }
  return s;
}

struct Counts {
  std::uint64_t received = 0, decapsulated = 0, malformed = 0, write_errors = 0;
};

// Takes the client's packet out of what `socket` received (`inner_of`) and writes it into the TUN device.
template <class InnerOf>
void relay(int socket, int tun, InnerOf&& inner_of, Counts& counts) {
  std::array<std::uint8_t, 65536> buffer;
  const ssize_t n = recv(socket, buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (n <= 0) return;
  ++counts.received;
  const std::span<const std::uint8_t> inner = inner_of(std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(n)));
  if (inner.empty()) {
    ++counts.malformed;
    return;
  }
  if (write(tun, inner.data(), inner.size()) == static_cast<ssize_t>(inner.size())) {
    ++counts.decapsulated;
  } else {
    ++counts.write_errors;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flowtrack-decap: takes a load balancer's IPIP or GUE packets out of their tunnel into a TUN device"};
  std::string tun_name;
  bool ipip = false;
  std::uint16_t gue_port = 0;
  app.add_option("--tun", tun_name, "the TUN device to write the clients' packets into (created when absent)")->required();
  app.add_flag("--ipip", ipip, "receive IPIP (IP protocol 4) on a raw socket");
  app.add_option("--gue", gue_port, "receive GUE variant 1 (IP in UDP) on this UDP port")->check(CLI::Range(1, 65535));
  CLI11_PARSE(app, argc, argv);
  if (!ipip && gue_port == 0) {
    std::fprintf(stderr, "flowtrack-decap: give --ipip, --gue PORT, or both\n");
    return 2;
  }
  try {
    const flowtrack::TunDevice tun(tun_name);
    std::vector<Fd> sockets;
    std::vector<bool> is_gue;
    if (ipip) {
      sockets.push_back(open_ipip());
      is_gue.push_back(false);
    }
    if (gue_port != 0) {
      sockets.push_back(open_gue(gue_port));
      is_gue.push_back(true);
    }
    std::signal(SIGINT, [](int) { stop_requested = 1; });
    std::signal(SIGTERM, [](int) { stop_requested = 1; });
    Counts counts;
    std::vector<pollfd> waiting(sockets.size());
    while (stop_requested == 0) {
      for (std::size_t i = 0; i < sockets.size(); ++i) waiting[i] = {sockets[i].get(), POLLIN, 0};
      // A bounded wait: a signal that lands between the check and poll() is seen within 100 ms.
      if (poll(waiting.data(), waiting.size(), 100) < 0 && errno != EINTR) fail("poll");
      for (std::size_t i = 0; i < sockets.size(); ++i) {
        if ((waiting[i].revents & POLLIN) == 0) continue;
        if (is_gue[i]) {
          relay(sockets[i].get(), tun.fd(), flowtrack::gue_inner, counts);
        } else {
          relay(sockets[i].get(), tun.fd(), flowtrack::ipip_inner, counts);
        }
      }
    }
    std::printf("{\"received\": %llu, \"decapsulated\": %llu, \"malformed\": %llu, \"write_errors\": %llu}\n",
                static_cast<unsigned long long>(counts.received), static_cast<unsigned long long>(counts.decapsulated),
                static_cast<unsigned long long>(counts.malformed), static_cast<unsigned long long>(counts.write_errors));
    return 0;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "flowtrack-decap: %s\n", e.what());
    return 1;
  }
}
