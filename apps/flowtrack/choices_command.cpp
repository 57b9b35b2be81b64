#include "choices_command.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include <absl/container/flat_hash_set.h>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/io/packet_store.hpp"
#include "flowtrack/nf/consistent_choices.hpp"
#include "flowtrack/nf/control_request.hpp"
#include "flowtrack/nf/nf_config.hpp"
#include "flowtrack/packet/parser.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {
namespace {

// The words of a line, split at spaces and tabs.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::size_t i = line.find_first_not_of(" \t"); i != std::string_view::npos; i = line.find_first_not_of(" \t", i)) {
    const std::size_t end = std::min(line.find_first_of(" \t", i), line.size());
    words.push_back(line.substr(i, end - i));
    i = end;
  }
  return words;
}

// Calls read(line, number) for every line of the file `path` (the `what` of an error) that holds more
// than blanks and a comment, the comment cut off; numbers count from 1.
template <class Read>
void for_each_line(const std::string& path, std::string_view what, Read&& read) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("choices: cannot read the {} {}", what, path));
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string_view text = std::string_view(line).substr(0, line.find('#'));
    if (!words_of(text).empty()) read(text, number);
  }
}

// The pool changes of a history file, each checked for its form (parse_control_request); whether they
// fit the pool is ConsistentChoices's to check.
std::vector<PoolChange> read_history(const std::string& path) {
  std::vector<PoolChange> changes;
  for_each_line(path, "history", [&](std::string_view request, std::size_t number) {
    const auto parsed = parse_control_request(request);
    if (const auto* problem = std::get_if<std::string>(&parsed)) throw UserError(fmt::format("{}:{}: {}", path, number, *problem));
    const ControlRequest& r = std::get<ControlRequest>(parsed);
    if (r.kind != ControlRequest::Kind::change) throw UserError(fmt::format("{}:{}: not a pool change", path, number));
    changes.push_back(r.change);
  });
  return changes;
}

// "ADDRESS:PORT", the address and port in network order.
std::optional<std::pair<std::uint32_t, std::uint16_t>> endpoint_of(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::uint16_t port = 0;
  const std::string_view port_text = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  in_addr address{};
  if (ec != std::errc() || end != port_text.data() + port_text.size() ||
      inet_pton(AF_INET, std::string(text.substr(0, colon)).c_str(), &address) != 1) {
    return std::nullopt;
  }
  return std::pair{address.s_addr, to_network16(port)};
}

// The tuples of a text file, one a line as FlowKeyV4::to_string writes them.
std::vector<FlowKeyV4> read_tuples(const std::string& path) {
  std::vector<FlowKeyV4> tuples;
  for_each_line(path, "tuples", [&](std::string_view line, std::size_t number) {
    const std::vector<std::string_view> w = words_of(line);
    const auto source = w.size() == 4 ? endpoint_of(w[0]) : std::nullopt;
    const auto destination = w.size() == 4 ? endpoint_of(w[2]) : std::nullopt;
    if (!source || !destination || w[1] != "->" || (w[3] != "tcp" && w[3] != "udp")) {
      throw UserError(fmt::format("{}:{}: expected SRC:PORT -> DST:PORT tcp|udp (10.0.0.1:40000 -> 192.0.2.10:80 tcp)", path, number));
    }
    FlowKeyV4 key;
    key.src_addr = source->first;
    key.src_port = source->second;
    key.dst_addr = destination->first;
    key.dst_port = destination->second;
    key.protocol = w[3] == "tcp" ? ipproto::kTcp : ipproto::kUdp;
    tuples.push_back(key);
  });
  return tuples;
}

// The distinct IPv4 TCP and UDP tuples of a capture that go to one of the services, in order.
std::vector<FlowKeyV4> read_capture(const std::string& path, const ConsistentChoices& choices) {
  const PacketStore trace = PacketStore::load_pcap(path);
  absl::flat_hash_set<FlowKeyV4, FlowKeyHasher> seen;
  std::vector<FlowKeyV4> tuples;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    ParsedPacket p;
    if (parse_frame(trace[i].bytes, trace.link_type(), p) != ParseStatus::ok || p.ip_version != 4 || !p.has_ports) continue;
    if (p.key4.protocol != ipproto::kTcp && p.key4.protocol != ipproto::kUdp) continue;
    if (choices.choose(p.key4).service != nullptr && seen.insert(p.key4).second) tuples.push_back(p.key4);
  }
  return tuples;
}

}  // namespace

void choices_command(const ChoicesOptions& o) {
  if (o.tuples.empty() == o.pcap.empty()) throw UserError("choices: give the tuples with either --tuples FILE or --pcap FILE");
  const StatefulLbConfig config = load_stateful_lb_config(o.config);
  const ConsistentChoices choices(config, o.history.empty() ? std::vector<PoolChange>() : read_history(o.history));
  const std::vector<FlowKeyV4> tuples = o.pcap.empty() ? read_tuples(o.tuples) : read_capture(o.pcap, choices);
  if (config.deployment_key) {
    fmt::print("# deployment key {}\n", config.deployment_key->fingerprint());
  } else {
    fmt::print("# no deployment key: the public flow hash\n");
  }
  for (const FlowKeyV4& key : tuples) {
    const ConsistentChoices::Choice c = choices.choose(key);
    fmt::print("{} {} {}\n", key.to_string(), c.service != nullptr ? c.service->config().name : "-",
               c.backend != nullptr ? c.backend->config.name : "-");
  }
}

}  // namespace flowtrack::cli
