// The SWF fuzz target: bytes -> SWF reader -> a replay under FCFS and EASY
// -> the summary and the jobs CSV. Any input must end in a WorkloadError or
// a completed replay; anything else (another exception, a sanitizer
// report, a signal) is a crash. Built as a libFuzzer target (VRAMSIM_FUZZ,
// tools/fuzz.sh swf) and linked into the replay driver that CTest runs over
// tests/fuzz/swf on every build.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "backends/sim/batch_replay.hpp"

namespace {

using namespace vramsim;

// Keep each input to milliseconds: at most this many jobs and processors.
constexpr std::size_t kMaxInputBytes = 64 * 1024;
constexpr std::size_t kMaxFuzzJobs = 2000;
constexpr std::int64_t kMaxFuzzProcs = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInputBytes) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  SwfTrace t;
  try {
    t = parse_swf(text, "fuzz.swf", kMaxFuzzJobs);
  } catch (const WorkloadError&) {
    return 0;  // refused with a message: the expected outcome for bad input
  }
  const std::int64_t procs = std::min(t.header.max_procs.value_or(64), kMaxFuzzProcs);
  for (const auto policy : {PartitionPolicy::Fcfs, PartitionPolicy::Easy}) {
    const ReplayResult r = replay_swf(t, procs, policy);
    std::ostringstream out;
    print_replay_summary(r, "fuzz.swf", out);
    write_jobs_csv(r, out);
  }
  return 0;
}
