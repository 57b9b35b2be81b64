#include "ctl_command.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "flowtrack/runtime/control_socket.hpp"
#include "user_error.hpp"

namespace flowtrack::cli {

void ctl_command(const std::string& socket, const std::vector<std::string>& request) {
  std::string reply;
  try {
    reply = control_call(socket, fmt::format("{}", fmt::join(request, " ")));
  } catch (const std::runtime_error& e) {
    throw UserError(fmt::format("ctl: {}", e.what()));
  }
  constexpr std::string_view kError = "error: ";
  if (reply.starts_with(kError)) throw std::runtime_error(fmt::format("ctl: {}", reply.substr(kError.size())));
  fmt::print("{}\n", reply);
}

}  // namespace flowtrack::cli
