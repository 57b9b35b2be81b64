#include "ctl_command.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "flowtrack/runtime/control_socket.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {

void ctl_command(const std::string& socket, const std::vector<std::string>& request) {
  const std::string reply = control_call(socket, fmt::format("{}", fmt::join(request, " ")));
  constexpr std::string_view kError = "error: ";
  if (reply.starts_with(kError)) throw Refusal(fmt::format("ctl: {}", reply.substr(kError.size())));
  fmt::print("{}\n", reply);
}

}  // namespace flowtrack::cli
