// The control socket (runtime/control_socket.hpp): one request and one reply per connection, served
// without waiting when nobody calls, owner-only unless a group is named, refusing an oversized request
// and anyone but the owner (root only: that test changes its user in a child process).
#include "flowtrack/runtime/control_socket.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>

#include "flowtrack/nf/control_request.hpp"

namespace flowtrack {
namespace {

std::string socket_path() {
  return (std::filesystem::temp_directory_path() / ("flowtrack_ctl_" + std::to_string(::getpid()) + ".sock")).string();
}

// Calls `request` from another thread while this one serves until it has answered.
std::string call(ControlSocket& server, const std::string& request) {
  auto reply = std::async(std::launch::async, [&] { return control_call(server.path(), request); });
  while (reply.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
    server.serve([](std::string_view line) { return "got [" + std::string(line) + "]"; });
  }
  return reply.get();
}

TEST(ControlSocket, AnswersOneLinePerConnectionAndNeverWaitsForCallers) {
  ControlSocket server(socket_path(), "");
  server.serve([](std::string_view) -> std::string { throw std::logic_error("nobody called"); });
  EXPECT_EQ(call(server, "counters"), "got [counters]");
  EXPECT_EQ(call(server, "drain web b1"), "got [drain web b1]");
}

TEST(ControlSocket, IsTheOwnersOnlyAndGoneWithTheServer) {
  const std::string path = socket_path();
  {
    ControlSocket server(path, "");
    struct stat s{};
    ASSERT_EQ(::stat(path.c_str(), &s), 0);
    EXPECT_TRUE(S_ISSOCK(s.st_mode));
    EXPECT_EQ(s.st_mode & 0777, 0600u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ControlSocket, ANamedGroupMayUseItToo) {
  ControlSocket server(socket_path(), "root");  // group 0 exists everywhere
  struct stat s{};
  ASSERT_EQ(::stat(server.path().c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0660u);
  EXPECT_EQ(s.st_gid, 0u);
  EXPECT_THROW(ControlSocket(socket_path() + "2", "no-such-group-here"), std::runtime_error);
}

TEST(ControlSocket, AnOversizedRequestIsCutSoTheParserRefusesIt) {
  ControlSocket server(socket_path(), "");
  const std::string reply = call(server, std::string(4 * kMaxControlRequest, 'x'));
  EXPECT_EQ(reply.size(), std::string("got []").size() + kMaxControlRequest + 1);
}

TEST(ControlSocket, RefusesToReplaceAFileThatIsNotASocket) {
  const std::string path = socket_path();
  { std::ofstream(path) << "data"; }
  EXPECT_THROW(ControlSocket(path, ""), std::runtime_error);
  std::filesystem::remove(path);
}

TEST(ControlSocket, AnotherUserCannotConnect) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  ControlSocket server(socket_path(), "");
  const pid_t child = ::fork();
  if (child == 0) {
    // nobody: the socket file's mode keeps it out before the server sees it.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    try {
      control_call(server.path(), "counters");
      ::_exit(1);
    } catch (const std::runtime_error&) {
      ::_exit(0);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: connected, 2: could not change user";
}

}  // namespace
}  // namespace flowtrack
