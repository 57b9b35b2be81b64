#include "user_error.hpp"

#include <fmt/format.h>

#include "flowtrack/io/pcap_reader.hpp"
#include "flowtrack/nf/nf_config.hpp"

namespace flowtrack::cli {

void run_reporting_user_errors(std::string_view command, const std::function<void()>& body) {
  try {
    body();
  } catch (const UserError&) {
    throw;
  } catch (const Refusal&) {
    throw;
  } catch (const PcapError& e) {
    throw UserError(e.what());
  } catch (const ConfigError& e) {
    throw UserError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UserError(fmt::format("{}: {}", command, e.what()));
  } catch (const std::runtime_error& e) {
    throw UserError(fmt::format("{}: {}", command, e.what()));
  }
}

}  // namespace flowtrack::cli
