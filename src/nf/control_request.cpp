#include "flowtrack/nf/control_request.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "flowtrack/packet/flow_key.hpp"

namespace flowtrack {
namespace {

constexpr std::size_t kMaxName = 64;
constexpr std::string_view kVerbs = "counters, save-state, hand-over, hand-over-commit, hand-over-abort, takeover, add, drain, remove, weight, down, up, drain-instance, undrain-instance, stop";
constexpr std::uint32_t kMaxWeight = 1'000'000;  // as in the configuration (nf_config.cpp)

bool is_name(std::string_view word) {
  return !word.empty() && word.size() <= kMaxName && std::ranges::all_of(word, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

// A decimal number in 0..high, nothing else.
bool number_in(std::string_view word, std::uint32_t high, std::uint32_t& value) {
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return error == std::errc{} && end == word.data() + word.size() && value <= high;
}

}  // namespace

std::variant<ControlRequest, std::string> parse_control_request(std::string_view line) {
  if (line.size() > kMaxControlRequest) return fmt::format("request longer than {} bytes", kMaxControlRequest);
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 || c > 0x7e) && c != '\t') return fmt::format("byte {} of the request is not a printable ASCII character", i);
  }
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    const std::size_t end = std::min(line.find_first_of(" \t", i), line.size());
    words.push_back(line.substr(i, end - i));
    i = end;
  }
  if (words.empty()) return fmt::format("empty request ({})", kVerbs);
  const std::string_view verb = words[0];
  // The requests of one word.
  static constexpr std::pair<std::string_view, ControlRequest::Kind> kAlone[] = {
      {"counters", ControlRequest::Kind::counters},
      {"takeover", ControlRequest::Kind::takeover},
      {"save-state", ControlRequest::Kind::save_state},
      {"hand-over", ControlRequest::Kind::hand_over},
      {"hand-over-commit", ControlRequest::Kind::hand_over_commit},
      {"hand-over-abort", ControlRequest::Kind::hand_over_abort},
      {"drain-instance", ControlRequest::Kind::drain_instance},
      {"undrain-instance", ControlRequest::Kind::undrain_instance},
      {"stop", ControlRequest::Kind::stop}};
  for (const auto& [name, kind] : kAlone) {
    if (verb != name) continue;
    if (words.size() != 1) return fmt::format("usage: {}", name);
    return ControlRequest{.kind = kind, .change = {}};
  }
  const auto action = pool_action_from_name(verb);
  if (!action) {
    return fmt::format("unknown request '{}' ({})", verb.substr(0, kMaxName), kVerbs);
  }
  // By PoolAction.
  static constexpr std::string_view kUsage[] = {"add SERVICE BACKEND ADDRESS PORT WEIGHT", "remove SERVICE BACKEND",
                                                "drain SERVICE BACKEND", "weight SERVICE BACKEND WEIGHT",
                                                "down SERVICE BACKEND", "up SERVICE BACKEND"};
  static constexpr std::size_t kWords[] = {6, 3, 3, 4, 3, 3};
  const auto a = static_cast<std::size_t>(*action);
  if (words.size() != kWords[a]) return fmt::format("usage: {}", kUsage[a]);
  if (!is_name(words[1]) || !is_name(words[2])) {
    return fmt::format("service and backend names are 1 to {} letters, digits, '-', '_' or '.'", kMaxName);
  }
  ControlRequest request{ControlRequest::Kind::change, {}};
  PoolChange& change = request.change;
  change.action = *action;
  change.service = words[1];
  change.backend.name = words[2];
  if (*action == PoolAction::add) {
    const std::string address(words[3]);
    in_addr parsed{};
    if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) return fmt::format("'{}' is not an IPv4 address", words[3]);
    change.backend.address = parsed.s_addr;
    std::uint32_t port = 0;
    if (!number_in(words[4], 65535, port)) return std::string("PORT: expected 0..65535");
    change.backend.port = to_network16(static_cast<std::uint16_t>(port));
  }
  if (*action == PoolAction::add || *action == PoolAction::weight) {
    if (!number_in(words.back(), kMaxWeight, change.backend.weight)) return fmt::format("WEIGHT: expected 0..{}", kMaxWeight);
  }
  return request;
}

}  // namespace flowtrack
