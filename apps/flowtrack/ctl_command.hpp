// `flowtrack ctl --socket PATH REQUEST...`: one request to a live data plane's control socket
// (runtime/control_socket.hpp; the requests: nf/control_request.hpp), its reply on stdout.
#pragma once

#include <string>
#include <vector>

namespace flowtrack::cli {

// Throws UserError when the socket cannot be reached, std::runtime_error when the data plane refuses the
// request (its reply "error: ...": exit status 1).
void ctl_command(const std::string& socket, const std::vector<std::string>& request);

}  // namespace flowtrack::cli
