#include "flowtrack/runtime/route_announcer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "flowtrack/nf/route_announcement.hpp"

extern char** environ;

namespace flowtrack {
namespace {

Nanos monotonic_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `text` into `path` whole: a temporary file beside it, renamed over it.
std::optional<std::string> write_whole(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.close();
    if (!out) return fmt::format("cannot write {}", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return fmt::format("cannot rename {} to {}: {}", temporary, path, std::strerror(errno));
  return std::nullopt;
}

}  // namespace

std::optional<std::string> run_program(const std::vector<std::string>& argv, Nanos timeout) {
  std::vector<char*> args;
  for (const std::string& word : argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return fmt::format("cannot run {}: {}", argv[0], std::strerror(error));
  const Nanos give_up = monotonic_now() + timeout;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return fmt::format("waiting for {}: {}", argv[0], std::strerror(errno));
    if (monotonic_now() >= give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return fmt::format("'{}' took more than {} s: killed", fmt::join(argv, " "), timeout / kNanosPerSecond);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  if (WIFEXITED(status)) return fmt::format("'{}' exited with status {}", fmt::join(argv, " "), WEXITSTATUS(status));
  return fmt::format("'{}' ended by signal {}", fmt::join(argv, " "), WTERMSIG(status));
}

RouteAnnouncer::RouteAnnouncer(AnnounceConfig config, std::function<void(const std::string&)> note)
    : config_(std::move(config)), note_(std::move(note)) {
  if (const auto problem = write_whole(config_.file, bird_static_routes({}))) throw std::runtime_error("[dataplane.announce] " + *problem);
  publish({});
}

bool RouteAnnouncer::publish(const std::vector<std::uint32_t>& vips) {
  if (told_ == vips) return true;
  const Nanos now = monotonic_now();
  // The same failure again waits a while: a speaker that is down is not asked ten times a second.
  if (failed_ == vips && now - failed_at_ < kRetryAfter) return false;
  if (const auto problem = tell(vips)) {
    if (failed_ != vips) note_(fmt::format("announce: {}", *problem));
    failed_ = vips;
    failed_at_ = now;
    told_.reset();  // the speaker's state is not known: the next publish tells it again, whatever it is
    return false;
  }
  told_ = vips;
  failed_.reset();
  return true;
}

std::optional<std::string> RouteAnnouncer::tell(const std::vector<std::uint32_t>& vips) const {
  if (auto problem = write_whole(config_.file, bird_static_routes(vips))) return problem;
  if (config_.command.empty()) return std::nullopt;
  return run_program(config_.command, kCommandTimeout);
}

}  // namespace flowtrack
