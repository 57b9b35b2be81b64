// libFuzzer target: arbitrary bytes as a backend's answer to an HTTP health check (nf/health_answer.hpp).
// Never a crash or a read past them; an answer that passes starts with an HTTP/1 status line of the
// expected status.
#include <cstdint>
#include <string_view>

#include "flowtrack/nf/health_answer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view answer(reinterpret_cast<const char*>(data), size);
  flowtrack::HealthCheckConfig check;
  check.body = "ok";
  for (const bool with_body : {false, true}) {
    if (!with_body) check.body.clear();
    if (flowtrack::http_answer_passes(answer, check) && answer.substr(0, 13).find(" 200") == std::string_view::npos) {
      __builtin_trap();  // passed without the expected status in its status line
    }
  }
  return 0;
}
