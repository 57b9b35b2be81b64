// IPv4 addresses from their text, in network order as flow keys and configurations hold them.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace flowtrack::test {

inline std::uint32_t ipv4(const char* text) {
  in_addr a{};
  EXPECT_EQ(inet_pton(AF_INET, text, &a), 1) << text;
  return a.s_addr;
}

}  // namespace flowtrack::test
