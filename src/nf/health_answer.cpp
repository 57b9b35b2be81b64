#include "flowtrack/nf/health_answer.hpp"

#include <charconv>

namespace flowtrack {

bool http_answer_passes(std::string_view answer, const HealthCheckConfig& check) {
  constexpr std::string_view kVersion = "HTTP/1.";
  // "HTTP/1.x NNN": the version, one digit, a space, three digits.
  if (answer.size() < kVersion.size() + 5 || answer.substr(0, kVersion.size()) != kVersion) return false;
  const std::string_view code = answer.substr(kVersion.size() + 2, 3);
  unsigned status = 0;
  const auto [end, error] = std::from_chars(code.data(), code.data() + code.size(), status);
  if (error != std::errc() || end != code.data() + code.size() || answer[kVersion.size() + 1] != ' ' || status != check.status) {
    return false;
  }
  // The status ends the line or is followed by its reason phrase: "2000" is no 200.
  const std::size_t after = kVersion.size() + 5;
  if (answer.size() > after && answer[after] != ' ' && answer[after] != '\r') return false;
  if (check.body.empty()) return true;
  const std::size_t headers_end = answer.find("\r\n\r\n");
  return headers_end != std::string_view::npos && answer.find(check.body, headers_end + 4) != std::string_view::npos;
}

}  // namespace flowtrack
