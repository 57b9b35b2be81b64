// A configuration's bytes, read and bounded before the TOML parser sees them.
//
// The parser (toml11) recurses once per nested array, inline table or dotted key's table, and its
// values are destroyed recursively too: a file nested 100,000 deep would end the process on its stack
// (and a dotted key of 100,000 parts takes it minutes). Its time grows with the bytes and, for each
// value, with the length of the value's line (it builds messages quoting the line for the forms a
// value turned out not to be): one line of 8,000 values took seconds, one of 200,000 did not end.
// So a configuration is at most kMaxConfigBytes long, no line longer than kMaxConfigLineBytes, and
// nests at most kMaxConfigNesting deep, all checked on the text itself before any parsing: a file
// beyond a bound is one ConfigError naming the file (and the line). Within them a parse takes at most
// a few seconds (1 MiB of services: 1.4 s of CPU here; of the densest values, about twice that).
//
// A file is read as a stream, never seeked, so a pipe (`--config <(cat lb.toml)`) is read whole. What
// is not a regular file, a pipe or a character device (a directory, a socket, a block device) is
// refused by name.
#pragma once

#include <cstddef>
#include <string>

namespace flowtrack {

// Above any configuration written by hand (examples/: 6 KB at most), and room for thousands of
// [[service]] tables (about 220 bytes each), each of which may list many VIPs and ports.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;
// Arrays longer than this span lines (TOML allows it); the examples' longest line is 122 bytes.
inline constexpr std::size_t kMaxConfigLineBytes = 1024;
// Nesting as counted on the text: brackets and braces open outside strings and comments, plus the
// dots of the key being written (`a.b.c = 1` nests two tables). The functions' own keys need 2.
inline constexpr std::size_t kMaxConfigNesting = 32;

struct ConfigText {
  std::string name;  // the file's path, or what stands for it in messages ("<fuzz input>")
  std::string text;
};

// Reads `path` whole; throws ConfigError (nf_config.hpp) if it cannot be opened or read, is not a
// regular file, a pipe or a character device, or is longer than kMaxConfigBytes.
ConfigText read_config_file(const std::string& path);

// Throws ConfigError, naming the file and the line, if `config` is longer than kMaxConfigBytes, has a
// line longer than kMaxConfigLineBytes, is not UTF-8 (as TOML requires) or nests deeper than
// kMaxConfigNesting.
void check_config_bounds(const ConfigText& config);

}  // namespace flowtrack
