#include "flowtrack/nf/state_config_hash.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <array>
#include <stdexcept>
#include <string>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

std::uint64_t sha256_prefix(const std::string& text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 || length < 8) {
    throw std::runtime_error("state hash: SHA-256 failed");
  }
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < 8; ++i) h = (h << 8) | digest[i];
  return h;
}

}  // namespace

std::uint64_t nat_state_hash(const NatConfig& c, unsigned workers) {
  std::string text = fmt::format("nat 1\ninside {}/{}\nports {}-{}\nblock {}\nfiltering {}\nsessions {}\nmappings {}\nworkers {}\npool",
                                 ipv4_to_string(c.inside_network), c.inside_prefix_length, c.port_first, c.port_last, c.block_size,
                                 static_cast<int>(c.filtering), c.max_sessions, c.max_mappings, workers);
  for (const std::uint32_t address : c.pool) text += fmt::format(" {}", ipv4_to_string(address));
  return sha256_prefix(text);
}

std::uint64_t lb_state_hash(const StatefulLbConfig& c, unsigned workers) {
  std::string text = fmt::format("lb 1\nmaglev {}\nconnections {}\nworkers {}\n", c.maglev_size, c.max_connections, workers);
  for (const ServiceConfig& s : c.services) {
    // Whether its connections are tracked one way (a tunnel) or both ways: a connection saved under one
    // does not fit the other.
    text += fmt::format("service {} {}:{} {} {}\n", s.name, ipv4_to_string(s.vip), to_host16(s.port), s.protocol,
                        s.tunnel.tunnels() ? "one-way" : "both-ways");
  }
  return sha256_prefix(text);
}

}  // namespace flowtrack
