// The report fuzz target: bytes -> the plan CSV reader -> the report's plan
// section (its table and frontier plots); the same bytes -> the
// fragmentation CSV reader (--frag-csv) -> the fragmentation section. Any input must end in a
// ReportInputError or a report; anything else (another exception, a
// sanitizer report, a signal) is a crash. Built as a libFuzzer target
// (VRAMSIM_FUZZ, tools/fuzz.sh 60 report) and linked into the replay driver
// that CTest runs over tests/fuzz/report on every build.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "analysis/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramsim;
  if (size > 64 * 1024) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(bytes);
    ReportInputs inputs;
    inputs.fragmentation.push_back(read_frag_csv(in, "fuzz-frag.csv"));
    const ReportFiles r = build_report(inputs, ReportOptions{});
    if (r.markdown.find("## Fragmentation") == std::string::npos) __builtin_trap();
  } catch (const ReportInputError&) {
    // refused with a message: the expected outcome for bad input
  }
  std::istringstream in(bytes);
  ReportInputs inputs;
  try {
    inputs.plans.push_back(read_plan_csv(in, "fuzz-plan.csv"));
  } catch (const ReportInputError&) {
    return 0;  // refused with a message: the expected outcome for bad input
  }
  const ReportFiles r = build_report(inputs, ReportOptions{});
  if (r.markdown.empty()) __builtin_trap();  // a plan always has its section
  return 0;
}
