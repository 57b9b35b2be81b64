// libFuzzer target: arbitrary bytes as a configuration file, given to one of the loaders
// (nf/nf_config.hpp). The first byte picks which, modulo 5: 0 the forwarder's check, 1 the stateless
// LB's, 2 the stateful LB's, 3 the NAT's, 4 [dataplane] for the function kAllNfKinds[first / 5 % 5];
// the rest is the file, parsed once an input (five parses an input made the fuzzer five times slower).
// What loads goes on to the memory estimates that run and live check before building anything
// (nf/config_memory.hpp). Every input loads or is one ConfigError with a message: never a crash, a
// hang, a stack overflow or another exception (libFuzzer reports an escaping one). What loads keeps
// the loaders' promises: services with backends, in number within the bounds, a prime Maglev size,
// ports with the roles their function takes. The seeds (fuzz/corpus/config_loader) are examples/ and
// the live tests' configurations, each behind the byte of the loader it is for.
#include <cstdint>
#include <string>
#include <string_view>

#include "flowtrack/nf/config_memory.hpp"
#include "flowtrack/nf/dataplane_config.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/nf/nf_kind.hpp"

namespace {

using namespace flowtrack;

template <class Load>
void load_or_refuse(const ConfigText& text, Load&& load) {
  try {
    load(text);
  } catch (const ConfigError& e) {
    if (std::string_view(e.what()).empty()) __builtin_trap();  // a refusal says why
  }
}

void check_services(const std::vector<ServiceConfig>& services, std::uint32_t maglev_size) {
  if (services.empty() || services.size() > kMaxServices || !is_prime(maglev_size)) __builtin_trap();
  for (const ServiceConfig& s : services) {
    if (s.backends.empty() || s.backends.size() > max_backends_for(maglev_size)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ConfigText text{"fuzz.toml", std::string(reinterpret_cast<const char*>(data) + 1, size - 1)};
  switch (data[0] % 5) {
    case 0:
      load_or_refuse(text, check_forwarder_config);
      break;
    case 1:
      load_or_refuse(text, [](const ConfigText& t) {
        const StatelessLbConfig c = load_stateless_lb_config(t);
        check_services(c.services, c.maglev_size);
        (void)stateless_lb_footprint(c, 64);
      });
      break;
    case 2:
      load_or_refuse(text, [](const ConfigText& t) {
        const StatefulLbConfig c = load_stateful_lb_config(t);
        check_services(c.services, c.maglev_size);
        if (c.changes.size() > kMaxPoolChanges) __builtin_trap();
        (void)stateful_lb_footprint(c, 64);
        (void)concury_footprint(c, 64);
      });
      break;
    case 3:
      load_or_refuse(text, [](const ConfigText& t) {
        const NatConfig c = load_nat_config(t);
        if (c.pool.empty() || c.port_first > c.port_last) __builtin_trap();
        (void)nat_footprint(c, 64);
      });
      break;
    default:
      load_or_refuse(text, [nf = kAllNfKinds[data[0] / 5 % kAllNfKinds.size()]](const ConfigText& t) {
        const DataplaneConfig c = load_dataplane_config(t, nf_kind_name(nf));
        if (c.ports.empty() || c.ports.size() > 2) __builtin_trap();
        // A function with roles has each of its ports take one, each role once.
        const std::vector<PortRole> roles = port_roles_of(nf_kind_name(nf));
        if (!roles.empty() && (c.ports.size() != roles.size() || c.ports[0].role == c.ports[1].role)) __builtin_trap();
      });
  }
  return 0;
}
