#include "tests/support/test_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace vramsim::testing_support {

namespace {

// Suite.Test, with characters a file name should not carry replaced.
std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "no-test";
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name.substr(0, 100);
}

}  // namespace

TestDir::TestDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("vramsim-" + test_name() + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("TestDir: mkdtemp failed for " + tmpl);
  path_ = tmpl;
}

TestDir::~TestDir() {
  std::error_code ec;  // a destructor must not throw; a folder left behind is only untidy
  std::filesystem::remove_all(path_, ec);
}

std::string TestDir::write(const std::string& name, const std::string& text) const {
  const std::string p = file(name);
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("TestDir: cannot write " + p);
  return p;
}

}  // namespace vramsim::testing_support
