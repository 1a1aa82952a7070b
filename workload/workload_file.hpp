#pragma once
// A trace file's bytes, read-only. A regular file is read whole, in one
// call for its size, into memory in 2 MiB pages (engine/huge_page_allocator):
// the parser then walks it with a TLB entry per 2 MiB, where a mapping of
// the file (mmap) would take one per 4 KiB (a KTH-SP2 replay: 0.4 ms less
// of 20). A pipe or a /proc file, which reports no size, is read to its
// end. An unreadable path (or a folder) is a WorkloadError.
#include <string>
#include <string_view>

namespace vramsim {

class WorkloadFile {
 public:
  explicit WorkloadFile(const std::string& path);
  ~WorkloadFile();
  WorkloadFile(const WorkloadFile&) = delete;
  WorkloadFile& operator=(const WorkloadFile&) = delete;

  std::string_view text() const { return data_ ? std::string_view(data_, size_) : read_; }

 private:
  char* data_ = nullptr;  // a regular file's bytes: size_ of capacity_
  std::size_t size_ = 0, capacity_ = 0;
  std::string read_;  // what was read from anything else
};

}  // namespace vramsim
