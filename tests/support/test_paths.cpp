#include "tests/support/test_paths.hpp"

const char* vramsim_test_source_dir() { return VRAMSIM_TEST_SOURCE_DIR; }
const char* vramsim_test_binary_dir() { return VRAMSIM_TEST_BINARY_DIR; }
