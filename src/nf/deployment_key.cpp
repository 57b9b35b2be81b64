#include "flowtrack/nf/deployment_key.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace flowtrack {
namespace {

static_assert(crypto_shorthash_KEYBYTES == 16 && crypto_shorthash_BYTES == 8, "SipHash-2-4: a 128-bit key, a 64-bit hash");

// BLAKE2b of a label and the secret, 16 bytes (its shortest output): the labels keep the derived key and
// the fingerprint independent of each other (one says nothing of the other).
using Derived = std::array<std::uint8_t, crypto_generichash_BYTES_MIN>;
static_assert(crypto_generichash_BYTES_MIN == 16);
Derived derive(std::string_view label, std::span<const std::uint8_t> secret) {
  crypto_generichash_state state;
  Derived out{};
  crypto_generichash_init(&state, nullptr, 0, out.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(label.data()), label.size());
  crypto_generichash_update(&state, secret.data(), secret.size());
  crypto_generichash_final(&state, out.data(), out.size());
  return out;
}

// Closes a descriptor at the end of its scope.
struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

}  // namespace

DeploymentKey::DeploymentKey(std::span<const std::uint8_t> secret) {
  if (secret.size() < kMinBytes || secret.size() > kMaxBytes) {
    throw std::invalid_argument(fmt::format("deployment key: {} bytes; a key has {} to {}", secret.size(), kMinBytes, kMaxBytes));
  }
  if (sodium_init() < 0) throw std::runtime_error("deployment key: libsodium did not initialise");
  siphash_key_ = derive("flowtrack consistent choice key", secret);
  // Half of its label's hash: 64 bits name a key among any deployment's few without ambiguity.
  const Derived fingerprint = derive("flowtrack deployment key fingerprint", secret);
  for (std::size_t i = 0; i < 8; ++i) fingerprint_ += fmt::format("{:02x}", fingerprint[i]);
}

DeploymentKey DeploymentKey::from_file(const std::string& path) {
  const auto refuse = [&](const std::string& problem) { return std::runtime_error(fmt::format("deployment key {}: {}", path, problem)); };
  // Non-blocking: a FIFO named as the key file is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw refuse(std::strerror(errno));
  const FileCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw refuse(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw refuse("not a regular file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) throw refuse("others than its owner may read or write it (chmod 600)");
  // One byte more than a key may have: a longer file is refused, not cut.
  std::vector<std::uint8_t> secret(kMaxBytes + 1);
  std::size_t length = 0;
  while (length < secret.size()) {
    const ssize_t n = ::read(fd, secret.data() + length, secret.size() - length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw refuse(std::strerror(errno));
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  if (length < kMinBytes || length > kMaxBytes) {
    throw refuse(fmt::format("{}{} bytes; a key has {} to {}", length > kMaxBytes ? "over " : "", std::min(length, kMaxBytes), kMinBytes, kMaxBytes));
  }
  DeploymentKey key(std::span<const std::uint8_t>(secret.data(), length));
  sodium_memzero(secret.data(), secret.size());
  return key;
}

std::uint32_t DeploymentKey::choice_hash(const FlowKeyV4& key) const {
  std::array<unsigned char, crypto_shorthash_BYTES> hash;
  crypto_shorthash(hash.data(), reinterpret_cast<const unsigned char*>(&key), sizeof(FlowKeyV4), siphash_key_.data());
  std::uint32_t low;
  std::memcpy(&low, hash.data(), sizeof(low));
  return low;
}

}  // namespace flowtrack
