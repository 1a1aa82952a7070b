#pragma once
// Where the tests find the source and build trees. The paths are compiled
// into one file (test_paths.cpp) only, so that no other test's compile line
// carries an absolute path: a fresh clone in another folder (CI) then hits
// the same compiler cache. Test files use VRAMSIM_SOURCE_DIR and
// VRAMSIM_BINARY_DIR, which expand to these calls.
const char* vramsim_test_source_dir();
const char* vramsim_test_binary_dir();
