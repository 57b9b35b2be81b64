// The CLI's one error type for what the user can fix (a bad flag value, an unreadable file, a name
// that does not apply): main prints the message on one line and exits with status 2.
#pragma once

#include <functional>
#include <stdexcept>
#include <string_view>

namespace flowtrack::cli {

struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the other side refused (a running function answering a control request with an error): main
// prints it and exits with status 1, as for a failure that is not the user's to fix.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the body of the command named `command` ("run", "trace gen", ...). This is where the library's
// errors become the user's, for every command: a UserError or a Refusal is the command's own words; an
// error that names its file (a trace's PcapError, a configuration's ConfigError) is shown as it is; any
// other refusal of the library (std::invalid_argument, std::runtime_error) is prefixed with the command.
void run_reporting_user_errors(std::string_view command, const std::function<void()>& body);

}  // namespace flowtrack::cli
