// A live data plane's control socket: a Unix stream socket on which each connection carries one
// request line and gets one reply (`flowtrack ctl`; the requests: nf/control_request.hpp). The data
// plane serves it between ticks (runtime/live_loop.hpp), so a change takes effect between bursts.
//
// Who may talk to it: the socket file is the owner's only (0600), or the owner's and one group's
// (0660) when a group is named; a Unix socket takes a connection only from who may write its file.
// The peer's credentials are checked too (SO_PEERCRED): the owner, root, or a member of the group
// (by its primary group; a supplementary member is let in by the file's mode alone). Anyone else gets
// "error: not allowed" and nothing is read.
//
// A request is read, and its reply written, with a 100 ms deadline each, and at most
// kMaxControlRequest bytes are taken: a slow or silent client holds the data plane at most that long,
// an oversized request gets an error reply.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

namespace flowtrack {

class ControlSocket {
 public:
  // Listens on `path` (a stale socket file there is replaced; any other file is an error). `group`:
  // a group name, or empty for owner-only. Throws std::runtime_error naming the problem.
  ControlSocket(std::string path, const std::string& group);
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Serves every connection waiting now: reply = answer(request line); never waits for a new one.
  void serve(const std::function<std::string(std::string_view)>& answer);

  const std::string& path() const { return path_; }

 private:
  void serve_one(int client, const std::function<std::string(std::string_view)>& answer);

  std::string path_;
  int listener_ = -1;
  bool has_group_ = false;
  gid_t group_ = 0;
};

// The client side: sends `request` (one line) to the socket at `path` and returns the reply. Throws
// std::runtime_error when it cannot connect or the connection breaks.
std::string control_call(const std::string& path, std::string_view request);

}  // namespace flowtrack
