#include "flowtrack/runtime/tun_device.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace flowtrack {
namespace {

[[noreturn]] void fail(const std::string& what, int error) {
  throw std::runtime_error(what + ": " + std::strerror(error));
}

// Runs `request` on the device named in `ifr` through a socket of its own (the interface ioctls).
void interface_ioctl(unsigned long request, ifreq& ifr, const char* what) {
  const int control = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (control < 0) fail("a socket for the interface ioctls", errno);
  const int result = ioctl(control, request, &ifr);
  const int error = errno;
  close(control);
  if (result != 0) fail(std::string(what) + " " + ifr.ifr_name, error);
}

}  // namespace

TunDevice::TunDevice(const std::string& name, std::uint32_t mtu, bool nonblocking) {
  if (name.empty() || name.size() >= IFNAMSIZ) {
    throw std::runtime_error("a TUN device's name has 1 to " + std::to_string(IFNAMSIZ - 1) + " characters: '" + name + "'");
  }
  fd_ = open("/dev/net/tun", O_RDWR | O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0));
  if (fd_ < 0) fail("open /dev/net/tun", errno);
  try {
    ifreq ifr{};
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    std::memcpy(ifr.ifr_name, name.c_str(), name.size());
    if (ioctl(fd_, TUNSETIFF, &ifr) != 0) fail("TUNSETIFF " + name, errno);
    name_ = ifr.ifr_name;  // "%d" numbered
    if (mtu != 0) {
      ifr.ifr_mtu = static_cast<int>(mtu);
      interface_ioctl(SIOCSIFMTU, ifr, "SIOCSIFMTU");
    }
    interface_ioctl(SIOCGIFFLAGS, ifr, "SIOCGIFFLAGS");
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    interface_ioctl(SIOCSIFFLAGS, ifr, "SIOCSIFFLAGS");
  } catch (...) {
    close(fd_);
    throw;
  }
}

TunDevice::~TunDevice() { close(fd_); }

}  // namespace flowtrack
