// Reading a file that holds a shared secret (a NAT pair's sync key, a deployment's key).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flowtrack {

// The whole content of the secret file at `path`, read for `what` (named in errors: "sync key"). The
// file must be a regular file (a FIFO or a device is refused at once, never waited on) that only its owner
// may read or write (chmod 600), of `min_bytes` to `max_bytes` bytes (a longer file is refused, not cut:
// at most max_bytes + 1 bytes are read). Throws std::runtime_error naming `what`, the path and the
// problem, never the content. The bytes read are wiped from every buffer but the one returned.
std::vector<std::uint8_t> read_secret_file(std::string_view what, const std::string& path, std::size_t min_bytes, std::size_t max_bytes);

}  // namespace flowtrack
