#include "flowtrack/runtime/control_socket.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

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

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: nothing more to tell it
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

ControlSocket::ControlSocket(std::string path, const std::string& group) : path_(std::move(path)) {
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
      ::listen(listener_, 16) != 0) {
    const std::runtime_error error = system_error(fmt::format("control socket '{}'", path_));
    ::close(listener_);
    if (bound == 0) ::unlink(path_.c_str());
    throw error;
  }
}

ControlSocket::~ControlSocket() {
  ::close(listener_);
  ::unlink(path_.c_str());
}

void ControlSocket::serve(const std::function<std::string(std::string_view)>& answer) {
  for (;;) {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;  // none waiting (EAGAIN), or one that went away before we took it
    const Descriptor closing{client};
    serve_one(client, answer);
  }
}

void ControlSocket::serve_one(int client, const std::function<std::string(std::string_view)>& answer) {
  ucred peer{};
  socklen_t length = sizeof(peer);
  const bool allowed = ::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 &&
                       (peer.uid == 0 || peer.uid == ::geteuid() || (has_group_ && peer.gid == group_));
  if (!allowed) {
    write_all(client, "error: not allowed\n");
    return;
  }
  const timeval deadline{0, 100'000};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline));
  ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline));
  std::string line;
  char buffer[kMaxControlRequest + 2];
  for (;;) {
    const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) break;  // end of the request, the deadline, or an error: what came is the request
    line.append(buffer, static_cast<std::size_t>(n));
    if (line.find('\n') != std::string::npos || line.size() > kMaxControlRequest) break;
  }
  if (const std::size_t newline = line.find('\n'); newline != std::string::npos) line.resize(newline);
  // A longer line is cut one byte past the limit: the parser refuses it whole.
  if (line.size() > kMaxControlRequest + 1) line.resize(kMaxControlRequest + 1);
  write_all(client, answer(line) + "\n");
}

std::string control_call(const std::string& path, std::string_view request) {
  const sockaddr_un address = address_of(path);
  const Descriptor fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) throw system_error("socket");
  if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    throw system_error(fmt::format("cannot connect to the control socket '{}'", path));
  }
  write_all(fd.fd, std::string(request) + "\n");
  ::shutdown(fd.fd, SHUT_WR);
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd.fd, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, static_cast<std::size_t>(n));
  if (!reply.empty() && reply.back() == '\n') reply.pop_back();
  return reply;
}

}  // namespace flowtrack
