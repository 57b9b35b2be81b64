// The control socket (runtime/control_socket.hpp): one request and one reply per connection, served
// without waiting when nobody calls, clients side by side (one that trickles its request or sends
// nothing holds no other, and is dropped at its deadline; one more than the most gets an error at once),
// owner-only unless a group is named, refusing an oversized request and anyone but the owner (root only:
// that test changes its user in a child process).
#include "flowtrack/runtime/control_socket.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <vector>

#include "flowtrack/nf/control_request.hpp"

namespace flowtrack {
namespace {

std::string socket_path() {
  return (std::filesystem::temp_directory_path() / ("flowtrack_ctl_" + std::to_string(::getpid()) + ".sock")).string();
}

std::string echo(std::string_view line) { return "got [" + std::string(line) + "]"; }

// Serves until `reply` is ready.
template <class T>
T serve_until(ControlSocket& server, std::future<T>& reply) {
  while (reply.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) server.serve(std::chrono::milliseconds(1), echo);
  return reply.get();
}

// Calls `request` from another thread while this one serves until it has answered.
std::string call(ControlSocket& server, const std::string& request) {
  auto reply = std::async(std::launch::async, [&] { return control_call(server.path(), request); });
  return serve_until(server, reply);
}

// A connected client socket that sends nothing until told.
int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

std::string read_all(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  return text;
}

TEST(ControlSocket, AnswersOneLinePerConnectionAndNeverWaitsForCallers) {
  ControlSocket server(socket_path(), "");
  server.serve(std::chrono::milliseconds(0), [](std::string_view) -> std::string { throw std::logic_error("nobody called"); });
  EXPECT_EQ(call(server, "counters"), "got [counters]");
  EXPECT_EQ(call(server, "drain web b1"), "got [drain web b1]");
}

// A client that has sent half its request, and ten that sent nothing, are open while another asks:
// it is answered at once; the half one is answered once it finishes its line.
TEST(ControlSocket, AClientThatTricklesOrSendsNothingHoldsNoOther) {
  ControlSocket server(socket_path(), "", std::chrono::seconds(60));  // no deadline passes while the test runs
  const int slow = connect_to(server.path());
  ASSERT_EQ(::send(slow, "coun", 4, MSG_NOSIGNAL), 4);
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) idle.push_back(connect_to(server.path()));
  server.serve(std::chrono::milliseconds(5), echo);
  EXPECT_EQ(call(server, "drain web b1"), "got [drain web b1]");
  EXPECT_EQ(server.clients(), 11u) << "the slow and the idle clients are still waiting";
  auto slow_reply = std::async(std::launch::async, [&] {
    ::send(slow, "ters\n", 5, MSG_NOSIGNAL);
    return read_all(slow);
  });
  EXPECT_EQ(serve_until(server, slow_reply), "got [counters]\n");
  ::close(slow);
  for (const int fd : idle) ::close(fd);
}

TEST(ControlSocket, AClientWithoutAWholeLineByItsDeadlineGetsAnErrorAndIsClosed) {
  ControlSocket server(socket_path(), "", std::chrono::milliseconds(20));
  const int silent = connect_to(server.path());
  auto reply = std::async(std::launch::async, [&] { return read_all(silent); });
  EXPECT_EQ(serve_until(server, reply), "error: no whole request line within 20 ms\n");
  EXPECT_EQ(server.clients(), 0u);
  ::close(silent);
}

TEST(ControlSocket, OneClientMoreThanTheMostIsRefusedAtOnce) {
  ControlSocket server(socket_path(), "", std::chrono::seconds(60));
  std::vector<int> waiting;
  for (std::size_t i = 0; i < ControlSocket::kMaxClients; ++i) {
    waiting.push_back(connect_to(server.path()));
    server.serve(std::chrono::milliseconds(1), echo);  // taken in, so the listen queue never fills
  }
  ASSERT_EQ(server.clients(), ControlSocket::kMaxClients);
  EXPECT_EQ(call(server, "counters").rfind("error: 32 control clients already connected", 0), 0u);
  for (const int fd : waiting) ::close(fd);
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
