#include "flowtrack/nf/config_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <string_view>

#include "flowtrack/nf/nf_config.hpp"

namespace flowtrack {
namespace {

// `what`: "1048577 bytes", or "more than 1048576 bytes" for a stream cut short.
std::string too_long(const std::string& name, const std::string& what) {
  return fmt::format("{}: {}: a configuration is at most {} bytes ({} MiB)", name, what, kMaxConfigBytes, kMaxConfigBytes >> 20);
}

// What a file that cannot be a configuration is, for its refusal.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

struct ClosedAtEnd {
  int fd;
  ~ClosedAtEnd() { ::close(fd); }
};

// Where the scan of a configuration's text is: outside strings and comments, or in which of them.
enum class Scan { plain, comment, basic, literal, multiline_basic, multiline_literal };

// A character that may continue a dotted key without ending it: bare-key characters and blanks
// (`a . b` is a dotted key too). A quoted part (`a."b.c".d`) is a string, scanned as one.
bool continues_key(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == ' ' ||
         c == '\t';
}

// Whether the quotes `q` from t[i] close a multi-line string: a run of three to five of them does (the
// first one or two are then the string's own); i moves to the run's last quote.
bool closes_multiline(std::string_view t, std::size_t& i, char q) {
  std::size_t run = 0;
  while (i + run < t.size() && t[i + run] == q && run < 5) ++run;
  if (run < 3) return false;
  i += run - 1;
  return true;
}

// A pass of its own: the nesting scan steps over escaped characters, newlines among them.
void check_line_lengths(const ConfigText& config) {
  std::size_t line = 1, start = 0;
  for (std::size_t i = 0; i <= config.text.size(); ++i) {
    if (i < config.text.size() && config.text[i] != '\n') continue;
    if (i - start > kMaxConfigLineBytes) {
      throw ConfigError(fmt::format("{}:{}: a line of {} bytes: at most {} (an array may span lines)", config.name, line, i - start,
                                    kMaxConfigLineBytes));
    }
    ++line;
    start = i + 1;
  }
}

// The length of the UTF-8 sequence at t[i], or 0 if none starts there: no overlong form, no
// surrogate, nothing past U+10FFFF (RFC 3629).
std::size_t utf8_sequence(std::string_view t, std::size_t i) {
  const auto byte = [&](std::size_t k) { return i + k < t.size() ? static_cast<unsigned char>(t[i + k]) : 0u; };
  const auto continuation = [&](std::size_t k) { return (byte(k) & 0xc0) == 0x80; };
  const unsigned lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return continuation(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const unsigned low = lead == 0xe0 ? 0xa0 : 0x80, high = lead == 0xed ? 0x9f : 0xbf;  // overlong, surrogates
    return byte(1) >= low && byte(1) <= high && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const unsigned low = lead == 0xf0 ? 0x90 : 0x80, high = lead == 0xf4 ? 0x8f : 0xbf;  // overlong, past U+10FFFF
    return byte(1) >= low && byte(1) <= high && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

// A TOML file is UTF-8 text. Checked before the parser, whose version here (toml11 3.7.1) reads out
// of bounds on an invalid sequence in a literal string (fixed upstream after it).
void check_utf8(const ConfigText& config) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < config.text.size();) {
    const std::size_t length = utf8_sequence(config.text, i);
    if (length == 0) throw ConfigError(fmt::format("{}:{}: not UTF-8 text (byte {} of the file)", config.name, line, i + 1));
    if (config.text[i] == '\n') ++line;
    i += length;
  }
}

}  // namespace

ConfigText read_config_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw ConfigError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const ClosedAtEnd closed{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw ConfigError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (!S_ISREG(status.st_mode) && !S_ISFIFO(status.st_mode) && !S_ISCHR(status.st_mode)) {
    throw ConfigError(fmt::format("{}: {}, not a configuration file", path, kind_of(status.st_mode)));
  }
  // Read to the end without seeking (a pipe cannot seek), stopping once past the bound.
  std::string text;
  for (;;) {
    const std::size_t at = text.size();
    text.resize(at + 65536);
    const ssize_t n = ::read(fd, text.data() + at, 65536);
    if (n < 0 && errno == EINTR) {
      text.resize(at);
      continue;
    }
    if (n < 0) throw ConfigError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    text.resize(at + static_cast<std::size_t>(n));
    if (n == 0) break;
    if (text.size() > kMaxConfigBytes) throw ConfigError(too_long(path, fmt::format("more than {} bytes", kMaxConfigBytes)));
  }
  return {path, std::move(text)};
}

void check_config_bounds(const ConfigText& config) {
  if (config.text.size() > kMaxConfigBytes) {
    throw ConfigError(too_long(config.name, fmt::format("{} bytes", config.text.size())));
  }
  const std::string_view t = config.text;
  const auto at = [&](std::size_t i, std::string_view what) { return t.substr(i, what.size()) == what; };
  Scan scan = Scan::plain;
  std::size_t depth = 0;  // brackets and braces open
  std::size_t dots = 0;   // dots of the dotted key being read
  check_line_lengths(config);
  check_utf8(config);
  std::size_t line = 1;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') ++line;
    switch (scan) {
      case Scan::comment:
        if (c == '\n') scan = Scan::plain;
        break;
      case Scan::basic:
      case Scan::multiline_basic:
        if (c == '\\' && i + 1 < t.size()) {
          if (t[++i] == '\n') ++line;  // an escaped character, or a line-ending backslash
        } else if (scan == Scan::multiline_basic && closes_multiline(t, i, '"')) {
          scan = Scan::plain;
        } else if (scan == Scan::basic && (c == '"' || c == '\n')) {
          scan = Scan::plain;  // a newline ends a one-line string that the parser then refuses
        }
        break;
      case Scan::literal:
        if (c == '\'' || c == '\n') scan = Scan::plain;
        break;
      case Scan::multiline_literal:
        if (closes_multiline(t, i, '\'')) scan = Scan::plain;
        break;
      case Scan::plain:
        if (c == '#') {
          scan = Scan::comment;
        } else if (c == '"' || c == '\'') {
          const bool multiline = at(i, c == '"' ? "\"\"\"" : "'''");
          scan = c == '"' ? (multiline ? Scan::multiline_basic : Scan::basic) : (multiline ? Scan::multiline_literal : Scan::literal);
          if (multiline) i += 2;
        } else if (c == '[' || c == '{') {
          ++depth;
          dots = 0;
        } else if (c == ']' || c == '}') {
          if (depth > 0) --depth;
          dots = 0;
        } else if (c == '.') {
          ++dots;
        } else if (!continues_key(c)) {
          dots = 0;
        }
        if (depth + dots > kMaxConfigNesting) {
          throw ConfigError(fmt::format("{}:{}: nested more than {} deep (arrays, inline tables and dotted keys count)",
                                        config.name, line, kMaxConfigNesting));
        }
        break;
    }
  }
}

}  // namespace flowtrack
