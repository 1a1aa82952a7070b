#include "engine/output_file.hpp"

#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace vramsim {

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  errno = 0;
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_) throw OutputError(path_, errno ? std::strerror(errno) : "cannot open for writing");
}

OutputFile::~OutputFile() {
  if (f_) std::fclose(f_);
}

void OutputFile::fail(int err) {
  // The file is unusable after an error; close it now so the destructor
  // does not try to flush the same buffer again.
  if (f_) std::fclose(f_);
  f_ = nullptr;
  throw OutputError(path_, err ? std::strerror(err) : "write failed");
}

void OutputFile::write(std::string_view text) {
  if (!f_) throw OutputError(path_, "already closed");
  errno = 0;
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f_) != text.size()) fail(errno);
}

void OutputFile::flush() {
  if (!f_) throw OutputError(path_, "already closed");
  errno = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) fail(errno);
}

void OutputFile::close() {
  if (!f_) return;
  flush();
  std::FILE* f = f_;
  f_ = nullptr;
  errno = 0;
  if (std::fclose(f) != 0) throw OutputError(path_, errno ? std::strerror(errno) : "close failed");
}

std::string temp_path_beside(const std::string& out) { return out + ".tmp-" + std::to_string(::getpid()); }

ReplacingFile::ReplacingFile(std::string out) : out_(std::move(out)), tmp_(temp_path_beside(out_)), file_(tmp_) {}

ReplacingFile::~ReplacingFile() {
  if (!done_) std::remove(tmp_.c_str());  // an error or an interrupt: the old file stays
}

void ReplacingFile::commit() {
  file_.close();
  if (std::rename(tmp_.c_str(), out_.c_str()) != 0) {
    const int err = errno;
    throw OutputError(out_, "cannot rename " + tmp_ + " to it: " + std::strerror(err));
  }
  done_ = true;
}

}  // namespace vramsim
