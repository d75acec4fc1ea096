#include "model/util/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ipusim::util {

int openRegularInputFile(const std::string& path, const std::string& what, std::uint64_t maxBytes) {
  // A name from JSON may hold a NUL ("ids.npy\u0000x"): the system would read
  // it as the name before the NUL, another file than the one written.
  if (const std::size_t nul = path.find('\0'); nul != std::string::npos)
    throw std::invalid_argument(path.substr(0, nul) + "\\u0000" + path.substr(nul + 1) + ": a " + what +
                                " name holding a NUL character; expected a file name");
  // O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::invalid_argument(path + ": cannot open " + what + ": " + std::strerror(errno));
  struct stat info {};
  std::string problem;
  if (::fstat(fd, &info) != 0) problem = std::string("cannot inspect it: ") + std::strerror(errno);
  else if (S_ISDIR(info.st_mode)) problem = "is a directory, expected a " + what;
  else if (S_ISFIFO(info.st_mode)) problem = "is a FIFO, expected a regular " + what;
  else if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) problem = "is a device, expected a regular " + what;
  else if (!S_ISREG(info.st_mode)) problem = "is not a regular file, expected a " + what;
  else if (std::uint64_t(info.st_size) > maxBytes)
    problem = "is " + std::to_string(info.st_size) + " bytes; a " + what + " may have at most " +
              std::to_string(maxBytes);
  if (!problem.empty()) {
    ::close(fd);
    throw std::invalid_argument(path + ": " + problem);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string readInputFile(const std::string& path, const std::string& what, std::uint64_t maxBytes) {
  const int fd = openRegularInputFile(path, what, maxBytes);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw std::invalid_argument(path + ": cannot read " + what + ": " + why);
    }
    if (n == 0) break;
    bytes.append(buffer, std::size_t(n));
    if (bytes.size() > maxBytes) {  // it grew while we read
      ::close(fd);
      throw std::invalid_argument(path + ": a " + what + " may have at most " + std::to_string(maxBytes) + " bytes");
    }
  }
  ::close(fd);
  return bytes;
}

}  // namespace ipusim::util
