#include "workload/workload_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "engine/huge_page_allocator.hpp"
#include "workload/swf.hpp"

namespace vramsim {

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
    while (size_ < capacity_) {
      const ssize_t n = ::read(fd, data_ + size_, capacity_ - size_);
      if (n > 0) {
        size_ += static_cast<std::size_t>(n);
      } else if (n == 0) {
        break;  // the file shrank since fstat
      } else if (errno != EINTR) {
        ::close(fd);
        HugePageAllocator<char>().deallocate(data_, capacity_);
        throw WorkloadError(path, 0, "file", "read failed");
      }
    }
    ::close(fd);
    return;
  }
  // A pipe, a /proc file (which reports no size) or an empty file: read from
  // the same descriptor to its end.
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      read_.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      ::close(fd);
      throw WorkloadError(path, 0, "file", "read failed");
    }
  }
  ::close(fd);
}

WorkloadFile::~WorkloadFile() {
  if (data_) HugePageAllocator<char>().deallocate(data_, capacity_);
}

}  // namespace vramsim
