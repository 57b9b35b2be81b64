// The control plane's end of the port-block log (nf/port_block_log.hpp): takes the records the workers
// left in their rings and appends them to the journal file (port_block_journal.hpp), and to syslog when
// asked. Never on a worker: whoever runs the NAT calls write() from a thread beside the workers, every
// tick and once more when the workers have stopped.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "flowtrack/nf/port_block_log.hpp"

namespace flowtrack {

class PortBlockJournalWriter {
 public:
  // Appends to the file at `path` ("": no file) and sends to syslog (facility daemon, priority info) when
  // `syslog`; records carry the NAT's clock, `unix_offset_ns` behind the Unix clock. Throws
  // std::runtime_error naming the file when it cannot be opened for appending.
  PortBlockJournalWriter(const std::string& path, bool syslog, std::int64_t unix_offset_ns);
  ~PortBlockJournalWriter();
  PortBlockJournalWriter(const PortBlockJournalWriter&) = delete;
  PortBlockJournalWriter& operator=(const PortBlockJournalWriter&) = delete;

  // Writes the records, one line each, then flushes the file to its disk (a log that a crash may lose
  // is no log). Throws std::runtime_error when the file cannot be written.
  void write(std::span<const PortBlockRecord> records);
  // Every record waiting in `log`, written; returns how many.
  std::size_t drain(PortBlockLog& log);

  std::uint64_t written() const { return written_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  bool syslog_;
  std::int64_t unix_offset_ns_;
  std::uint64_t written_ = 0;
};

}  // namespace flowtrack
