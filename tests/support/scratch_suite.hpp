// A test suite whose files (captures, configurations, outputs) live in a scratch directory of its own:
// made by make_scratch(name) in the suite's SetUpTestSuite, named after the suite and this process (two
// test processes never share one), removed after the suite. CRTP, so that every suite has its own.
//
//   class BurstCli : public testing::ScratchSuite<BurstCli> {
//     static void SetUpTestSuite() { make_scratch("burst"); ... path("campus.pcap") ... }
//   };
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace flowtrack::testing {

template <class Suite>
class ScratchSuite : public ::testing::Test {
 protected:
  static void make_scratch(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() / ("flowtrack_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ignored;  // a directory already gone is fine
    std::filesystem::remove_all(dir_, ignored);
  }
  // The path of `name` in the suite's directory.
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

 private:
  static inline std::filesystem::path dir_;
};

}  // namespace flowtrack::testing
