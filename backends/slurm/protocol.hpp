#pragma once
// The head <-> node agent wire protocol of live mode (docs/live-protocol.md):
// JSON Lines framing with a size limit, the mutual HMAC-SHA256 handshake and
// the MAC on every later message, the
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
#include "engine/text.hpp"
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

// Lower- or upper-case hex -> bytes; nullopt on odd length or a non-hex digit.
std::optional<std::string> from_hex(std::string_view hex);

// HMAC-SHA256(key, data) as lower-case hex.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// ---- the handshake and the channel (docs/live-protocol.md, "Channel") ------

// What both ends prove the run's secret over: the head's nonce (challenge),
// the agent's (hello), the job and the run.
struct HandshakeIds {
  std::string head_nonce, agent_nonce, job_id, run_id;
};
// HMAC-SHA256(secret, label + ids) as lower-case hex. A label per use keeps
// one end's proof from serving as the other's or as the session key, so an
// impostor head gets nothing from an agent it can use against the real head.
std::string agent_proof(std::string_view secret, const HandshakeIds& ids);
std::string head_proof(std::string_view secret, const HandshakeIds& ids);
// Constant-time comparison (CRYPTO_memcmp); false for a received proof that
// is not 64 hex digits.
bool proof_matches(std::string_view expected_hex, std::string_view received_hex);
// The connection's MAC key, fresh per connection (both nonces are).
std::string session_key(std::string_view secret, const HandshakeIds& ids);

enum class Sender { Head, Agent };

// Every message after the handshake carries "seq" (0, 1, ... per direction)
// and "mac": HMAC-SHA256(session key, sender + the message without "mac", as
// compact JSON). A message without them, with a wrong MAC, or out of sequence
// (a replay) is refused; the sequence only moves on an accepted message, so
// an injected line never costs the real ones.
class MessageSeal {
 public:
  MessageSeal(std::string key, Sender me);
  // `message` with "seq" and "mac" added.
  Json seal(Json message);
  // Checks and strips "seq" and "mac"; "" when accepted, else why not
  // ("no MAC", "wrong MAC", "replayed or out of order: seq 3, expected 5").
  // A refused message may have lost its "mac": it is for dropping.
  std::string open(Json& message);
  std::uint64_t next_to_send() const { return send_seq_; }
  std::uint64_t next_to_receive() const { return receive_seq_; }

 private:
  std::string mac(Sender from, const Json& message_with_seq) const;
  std::string key_;
  Sender me_;
  std::uint64_t send_seq_ = 0, receive_seq_ = 0;
};

// Refused messages a connection may bring before it is closed: enough to
// ride out a stray injected line, few enough that a flood ends it.
inline constexpr int kMaxRefusedMessages = 8;

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
  // Where cpus, memory and the devices came from (name -> source, e.g.
  // "memory": "SLURM_MEM_PER_NODE"); empty from an agent that does not say.
  Json allocation = Json::object();
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
struct Hello { std::string job_id, run_id, nonce, hmac; };  // nonce: the agent's
// The head's proof of the secret, answering hello; the channel starts after it.
struct Welcome { std::string job_id, hmac; };
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
  // What the replica holds: "device" (cudaMalloc'd on its GPU) or "host"
  // (no usable GPU: host memory stands in), and how many bytes; "" and 0
  // when it did not start.
  std::string memory;
  std::int64_t bytes = 0;
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
Parsed<Welcome> parse_welcome(const Json& m);
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
Json to_message(const Welcome& m);
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
