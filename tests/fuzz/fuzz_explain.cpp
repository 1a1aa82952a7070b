// The explain fuzz target: bytes -> trace reader -> explanation (text and
// JSON) and the Chrome trace. Any input must end in a refusal with a message
// (std::runtime_error from the reader, ExplainError) or a completed
// explanation; anything else is a crash. Built as a libFuzzer target
// (VRAMSIM_FUZZ) and linked into a replay driver that CTest runs over the
// golden traces and every regression input.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/chrome_trace.hpp"
#include "analysis/explain.hpp"
#include "analysis/trace_diff.hpp"

namespace {
constexpr std::size_t kMaxInputBytes = 256 * 1024;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramsim;
  if (size > kMaxInputBytes) return 0;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<TraceEvent> events;
  try {
    events = parse_trace(in, "fuzz.jsonl");
  } catch (const std::runtime_error&) {
    return 0;  // refused with a message naming the line
  }
  try {
    const Explanation x = explain_trace(events);
    std::ostringstream out;
    print_explanation(x, out);
    out << explanation_json(x).dump(2, ' ', false, Json::error_handler_t::replace);
    if (!x.apps.empty()) explain_trace(events, x.apps.front().app);
  } catch (const ExplainError&) {
    // no run_started first: refused with a message
  }
  std::ostringstream chrome;
  chrome << chrome_trace(events).dump(-1, ' ', false, Json::error_handler_t::replace);
  return 0;
}
