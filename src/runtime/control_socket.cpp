#include "flowtrack/runtime/control_socket.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <utility>

#include "flowtrack/nf/control_request.hpp"

namespace flowtrack {
namespace {

std::runtime_error system_error(const std::string& what) { return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno))); }

sockaddr_un address_of(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    throw std::runtime_error(fmt::format("control socket '{}': a path of 1 to {} bytes is needed", path, sizeof(address.sun_path) - 1));
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// A reply is a line of a few kilobytes at most, far less than a Unix socket's buffer: sent in one go,
// without waiting (a client that does not read loses its reply, nobody else waits for it).
void send_reply(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

ControlSocket::ControlSocket(std::string path, const std::string& group, std::chrono::milliseconds request_deadline)
    : path_(std::move(path)), request_deadline_(request_deadline) {
  const sockaddr_un address = address_of(path_);
  if (!group.empty()) {
    const struct group* g = ::getgrnam(group.c_str());
    if (g == nullptr) throw std::runtime_error(fmt::format("control socket: no group named '{}'", group));
    has_group_ = true;
    group_ = g->gr_gid;
  }
  struct stat existing{};
  if (::lstat(path_.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) throw std::runtime_error(fmt::format("control socket '{}': a file that is not a socket is there", path_));
    ::unlink(path_.c_str());
  }
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw system_error("control socket");
  // The file is created owner-only (the umask around bind), then opened to the group if one is named:
  // at no moment can anyone else connect.
  const mode_t saved = ::umask(0177);
  const int bound = ::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  ::umask(saved);
  if (bound != 0 || (has_group_ && (::chown(path_.c_str(), static_cast<uid_t>(-1), group_) != 0 || ::chmod(path_.c_str(), 0660) != 0)) ||
      ::listen(listener_, static_cast<int>(kMaxClients)) != 0) {
    const std::runtime_error error = system_error(fmt::format("control socket '{}'", path_));
    ::close(listener_);
    if (bound == 0) ::unlink(path_.c_str());
    throw error;
  }
  struct stat bound_file{};
  if (::stat(path_.c_str(), &bound_file) == 0) file_ = {bound_file.st_dev, bound_file.st_ino};
}

ControlSocket::~ControlSocket() {
  for (const Client& c : clients_) ::close(c.fd);
  ::close(listener_);
  // Only the file it bound: a successor (a hand-over, hand_over.hpp) may have put its own socket there.
  struct stat now{};
  if (::stat(path_.c_str(), &now) == 0 && std::pair(now.st_dev, now.st_ino) == file_) ::unlink(path_.c_str());
}

void ControlSocket::accept_waiting() {
  for (;;) {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // none waiting (EAGAIN), or one that went away before we took it
    ucred peer{};
    socklen_t length = sizeof(peer);
    const bool allowed = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 &&
                         (peer.uid == 0 || peer.uid == ::geteuid() || (has_group_ && peer.gid == group_));
    if (!allowed || clients_.size() == kMaxClients) {
      send_reply(fd, allowed ? fmt::format("error: {} control clients already connected\n", kMaxClients) : "error: not allowed\n");
      ::close(fd);
      continue;
    }
    clients_.push_back({fd, std::chrono::steady_clock::now() + request_deadline_, {}});
  }
}

bool ControlSocket::read_request(Client& client) {
  char buffer[kMaxControlRequest + 2];
  for (;;) {
    const ssize_t n = ::recv(client.fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;  // the client shut its side: what came is the request
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    client.request.append(buffer, static_cast<std::size_t>(n));
    if (client.request.find('\n') != std::string::npos || client.request.size() > kMaxControlRequest) return true;
  }
}

void ControlSocket::reply_and_close(Client& client, std::string_view reply) {
  send_reply(client.fd, reply);
  ::close(client.fd);
  client.fd = -1;
}

void ControlSocket::serve(std::chrono::milliseconds wait, const std::function<std::string(std::string_view)>& answer) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({listener_, POLLIN, 0});
    for (const Client& c : clients_) fds.push_back({c.fd, POLLIN, 0});
    // Wake for the earliest client deadline too, so a silent client is dropped on time.
    auto wake = until;
    for (const Client& c : clients_) wake = std::min(wake, c.deadline);
    const auto timeout = std::chrono::ceil<std::chrono::milliseconds>(wake - std::chrono::steady_clock::now());
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(timeout.count(), 0)));
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < clients_.size(); ++k) {
      Client& c = clients_[k];
      if ((fds[k + 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && read_request(c)) {
        std::string line = c.request.substr(0, c.request.find('\n'));
        // A longer line is cut one byte past the limit: the parser refuses it whole.
        if (line.size() > kMaxControlRequest + 1) line.resize(kMaxControlRequest + 1);
        reply_and_close(c, answer(line) + "\n");
      } else if (now >= c.deadline) {
        reply_and_close(c, fmt::format("error: no whole request line within {} ms\n", request_deadline_.count()));
      }
    }
    std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
    if ((fds[0].revents & POLLIN) != 0) accept_waiting();
    if (now >= until) return;
  }
}

std::string control_call(const std::string& path, std::string_view request, std::chrono::milliseconds timeout) {
  const sockaddr_un address = address_of(path);
  const Descriptor fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) throw system_error("socket");
  if (timeout.count() > 0) {
    const timeval limit{.tv_sec = timeout.count() / 1000, .tv_usec = (timeout.count() % 1000) * 1000};
    if (::setsockopt(fd.fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) != 0 ||
        ::setsockopt(fd.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)) != 0) {
      throw system_error("control socket: a time limit");
    }
  }
  if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    throw system_error(fmt::format("cannot connect to the control socket '{}'", path));
  }
  const std::string line = std::string(request) + "\n";
  // A server that refuses the client (too many clients, not allowed) answers and closes before it
  // reads: the request then meets a closed socket, and the refusal waits in the receive queue.
  bool refused = false;
  for (std::string_view left = line; !left.empty() && !refused;) {
    const ssize_t n = ::send(fd.fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (n <= 0 && errno != EPIPE && errno != ECONNRESET) throw system_error(fmt::format("control socket '{}'", path));
    refused = n <= 0;
    if (!refused) left.remove_prefix(static_cast<std::size_t>(n));
  }
  const int send_error = errno;
  if (!refused) ::shutdown(fd.fd, SHUT_WR);
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd.fd, buffer, sizeof(buffer), 0)) > 0) reply.append(buffer, static_cast<std::size_t>(n));
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    throw std::runtime_error(fmt::format("control socket '{}': no answer within {} ms", path, timeout.count()));
  }
  if (refused && reply.empty()) {
    errno = send_error;
    throw system_error(fmt::format("control socket '{}'", path));
  }
  if (!reply.empty() && reply.back() == '\n') reply.pop_back();
  return reply;
}

}  // namespace flowtrack
