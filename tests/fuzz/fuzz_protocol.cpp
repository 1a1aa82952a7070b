// The protocol fuzz target: bytes as the head or an agent reads them off the
// network -> LineSplitter -> parse_line -> every message parser, and the
// channel's MessageSeal::open. Any input must end in a refusal with a reason
// or a parsed message; anything else (an exception, a sanitizer report, a
// signal) is a crash. A parsed message sealed by one end must open at the
// other, unchanged. Built as a libFuzzer target (VRAMSIM_FUZZ, tools/fuzz.sh
// 60 protocol) and linked into the replay driver that CTest runs over
// tests/fuzz/protocol on every build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/slurm/protocol.hpp"

namespace {

using namespace vramsim;
using namespace vramsim::slurm;

template <class F>
void parse_with(F parse, const Json& m) {
  auto p = parse(m);
  if (!p && p.error.empty()) std::abort();  // a refusal always says why
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string key = session_key("fuzz-secret-0123456789", {std::string(64, 'a'), std::string(64, 'b'),
                                                                         "1000", "run-1"});
  LineSplitter split(4096);
  split.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  MessageSeal head(key, Sender::Head), agent(key, Sender::Agent);
  while (auto line = split.next_line()) {
    auto parsed = parse_line(*line);
    if (!parsed) {
      if (parsed.error.empty()) std::abort();
      continue;
    }
    const Json m = parsed.value;
    parse_with(parse_challenge, m);
    parse_with(parse_hello, m);
    parse_with(parse_welcome, m);
    parse_with(parse_register, m);
    parse_with(parse_registered, m);
    parse_with(parse_heartbeat, m);
    parse_with(parse_start_replica, m);
    parse_with(parse_stop_replica, m);
    parse_with(parse_replica_started, m);
    parse_with(parse_call, m);
    parse_with(parse_call_result, m);
    parse_with(parse_goodbye, m);
    parse_with(parse_error, m);
    // As a forged line on an authenticated connection: refused with a
    // reason, or (never, without the key) accepted.
    Json forged = m;
    if (agent.open(forged).empty()) std::abort();
    // Sealed by the head, through the wire, opened by the agent: the same
    // message.
    const std::string wire = encode_line(head.seal(m));
    auto back = parse_line(wire.substr(0, wire.size() - 1));
    if (!back) std::abort();
    if (!agent.open(back.value).empty()) std::abort();
    Json expected = parse_line(encode_line(m).substr(0, encode_line(m).size() - 1)).value;
    expected.erase("seq");
    expected.erase("mac");
    if (back.value != expected) std::abort();
  }
  return 0;
}
