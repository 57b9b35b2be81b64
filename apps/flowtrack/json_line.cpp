#include "json_line.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace flowtrack::cli {

class JsonObject::Value {
 public:
  nlohmann::json json;
};

void JsonObject::ValueDeleter::operator()(Value* v) const { delete v; }

namespace {

template <class... Args>
auto make_value(Args&&... args) {
  auto* v = new JsonObject::Value;  // NOLINT: owned by the returned unique_ptr at once
  v->json = nlohmann::json(std::forward<Args>(args)...);
  return v;
}

}  // namespace

JsonObject::JsonObject() : root_(make_value(nlohmann::json::object())) {}
JsonObject::~JsonObject() = default;
JsonObject::JsonObject(const JsonObject& other) : root_(make_value(other.root_->json)) {}
JsonObject& JsonObject::operator=(const JsonObject& other) {
  if (this != &other) root_ = Encoded(make_value(other.root_->json));
  return *this;
}
// A moved-from object holds nothing: it may only be destroyed or assigned to.
JsonObject::JsonObject(JsonObject&&) noexcept = default;
JsonObject& JsonObject::operator=(JsonObject&&) noexcept = default;

JsonObject::Encoded JsonObject::encode(bool v) { return Encoded(make_value(v)); }
JsonObject::Encoded JsonObject::encode_signed(std::int64_t v) { return Encoded(make_value(v)); }
JsonObject::Encoded JsonObject::encode_unsigned(std::uint64_t v) { return Encoded(make_value(v)); }
JsonObject::Encoded JsonObject::encode(double v) { return Encoded(make_value(v)); }
JsonObject::Encoded JsonObject::encode(std::string_view v) { return Encoded(make_value(std::string(v))); }
JsonObject::Encoded JsonObject::encode(const JsonObject& v) { return Encoded(make_value(v.root_->json)); }

JsonObject::Encoded JsonObject::encode_array(std::vector<Encoded> items) {
  Encoded out(make_value(nlohmann::json::array()));
  for (auto& item : items) out->json.push_back(std::move(item->json));
  return out;
}

JsonObject::Encoded JsonObject::encode_object(std::vector<std::pair<std::string, Encoded>> fields) {
  Encoded out(make_value(nlohmann::json::object()));
  for (auto& [key, value] : fields) out->json[key] = std::move(value->json);
  return out;
}

void JsonObject::set_value(std::string_view key, Encoded value) { root_->json[std::string(key)] = std::move(value->json); }

JsonObject& JsonObject::merge(const JsonObject& other) {
  root_->json.update(other.root_->json);
  return *this;
}

JsonObject JsonObject::parse(std::string_view text) {
  JsonObject object;
  object.root_->json = nlohmann::json::parse(text);
  return object;
}

bool JsonObject::contains(std::string_view key) const { return root_->json.contains(key); }

std::string JsonObject::dump() const { return root_->json.dump(); }

void JsonObject::print_line() const {
  std::fputs(dump().c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace flowtrack::cli
