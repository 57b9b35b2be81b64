// A configuration file with `text` in it, named `name`, in a directory of this test process's own that
// is removed when the process ends (a later call with the same name overwrites the file).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace flowtrack::test {

inline std::string temp_config(const std::string& name, const std::string& text) {
  struct ProcessDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("flowtrack_test_" + std::to_string(::getpid()));
    ProcessDir() { std::filesystem::create_directories(path); }
    ~ProcessDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const ProcessDir dir;
  const std::string path = (dir.path / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace flowtrack::test
