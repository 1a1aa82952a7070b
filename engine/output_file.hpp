#pragma once
// An output file whose every write is checked: a short write, a failed flush
// or a failed close (a full disk, /dev/full) throws OutputError naming the
// path, so a caller reports "written" only after close() returned.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vramsim {

// An output file could not be written (exit status 3 in vramsim).
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& path, const std::string& problem)
      : std::runtime_error("cannot write '" + path + "': " + problem), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class OutputFile {
 public:
  explicit OutputFile(std::string path);  // opens for writing, truncating; throws OutputError
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // closes without checking: only reached on an error path

  void write(std::string_view text);  // throws OutputError
  void flush();                       // throws OutputError
  void close();                       // flushes and closes; throws OutputError
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int err);
  std::string path_;
  std::FILE* f_ = nullptr;
};

// Where a file is written before it is renamed over `out`: beside it (the
// same file system, so the rename is atomic), named for this process.
std::string temp_path_beside(const std::string& out);

// `out` holds exactly what was written or is left as it was: the text goes
// to a temporary file beside it, renamed over it by commit().
class ReplacingFile {
 public:
  explicit ReplacingFile(std::string out);  // throws OutputError
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;
  ~ReplacingFile();  // without commit(): the temporary file is removed
  void write(std::string_view text) { file_.write(text); }
  void commit();     // throws OutputError
  const std::string& path() const { return out_; }

 private:
  std::string out_, tmp_;
  OutputFile file_;
  bool done_ = false;
};

}  // namespace vramsim
