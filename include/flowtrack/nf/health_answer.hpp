// Whether an HTTP health check's answer passes (nf/health_config.hpp): what a backend sent back to the
// control plane's GET, as read from its socket (at most the first kMaxHealthAnswer bytes): untrusted
// bytes, read without ever going past them.
#pragma once

#include <cstddef>
#include <string_view>

#include "flowtrack/nf/health_config.hpp"

namespace flowtrack {

// How much of an answer a check reads: the status line, the headers and the start of the body.
inline constexpr std::size_t kMaxHealthAnswer = 4096;

// The answer's status line is "HTTP/1.<digit> <status>" with the expected status, and, when the check
// names a body text, the text appears after the end of the headers (the blank line).
bool http_answer_passes(std::string_view answer, const HealthCheckConfig& check);

}  // namespace flowtrack
