#pragma once
// A folder of one test's own: made unique under the system temp folder
// (mkdtemp, named after the running test) and removed with everything in it
// when the object goes, so tests run in parallel (ctest -j) or from two
// checkouts at once never write to the same file.
#include <filesystem>
#include <string>

namespace vramsim::testing_support {

class TestDir {
 public:
  TestDir();
  ~TestDir();
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The path of `name` inside the folder (nothing is created).
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes text to `name` inside the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

}  // namespace vramsim::testing_support
