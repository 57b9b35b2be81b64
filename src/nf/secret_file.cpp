#include "flowtrack/nf/secret_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace flowtrack {

namespace {
// Closes a descriptor and wipes a buffer at the end of its scope, on every path out, thrown or not.
struct ReadGuard {
  int fd;
  std::vector<std::uint8_t>& buffer;
  ~ReadGuard() {
    ::close(fd);
    ::explicit_bzero(buffer.data(), buffer.size());
  }
};
}  // namespace

std::vector<std::uint8_t> read_secret_file(std::string_view what, const std::string& path, std::size_t min_bytes, std::size_t max_bytes) {
  const auto refuse = [&](std::string_view problem) { return std::runtime_error(fmt::format("{} {}: {}", what, path, problem)); };
  // Non-blocking: a FIFO named as the key file is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw refuse(std::strerror(errno));
  // One byte more than a key may have: a longer file is refused, not cut.
  std::vector<std::uint8_t> buffer(max_bytes + 1);
  const ReadGuard guard{fd, buffer};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw refuse(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw refuse("not a regular file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) throw refuse("others than its owner may read or write it (chmod 600)");
  std::size_t length = 0;
  while (length < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + length, buffer.size() - length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw refuse(std::strerror(errno));
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  if (length < min_bytes || length > max_bytes) {
    throw refuse(fmt::format("{}{} bytes; a key has {} to {}", length > max_bytes ? "over " : "", std::min(length, max_bytes), min_bytes, max_bytes));
  }
  return {buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(length)};
}

}  // namespace flowtrack
