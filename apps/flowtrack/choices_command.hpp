// `flowtrack choices --config lb.toml [--history FILE] (--tuples FILE | --pcap FILE)`: the backend the
// stateful LB's consistent choice gives each tuple (nf/consistent_choices.hpp), one line a tuple, so
// that the choices of two instances (their configurations, deployment keys and pool histories) can be
// compared with diff.
//
//   --history  the pool changes the instance took since its start, one `flowtrack ctl` request a line
//              (add, remove, drain, weight, down, up; blank lines and lines from '#' on are skipped)
//   --tuples   one tuple a line, as the output writes it: "SRC:PORT -> DST:PORT PROTO" (tcp, udp)
//   --pcap     every distinct IPv4 TCP or UDP tuple to a service in the capture, in the order it first
//              appears
//
// The first line names the deployment key by its fingerprint (or says there is none); each next line is
// the tuple, the service and the backend ("-" for no service, or no backend taking connections).
#pragma once

#include <string>

namespace flowtrack::cli {

struct ChoicesOptions {
  std::string config;
  std::string history;
  std::string tuples;
  std::string pcap;
};

void choices_command(const ChoicesOptions& options);

}  // namespace flowtrack::cli
