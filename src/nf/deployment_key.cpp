#include "flowtrack/nf/deployment_key.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "flowtrack/nf/secret_file.hpp"

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
  std::vector<std::uint8_t> secret = read_secret_file("deployment key", path, kMinBytes, kMaxBytes);
  DeploymentKey key(secret);
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
