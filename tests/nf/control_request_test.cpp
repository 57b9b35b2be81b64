// The control socket's requests (nf/control_request.hpp): each verb with its words, and every malformed
// request refused with a message, before anything could be applied.
#include "flowtrack/nf/control_request.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <variant>

namespace flowtrack {
namespace {

ControlRequest accepted(std::string_view line) {
  auto parsed = parse_control_request(line);
  if (const auto* error = std::get_if<std::string>(&parsed)) ADD_FAILURE() << line << ": " << *error;
  return std::holds_alternative<ControlRequest>(parsed) ? std::get<ControlRequest>(parsed) : ControlRequest{};
}

std::string refused(std::string_view line) {
  auto parsed = parse_control_request(line);
  if (std::holds_alternative<ControlRequest>(parsed)) {
    ADD_FAILURE() << line << " accepted";
    return {};
  }
  return std::get<std::string>(parsed);
}

TEST(ControlRequest, EachVerbTakesItsWords) {
  EXPECT_EQ(accepted("counters").kind, ControlRequest::Kind::counters);
  EXPECT_EQ(accepted("takeover").kind, ControlRequest::Kind::takeover);
  EXPECT_EQ(accepted("save-state").kind, ControlRequest::Kind::save_state);
  EXPECT_EQ(accepted("hand-over").kind, ControlRequest::Kind::hand_over);
  EXPECT_EQ(accepted("hand-over-commit").kind, ControlRequest::Kind::hand_over_commit);
  EXPECT_EQ(accepted("hand-over-abort").kind, ControlRequest::Kind::hand_over_abort);
  EXPECT_EQ(accepted("drain-instance").kind, ControlRequest::Kind::drain_instance);
  EXPECT_EQ(accepted(" undrain-instance ").kind, ControlRequest::Kind::undrain_instance);
  EXPECT_EQ(accepted("stop").kind, ControlRequest::Kind::stop);
  const ControlRequest add = accepted("add web b4 10.10.2.14 8080 3");
  EXPECT_EQ(add.kind, ControlRequest::Kind::change);
  EXPECT_EQ(add.change.action, PoolAction::add);
  EXPECT_EQ(add.change.service, "web");
  EXPECT_EQ(add.change.backend.name, "b4");
  EXPECT_EQ(add.change.backend.address, inet_addr("10.10.2.14"));
  EXPECT_EQ(add.change.backend.port, htons(8080));
  EXPECT_EQ(add.change.backend.weight, 3u);
  EXPECT_EQ(accepted("drain web b1").change.action, PoolAction::drain);
  EXPECT_EQ(accepted("remove web b1").change.action, PoolAction::remove);
  const ControlRequest weight = accepted(" \tweight  web b2 1000000 ");
  EXPECT_EQ(weight.change.action, PoolAction::weight);
  EXPECT_EQ(weight.change.backend.weight, 1'000'000u);
}

TEST(ControlRequest, MalformedRequestsAreRefusedWithTheReason) {
  EXPECT_NE(refused("").find("empty"), std::string::npos);
  EXPECT_NE(refused("reboot").find("unknown request 'reboot'"), std::string::npos);
  EXPECT_NE(refused("counters now").find("usage: counters"), std::string::npos);
  EXPECT_NE(refused("takeover now").find("usage: takeover"), std::string::npos);
  EXPECT_NE(refused("save-state /tmp/elsewhere").find("usage: save-state"), std::string::npos);
  EXPECT_NE(refused("hand-over /tmp/elsewhere").find("usage: hand-over"), std::string::npos);
  EXPECT_NE(refused("hand-over-commitment").find("unknown request 'hand-over-commitment'"), std::string::npos);
  EXPECT_NE(refused("drain-instance now").find("usage: drain-instance"), std::string::npos);
  EXPECT_NE(refused("stop 5").find("usage: stop"), std::string::npos);
  EXPECT_NE(refused("drain web").find("usage: drain SERVICE BACKEND"), std::string::npos);
  EXPECT_NE(refused("add web b4 10.10.2.14 80").find("usage: add"), std::string::npos);
  EXPECT_NE(refused("add web b4 10.10.2.400 80 1").find("not an IPv4 address"), std::string::npos);
  EXPECT_NE(refused("add web b4 10.10.2.14 65536 1").find("PORT"), std::string::npos);
  EXPECT_NE(refused("add web b4 10.10.2.14 80 -1").find("WEIGHT"), std::string::npos);
  EXPECT_NE(refused("weight web b1 1000001").find("WEIGHT"), std::string::npos);
  EXPECT_NE(refused("weight web b1 0x10").find("WEIGHT"), std::string::npos);
  EXPECT_NE(refused("drain web b1;reboot").find("names"), std::string::npos);
  EXPECT_NE(refused(std::string("drain web b\0", 12)).find("printable"), std::string::npos);
  EXPECT_NE(refused("drain web " + std::string(65, 'b')).find("names"), std::string::npos);
}

TEST(ControlRequest, ARequestLongerThanTheLimitIsRefusedWhole) {
  const std::string padded = "drain web b1" + std::string(kMaxControlRequest, ' ');
  EXPECT_NE(refused(padded).find("longer than"), std::string::npos);
  EXPECT_EQ(accepted(padded.substr(0, kMaxControlRequest)).change.backend.name, "b1");
}

}  // namespace
}  // namespace flowtrack
