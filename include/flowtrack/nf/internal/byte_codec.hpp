// Little-endian fixed-width fields in and out of a byte buffer: how state files (state_file.hpp) and
// the sync messages of a NAT pair (nat_sync_message.hpp) lay out their bodies.
//
// ByteReader never reads past its span: a read beyond the end, or a count of records that the bytes
// left cannot hold, fails the reader (ok() turns false for good) and yields zeros, so a decoder checks
// ok() once at the end instead of after every field, and no forged count makes it allocate more than
// the input's size.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flowtrack {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v); }
  void u32(std::uint32_t v) { put(v); }
  void u64(std::uint64_t v) { put(v); }
  void i64(std::int64_t v) { put(static_cast<std::uint64_t>(v)); }
  // Network-order values (addresses, ports) are written as they lie in memory: the bytes on the wire.
  void raw32(std::uint32_t v) { bytes(&v, sizeof(v)); }
  void raw16(std::uint16_t v) { bytes(&v, sizeof(v)); }
  // A string of at most 65535 bytes, after its length.
  void string(std::string_view s) {
    u16(static_cast<std::uint16_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  std::size_t size() const { return out_.size(); }

 private:
  template <class T>
  void put(T v) {
    std::uint8_t b[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
    bytes(b, sizeof(T));
  }

  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}

  std::uint8_t u8() { return get<std::uint8_t>(); }
  std::uint16_t u16() { return get<std::uint16_t>(); }
  std::uint32_t u32() { return get<std::uint32_t>(); }
  std::uint64_t u64() { return get<std::uint64_t>(); }
  std::int64_t i64() { return static_cast<std::int64_t>(get<std::uint64_t>()); }
  std::uint32_t raw32() { return raw<std::uint32_t>(); }
  std::uint16_t raw16() { return raw<std::uint16_t>(); }
  std::string string() {
    const std::uint16_t n = u16();
    const std::span<const std::uint8_t> b = bytes(n);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  // The next n bytes (empty, and the reader failed, if fewer are left).
  std::span<const std::uint8_t> bytes(std::size_t n) {
    if (!take(n)) return {};
    return in_.subspan(at_ - n, n);
  }
  // A count of records of at least `record_bytes` bytes each that follow: 0, and the reader failed,
  // when the bytes left cannot hold them.
  std::size_t count(std::size_t record_bytes) {
    const std::uint64_t n = u64();
    if (!ok_ || (record_bytes != 0 && n > left() / record_bytes)) {
      ok_ = false;
      return 0;
    }
    return static_cast<std::size_t>(n);
  }

  bool ok() const { return ok_; }
  std::size_t left() const { return in_.size() - at_; }
  // Whether every byte was read and none was missing.
  bool done() const { return ok_ && at_ == in_.size(); }
  void fail() { ok_ = false; }

 private:
  bool take(std::size_t n) {
    if (!ok_ || n > left()) {
      ok_ = false;
      return false;
    }
    at_ += n;
    return true;
  }
  template <class T>
  T get() {
    if (!take(sizeof(T))) return 0;
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(in_[at_ - sizeof(T) + i]) << (8 * i));
    return v;
  }
  template <class T>
  T raw() {
    if (!take(sizeof(T))) return 0;
    T v;
    std::memcpy(&v, in_.data() + at_ - sizeof(T), sizeof(T));
    return v;
  }

  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace flowtrack
