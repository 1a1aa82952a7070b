#include "workload/workload_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/huge_page_allocator.hpp"
#include "workload/swf.hpp"

namespace vramsim {

namespace {

// Up to n bytes from fd into `to`, a call interrupted by a signal retried:
// 0 at its end; a WorkloadError (fd closed) where the read fails.
std::size_t read_some(int fd, char* to, std::size_t n, const std::string& path) {
  for (;;) {
    const ssize_t got = ::read(fd, to, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) {
      ::close(fd);
      throw WorkloadError(path, 0, "file", "read failed");
    }
  }
}

}  // namespace

WorkloadFile::WorkloadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw WorkloadError(path, 0, "file", "cannot be opened for reading");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw WorkloadError(path, 0, "file", "cannot be opened for reading");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw WorkloadError(path, 0, "file", "expected a file, got a folder");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    capacity_ = static_cast<std::size_t>(st.st_size);
    data_ = HugePageAllocator<char>().allocate(capacity_);
    try {
      // Up to the size fstat gave: a file that shrank since ends early.
      while (size_ < capacity_) {
        const std::size_t got = read_some(fd, data_ + size_, capacity_ - size_, path);
        if (got == 0) break;
        size_ += got;
      }
    } catch (...) {
      HugePageAllocator<char>().deallocate(data_, capacity_);
      throw;
    }
    ::close(fd);
    return;
  }
  // A pipe, a /proc file (which reports no size) or an empty file: read from
  // the same descriptor to its end.
  char buf[1 << 16];
  while (const std::size_t got = read_some(fd, buf, sizeof buf, path)) read_.append(buf, got);
  ::close(fd);
}

WorkloadFile::~WorkloadFile() {
  if (data_) HugePageAllocator<char>().deallocate(data_, capacity_);
}

}  // namespace vramsim
