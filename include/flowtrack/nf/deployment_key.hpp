// The deployment key: a secret that every stateful LB instance of one deployment shares, so that each
// gives a new connection the same backend without asking the others (several instances behind routers
// that spread packets by ECMP: any of them may see a connection's next packet).
//
// The consistent choice (Maglev's table, backend_pool.hpp) reads a hash of the connection's tuple.
// Without a key that is the flow hash the tracker uses, CRC32C from a public seed: anyone can compute
// it, and so pick tuples that all land on one backend. With a key it is SipHash-2-4 (libsodium's
// crypto_shorthash) of the tuple under a 128-bit key derived from the secret: the same in every instance
// that has the secret, unpredictable to anyone who lacks it.
//
// The secret never leaves this object: no accessor returns it or the derived key, and what may be shown
// (a log, `flowtrack choices`) is its fingerprint, a hash of the secret under another label from which
// neither can be recovered; two instances with the same fingerprint have the same key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {

class DeploymentKey {
 public:
  static constexpr std::size_t kMinBytes = 16;  // 128 bits: the derived key's strength
  static constexpr std::size_t kMaxBytes = 1024;

  // Throws std::invalid_argument for a secret of fewer than kMinBytes or more than kMaxBytes.
  explicit DeploymentKey(std::span<const std::uint8_t> secret);
  // The whole content of a key file: a regular file that only its owner may read or write. Throws
  // std::runtime_error naming the file and the problem (missing, not a regular file, readable by
  // others, too short or too long).
  static DeploymentKey from_file(const std::string& path);

  // The hash the consistent choice reads for a connection's tuple.
  std::uint32_t choice_hash(const FlowKeyV4& key) const;
  // 16 hexadecimal digits that name the key without revealing it.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::array<std::uint8_t, 16> siphash_key_;
  std::string fingerprint_;
};

// The hash a stateful LB's consistent choice reads for `flow`: the deployment key's when there is one,
// else the tracker's flow hash of the tuple (`flow_hash`, already computed for the packet).
inline std::uint32_t choice_hash(const std::optional<DeploymentKey>& key, const FlowKeyV4& flow, std::uint32_t flow_hash) {
  return key ? key->choice_hash(flow) : flow_hash;
}

}  // namespace flowtrack
