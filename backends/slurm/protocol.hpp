#pragma once
// The head <-> node agent wire protocol of live mode (docs/live-protocol.md):
// JSON Lines framing with a size limit, the HMAC-SHA256 handshake, the
// per-run secret file, and typed parse/encode of every message. Shared by the
// head's AgentServer and the vramsim-agent binary so both read one format.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/ids.hpp"
#include "engine/trace.hpp"  // Json

namespace vramsim::slurm {

inline constexpr std::size_t kDefaultMaxMessageBytes = 65536;
inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kMinSecretBytes = 16;

// Splits a byte stream into lines ('\n', a '\r' before it dropped). A line
// (without its '\n') may hold max_line_bytes. Once a line grows past that the
// splitter fails and stays failed, so an oversized message is refused
// without buffering the rest of it.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line_bytes = kDefaultMaxMessageBytes);
  // False when a line is (now) over the limit.
  bool feed(std::string_view bytes);
  // The next complete line, if one is buffered (also after a failure, the
  // lines completed before it).
  std::optional<std::string> next_line();
  bool overflowed() const { return overflowed_; }
  std::size_t max_line_bytes() const { return max_; }

 private:
  std::size_t max_;
  std::string current_;            // the incomplete line
  std::deque<std::string> lines_;  // complete lines not yet taken
  bool overflowed_ = false;
};

// One message as it goes on the wire: compact JSON and '\n'.
std::string encode_line(const Json& message);

std::string to_hex(std::string_view bytes);
// Lower- or upper-case hex -> bytes; nullopt on odd length or a non-hex digit.
std::optional<std::string> from_hex(std::string_view hex);

// HMAC-SHA256(key, data) as lower-case hex.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// The handshake proof: HMAC-SHA256(secret, nonce + job_id).
std::string handshake_hmac(std::string_view secret, std::string_view nonce, std::string_view job_id);
// Constant-time check of a received proof (CRYPTO_memcmp); false for a
// proof that is not 64 hex digits.
bool handshake_hmac_matches(std::string_view secret, std::string_view nonce, std::string_view job_id,
                            std::string_view received_hex);
// kNonceBytes from RAND_bytes, hex; throws std::runtime_error if the RNG fails.
std::string make_nonce();

class SecretFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The secret in `path`, trailing whitespace removed. Refuses (SecretFileError,
// message naming the path) a file that cannot be read, is not a regular file,
// is not owned by the effective user, grants any group/other permission, or
// holds fewer than kMinSecretBytes.
std::string read_secret_file(const std::string& path);

// ---- messages --------------------------------------------------------------

struct AgentDevice {
  int index = 0;
  std::string name;
  std::int64_t total_mb = 0;
};

struct AgentRegistration {
  std::string job_id, hostname, ip;
  int pid = 0;
  Json resources = Json::object();
  int cpus = 0;
  std::int64_t memory_bytes = 0;
  std::vector<AgentDevice> devices;
  std::string notice, script_resources;
};

struct DeviceUsage {
  int index = 0;
  std::int64_t used_bytes = 0;
};

struct ReplicaLaunch {
  std::string app, replica;
  std::int64_t gpu_memory_mb = 0;
  int device = -1;
  std::string kind = "plain";  // "plain" or "probe"
};

struct ReplicaState {
  std::string replica;
  std::string state;  // "starting", "running", "stopping"
};

struct Challenge { std::string nonce; };
struct Hello { std::string job_id, run_id, hmac; };
struct Registered { std::string job_id; };
struct Heartbeat {
  std::vector<DeviceUsage> devices;
  std::vector<ReplicaState> replicas;
};
struct StopReplica { std::string replica; };
struct ReplicaStarted {
  std::string replica;
  bool ok = false;
  std::string error;
};
struct Call {
  std::uint64_t call_id = 0;
  std::string replica;
  Json payload;
};
struct CallResult {
  std::uint64_t call_id = 0;
  std::string replica;
  Json result;
};
struct Goodbye { std::string reason; };
struct ErrorMessage { std::string reason; };

// A parse result: the value, or a one-line reason ("malformed message: ...").
template <class T>
struct Parsed {
  T value{};
  std::string error;
  explicit operator bool() const { return error.empty(); }
};

// A line -> a JSON object with a string "type" (the type is not checked
// against the known ones here).
Parsed<Json> parse_line(std::string_view line);
std::string message_type(const Json& message);  // "" when absent

Parsed<Challenge> parse_challenge(const Json& m);
Parsed<Hello> parse_hello(const Json& m);
Parsed<AgentRegistration> parse_register(const Json& m);
Parsed<Registered> parse_registered(const Json& m);
Parsed<Heartbeat> parse_heartbeat(const Json& m);
Parsed<ReplicaLaunch> parse_start_replica(const Json& m);
Parsed<StopReplica> parse_stop_replica(const Json& m);
Parsed<ReplicaStarted> parse_replica_started(const Json& m);
Parsed<Call> parse_call(const Json& m);
Parsed<CallResult> parse_call_result(const Json& m);
Parsed<Goodbye> parse_goodbye(const Json& m);
Parsed<ErrorMessage> parse_error(const Json& m);

Json to_message(const Challenge& m);
Json to_message(const Hello& m);
Json to_message(const AgentRegistration& m);  // type "register"
Json to_message(const Registered& m);
Json to_message(const Heartbeat& m);
Json to_message(const ReplicaLaunch& m);      // type "start_replica"
Json to_message(const StopReplica& m);
Json to_message(const ReplicaStarted& m);
Json to_message(const Call& m);
Json to_message(const CallResult& m);
Json to_message(const Goodbye& m);
Json to_message(const ErrorMessage& m);
Json drain_message();
Json ping_message();  // the head's liveness, every AgentServerConfig::ping_interval

}  // namespace vramsim::slurm
