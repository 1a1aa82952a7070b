#pragma once
// A file under /proc/<pid>/ read whole, or "" once the process is gone.
// A process can exit between the open and the read; the read then fails
// with ESRCH, which libstdc++'s istreambuf_iterator throws on.
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace vramsim::testing_support {

inline std::string read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0) out.clear();
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace vramsim::testing_support
