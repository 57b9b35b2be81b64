// A configuration file with `text` in it, named `name` in a directory of this test process's own.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace flowtrack::test {

inline std::string temp_config(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("flowtrack_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace flowtrack::test
