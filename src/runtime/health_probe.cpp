#include "flowtrack/runtime/health_probe.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "flowtrack/nf/health_answer.hpp"

namespace flowtrack {

HealthProbes::~HealthProbes() {
  for (const Probe& p : probes_) {
    if (p.fd >= 0) close(p.fd);
  }
}

Nanos HealthProbes::steady_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<Nanos>(t.tv_sec) * kNanosPerSecond + static_cast<Nanos>(t.tv_nsec);
}

void HealthProbes::start(std::size_t id, const HealthTarget& target, Nanos deadline) {
  Probe& p = probes_.emplace_back(Probe{id, -1, Phase::connecting, deadline, &target.check, {}, {}});
  p.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (p.fd < 0) return finish(p, false);
  if (target.tunnel.tunnels() && !through_tunnel(p.fd, target)) return finish(p, false);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = target.destination();
  address.sin_port = target.port;
  if (target.check.probe == HealthProbe::http) {
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text));
    p.request = fmt::format("GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: flowtrack-health\r\nConnection: close\r\n\r\n",
                            target.check.path, text);
  }
  if (connect(p.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) return connected(p);
  if (errno != EINPROGRESS) finish(p, false);  // refused at once (a local port nobody listens on)
}

bool HealthProbes::through_tunnel(int fd, const HealthTarget& target) {
  if (tunnel_ == nullptr) return false;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = local_address_towards(target.address);  // the backend answers the VIP's clients there
  socklen_t length = sizeof(local);
  if (local.sin_addr.s_addr == 0 || bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return false;
  }
  tunnel_->routes().set(local.sin_port, target.address, target.tunnel);
  return true;
}

void HealthProbes::poll_until(Nanos until) {
  std::vector<pollfd> waiting;
  std::vector<std::size_t> of;  // waiting[i] is probes_[of[i]]'s
  for (;;) {
    const Nanos now = steady_now();
    Nanos wake = until;
    waiting.clear();
    of.clear();
    for (std::size_t i = 0; i < probes_.size(); ++i) {
      Probe& p = probes_[i];
      if (p.phase == Phase::passed || p.phase == Phase::failed) return;  // one done: its result is due
      if (now >= p.deadline) {
        finish(p, false);
        return;
      }
      wake = std::min(wake, p.deadline);
      waiting.push_back({p.fd, static_cast<short>(p.phase == Phase::receiving ? POLLIN : POLLOUT), 0});
      of.push_back(i);
    }
    if (now >= until) return;
    if (tunnel_ != nullptr) waiting.push_back({tunnel_->fd(), POLLIN, 0});  // last: no probe's
    // At least 1 ms: a deadline a few microseconds away is met at the next round, not spun on.
    const int timeout_ms = static_cast<int>(std::max<Nanos>((wake - now + kNanosPerMilli - 1) / kNanosPerMilli, 1));
    const int ready = poll(waiting.data(), waiting.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return;
    for (std::size_t k = 0; ready > 0 && k < of.size(); ++k) {
      if (waiting[k].revents != 0) on_ready(probes_[of[k]], waiting[k].revents);
    }
    if (tunnel_ != nullptr && ready > 0 && waiting.back().revents != 0) tunnel_->relay();
  }
}

void HealthProbes::on_ready(Probe& p, short events) {
  if (p.phase == Phase::receiving) return receive(p);
  int error = 0;
  socklen_t length = sizeof(error);
  if ((events & (POLLERR | POLLHUP)) != 0 || getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    return finish(p, false);
  }
  connected(p);
}

void HealthProbes::connected(Probe& p) {
  if (p.check->probe == HealthProbe::tcp) return finish(p, true);
  p.phase = Phase::sending;
  const ssize_t sent = send(p.fd, p.request.data(), p.request.size(), MSG_NOSIGNAL);
  if (sent < 0) {
    if (errno != EAGAIN) finish(p, false);
    return;
  }
  p.request.erase(0, static_cast<std::size_t>(sent));
  if (p.request.empty()) p.phase = Phase::receiving;
}

void HealthProbes::receive(Probe& p) {
  char buffer[1024];
  const std::size_t room = kMaxHealthAnswer - p.answer.size();
  const ssize_t n = recv(p.fd, buffer, std::min(sizeof(buffer), room), 0);
  if (n < 0) {
    if (errno != EAGAIN) finish(p, false);
    return;
  }
  p.answer.append(buffer, static_cast<std::size_t>(n));
  // Judged once the backend has said all it will (it closes: HTTP/1.0), or all the check reads.
  if (n == 0 || p.answer.size() == kMaxHealthAnswer) finish(p, http_answer_passes(p.answer, *p.check));
}

void HealthProbes::finish(Probe& p, bool passed) {
  if (p.fd >= 0) close(p.fd);
  p.fd = -1;
  p.phase = passed ? Phase::passed : Phase::failed;
}

void HealthProbes::forget_finished() {
  std::erase_if(probes_, [](const Probe& p) { return p.phase == Phase::passed || p.phase == Phase::failed; });
}

}  // namespace flowtrack
