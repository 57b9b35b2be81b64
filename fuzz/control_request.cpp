// libFuzzer target: arbitrary bytes as a control socket request line (nf/control_request.hpp). Every
// input is a request or an error message, never a crash; a request is applied to a pool only after
// check_pool_changes accepts it, as the live data plane does, and then must apply without failing.
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "flowtrack/nf/control_request.hpp"
#include "flowtrack/packet/flow_key.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flowtrack;
  const auto parsed = parse_control_request({reinterpret_cast<const char*>(data), size});
  const auto* request = std::get_if<ControlRequest>(&parsed);
  if (request == nullptr) {
    if (std::get<std::string>(parsed).empty()) __builtin_trap();  // an error says what is wrong
    return 0;
  }
  if (request->kind != ControlRequest::Kind::change) return 0;
  if (request->change.service.empty() || request->change.backend.name.empty()) __builtin_trap();
  // A small Maglev table (a prime; 10 backends at most) keeps each input fast.
  constexpr std::uint32_t kMaglevSize = 1009;
  static const ServiceConfig web{"web", 0x0100000a, to_network16(80), ipproto::kTcp, {{"b1", 0x0b00000a, 0, 1}, {"b2", 0x0c00000a, 0, 2}}};
  static const std::vector<Service> pool{Service(web, kMaglevSize)};
  const PoolChange changes[] = {request->change};
  if (check_pool_changes(changes, {&web, 1}, kMaglevSize)) return 0;
  std::vector<Service> services = pool;
  apply_pool_change(request->change, services);
  return 0;
}
