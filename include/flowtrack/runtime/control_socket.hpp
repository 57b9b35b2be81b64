// A live data plane's control socket: a Unix stream socket on which each connection carries one
// request line and gets one reply (`flowtrack ctl`; the requests: nf/control_request.hpp). It is served
// on the control plane's thread, beside the workers (runtime/live_service.hpp), never on a worker: a
// slow, idle or hostile client never delays a packet.
//
// Who may talk to it: the socket file is the owner's only (0600), or the owner's and one group's
// (0660) when a group is named; a Unix socket takes a connection only from who may write its file.
// The peer's credentials are checked too (SO_PEERCRED): the owner, root, or a member of the group
// (by its primary group; a supplementary member is let in by the file's mode alone). Anyone else gets
// "error: not allowed" and nothing is read.
//
// Clients are served side by side (poll): each has a deadline (kRequestDeadline unless told otherwise)
// from its connection to send its whole line, and at most kMaxControlRequest bytes are taken; a client that is too slow gets an error
// reply and is closed, so one that trickles its request or sends nothing holds no other. At most
// kMaxClients connections are open at once; one more gets an error reply at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flowtrack {

class ControlSocket {
 public:
  static constexpr std::chrono::milliseconds kRequestDeadline{1000};
  static constexpr std::size_t kMaxClients = 32;

  // Listens on `path` (a stale socket file there is replaced; any other file is an error). `group`:
  // a group name, or empty for owner-only. Throws std::runtime_error naming the problem.
  ControlSocket(std::string path, const std::string& group, std::chrono::milliseconds request_deadline = kRequestDeadline);
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Waits up to `wait` for connections and request bytes, and replies to every request that is whole
  // by then: reply = answer(request line). Returns after `wait` at most (0: serves what is ready now).
  void serve(std::chrono::milliseconds wait, const std::function<std::string(std::string_view)>& answer);

  const std::string& path() const { return path_; }
  std::size_t clients() const { return clients_.size(); }

 private:
  struct Client {
    int fd;
    std::chrono::steady_clock::time_point deadline;
    std::string request;
  };

  void accept_waiting();
  // Reads what the client sent; true once its request is whole (or it stopped sending).
  bool read_request(Client& client);
  void reply_and_close(Client& client, std::string_view reply);

  std::string path_;
  std::chrono::milliseconds request_deadline_;
  int listener_ = -1;
  bool has_group_ = false;
  gid_t group_ = 0;
  std::vector<Client> clients_;
  std::pair<dev_t, ino_t> file_{};  // the socket file it bound (device, inode)
};

// The client side: sends `request` (one line) to the socket at `path` and returns the reply. Throws
// std::runtime_error when it cannot connect, the connection breaks, or (a `timeout` above 0) the reply
// does not come within it.
std::string control_call(const std::string& path, std::string_view request, std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

}  // namespace flowtrack
