// One JSON object, built field by field, printed as one line: the output format of every `--json`.
// The encoding is nlohmann/json's, hidden in json_line.cpp: that header costs about nine seconds of
// compile time in each file that includes it, and the commands only need to name fields.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace flowtrack::cli {

class JsonObject {
 public:
  JsonObject();
  ~JsonObject();
  JsonObject(const JsonObject& other);
  JsonObject& operator=(const JsonObject& other);
  JsonObject(JsonObject&&) noexcept;
  JsonObject& operator=(JsonObject&&) noexcept;

  // Sets `key` (replacing an earlier value): numbers, booleans, strings, objects, and vectors and
  // string-keyed maps of those.
  template <class T>
  JsonObject& set(std::string_view key, const T& value) {
    set_value(key, encode(value));
    return *this;
  }
  // Copies every field of `other` into this object (other's value wins on a shared key).
  JsonObject& merge(const JsonObject& other);
  // The object a JSON text holds (a library's own output: nlohmann's parse error if it is not).
  static JsonObject parse(std::string_view text);
  bool contains(std::string_view key) const;

  std::string dump() const;
  // dump() and a newline on stdout, flushed: a reader of the stream sees each line when it is done.
  void print_line() const;

 public:
  class Value;  // an encoded JSON value: opaque here, nlohmann::json in json_line.cpp

 private:
  struct ValueDeleter {
    void operator()(Value* v) const;
  };
  using Encoded = std::unique_ptr<Value, ValueDeleter>;

  static Encoded encode(bool v);
  static Encoded encode_signed(std::int64_t v);
  static Encoded encode_unsigned(std::uint64_t v);
  static Encoded encode(double v);
  static Encoded encode(std::string_view v);
  static Encoded encode(const JsonObject& v);
  static Encoded encode_array(std::vector<Encoded> items);
  static Encoded encode_object(std::vector<std::pair<std::string, Encoded>> fields);

  template <class T>
  static Encoded encode(const T& v) {
    if constexpr (std::same_as<T, bool>) {
      return encode(static_cast<bool>(v));
    } else if constexpr (std::signed_integral<T>) {
      return encode_signed(v);
    } else if constexpr (std::unsigned_integral<T>) {
      return encode_unsigned(v);
    } else if constexpr (std::floating_point<T>) {
      return encode(static_cast<double>(v));
    } else if constexpr (std::convertible_to<const T&, std::string_view>) {
      return encode(std::string_view(v));
    } else if constexpr (requires { typename T::mapped_type; }) {
      std::vector<std::pair<std::string, Encoded>> fields;
      for (const auto& [k, x] : v) fields.emplace_back(std::string(k), encode(x));
      return encode_object(std::move(fields));
    } else {
      std::vector<Encoded> items;
      for (const auto& x : v) items.push_back(encode(x));
      return encode_array(std::move(items));
    }
  }

  void set_value(std::string_view key, Encoded value);

  Encoded root_;
};

}  // namespace flowtrack::cli
