#pragma once
// A trace file's bytes, read-only. A regular file is mapped (mmap, pages
// read ahead), so a trace of many megabytes is neither copied nor zeroed
// before it is parsed; a pipe or a /proc file, which cannot be mapped, is
// read to its end. An unreadable path (or a folder) is a WorkloadError.
#include <string>
#include <string_view>

namespace vramsim {

class WorkloadFile {
 public:
  explicit WorkloadFile(const std::string& path);
  ~WorkloadFile();
  WorkloadFile(const WorkloadFile&) = delete;
  WorkloadFile& operator=(const WorkloadFile&) = delete;

  std::string_view text() const { return map_ ? std::string_view(static_cast<const char*>(map_), size_) : read_; }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string read_;  // what was read where nothing is mapped
};

}  // namespace vramsim
