// How much memory this machine can give a new allocation now, so that a size it cannot hold is
// refused with both figures before anything is allocated, rather than the kernel killing the process
// tens of seconds into its set-up.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fmt/format.h>
#include <fstream>
#include <string>

namespace flowtrack {

// MemAvailable of /proc/meminfo (free memory plus what the kernel can reclaim without swapping), or
// the free pages sysconf reports where /proc is not mounted.
inline std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;  // "MemAvailable: 23387508 kB"
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
}

// A size for a message: "640 MiB", "41.2 GiB".
inline std::string memory_size_text(std::uint64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024, kGiB = kMiB * 1024;
  if (bytes >= (std::uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / kMiB);
}

}  // namespace flowtrack
