// The deployment key: read from a file only its owner may read, refused with the file's problem named
// (never its content), the same hash for the same secret in every instance, another for another secret,
// and a fingerprint that names the key without being it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "flowtrack/hash/crc32c.hpp"
#include "flowtrack/nf/deployment_key.hpp"
#include "support/temp_config.hpp"

namespace flowtrack {
namespace {

// A key file holding `content`, with `mode`.
std::string key_file(const std::string& name, const std::string& content, std::filesystem::perms mode = std::filesystem::perms::owner_read) {
  const std::string path = test::temp_config(name, content);
  std::filesystem::permissions(path, mode);
  return path;
}

std::string refusal_of(const std::string& path) {
  try {
    DeploymentKey::from_file(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

const std::string kSecret = "correct horse battery staple 42";

TEST(DeploymentKey, TheSameSecretHashesAlikeAnotherDoesNot) {
  const DeploymentKey a = DeploymentKey::from_file(key_file("a.key", kSecret));
  const DeploymentKey again = DeploymentKey::from_file(key_file("again.key", kSecret));
  const DeploymentKey other = DeploymentKey::from_file(key_file("other.key", kSecret + "!"));
  std::size_t same_as_other = 0, same_as_flow_hash = 0;
  for (std::uint16_t port = 1; port <= 1000; ++port) {
    const FlowKeyV4 key = FlowKeyV4::from_host(0x0a000001, 0xc0000201, port, 80, ipproto::kTcp);
    ASSERT_EQ(a.choice_hash(key), again.choice_hash(key));
    same_as_other += a.choice_hash(key) == other.choice_hash(key);
    same_as_flow_hash += a.choice_hash(key) == flow_hash(key);
  }
  EXPECT_LE(same_as_other, 1u);  // 32-bit hashes: a collision in 1000 is a one-in-four-million event
  EXPECT_LE(same_as_flow_hash, 1u);
  EXPECT_EQ(a.fingerprint(), again.fingerprint());
  EXPECT_NE(a.fingerprint(), other.fingerprint());
  EXPECT_EQ(a.fingerprint().size(), 16u);
  EXPECT_EQ(a.fingerprint().find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(DeploymentKey, AFileOthersMayReadIsRefused) {
  using std::filesystem::perms;
  const std::string path = key_file("shared.key", kSecret, perms::owner_read | perms::group_read);
  const std::string refusal = refusal_of(path);
  EXPECT_NE(refusal.find(path), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("chmod 600"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find(kSecret), std::string::npos) << "the refusal shows the secret";
}

TEST(DeploymentKey, ShortLongMissingAndOddFilesAreRefusedByName) {
  EXPECT_NE(refusal_of(key_file("short.key", "fifteen bytes!!")).find("15 bytes; a key has 16 to 1024"), std::string::npos);
  EXPECT_NE(refusal_of(key_file("long.key", std::string(1025, 'k'))).find("over 1024 bytes"), std::string::npos);
  EXPECT_EQ(refusal_of(key_file("edge.key", std::string(1024, 'k'))), "accepted");
  EXPECT_EQ(refusal_of(key_file("edge16.key", std::string(16, 'k'))), "accepted");
  EXPECT_NE(refusal_of("/nonexistent/deployment.key").find("No such file"), std::string::npos);
  const std::filesystem::path directory = std::filesystem::path(key_file("probe.key", kSecret)).parent_path() / "key.d";
  std::filesystem::create_directories(directory);
  std::filesystem::permissions(directory, std::filesystem::perms::owner_all);
  EXPECT_NE(refusal_of(directory.string()).find("not a regular file"), std::string::npos);
  // A FIFO with no writer: refused at once, not waited on.
  const std::string fifo = (directory / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal_of(fifo).find("not a regular file"), std::string::npos);
}

TEST(DeploymentKey, ASecretOfTheWrongLengthIsRefusedInMemoryToo) {
  const std::vector<std::uint8_t> short_secret(15, 1), long_secret(1025, 1), right(16, 1);
  EXPECT_THROW(DeploymentKey{short_secret}, std::invalid_argument);
  EXPECT_THROW(DeploymentKey{long_secret}, std::invalid_argument);
  EXPECT_NO_THROW(DeploymentKey{right});
}

}  // namespace
}  // namespace flowtrack
