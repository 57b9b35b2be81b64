// The CLI's one error type for what the user can fix (a bad flag value, an unreadable file, a name
// that does not apply): main prints the message on one line and exits with status 2.
#pragma once

#include <stdexcept>

namespace flowtrack::cli {

struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace flowtrack::cli
