// Replays inputs through the fuzz target with the normal compiler: every
// file named, or found under a folder named, on the command line, in sorted
// order. Exit 1 (after trying them all) if any input escaped with an
// exception; a sanitizer report or a signal ends the run as it would the
// fuzzer. CTest runs it over the seed corpus and every regression input.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else if (fs::is_regular_file(p)) {
      inputs.push_back(p);
    } else {
      std::cerr << "fuzz_replay: no such file or folder: " << p.string() << "\n";
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  int failed = 0;
  for (const auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::cerr << "fuzz_replay: " << p.string() << ": uncaught exception: " << e.what() << "\n";
      ++failed;
    }
  }
  std::cout << "fuzz_replay: " << inputs.size() << " input(s), " << failed << " failed\n";
  return failed ? 1 : 0;
}
