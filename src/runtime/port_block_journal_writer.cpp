#include "flowtrack/runtime/port_block_journal_writer.hpp"

#include <fmt/format.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "flowtrack/nf/port_block_journal.hpp"

namespace flowtrack {

PortBlockJournalWriter::PortBlockJournalWriter(const std::string& path, bool syslog, std::int64_t unix_offset_ns)
    : path_(path), syslog_(syslog), unix_offset_ns_(unix_offset_ns) {
  if (!path.empty()) {
    file_ = std::fopen(path.c_str(), "a");
    if (file_ == nullptr) throw std::runtime_error(fmt::format("nat block log {}: {}", path, std::strerror(errno)));
  }
  if (syslog_) openlog("flowtrack-nat", LOG_PID, LOG_DAEMON);
}

PortBlockJournalWriter::~PortBlockJournalWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (syslog_) closelog();
}

void PortBlockJournalWriter::write(std::span<const PortBlockRecord> records) {
  if (records.empty()) return;
  for (const PortBlockRecord& record : records) {
    const std::string line = port_block_journal_line(port_block_entry(record, unix_offset_ns_));
    if (file_ != nullptr) fmt::print(file_, "{}\n", line);
    if (syslog_) ::syslog(LOG_INFO, "%s", line.c_str());
  }
  written_ += records.size();
  if (file_ != nullptr && (std::fflush(file_) != 0 || fdatasync(fileno(file_)) != 0)) {
    throw std::runtime_error(fmt::format("nat block log {}: {}", path_, std::strerror(errno)));
  }
}

std::size_t PortBlockJournalWriter::drain(PortBlockLog& log) {
  const std::vector<PortBlockRecord> records = log.take_all();
  write(records);
  return records.size();
}

}  // namespace flowtrack
