#include "backends/slurm/protocol.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace vramsim::slurm {

// ---- framing ---------------------------------------------------------------

LineSplitter::LineSplitter(std::size_t max_line_bytes) : max_(max_line_bytes) {}

bool LineSplitter::feed(std::string_view bytes) {
  if (overflowed_) return false;
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    auto part = bytes.substr(0, nl);
    if (current_.size() + part.size() > max_) {
      overflowed_ = true;
      current_.clear();
      return false;
    }
    current_.append(part);
    if (nl == std::string_view::npos) break;
    if (!current_.empty() && current_.back() == '\r') current_.pop_back();
    lines_.push_back(std::move(current_));
    current_.clear();
    bytes.remove_prefix(nl + 1);
  }
  return true;
}

std::optional<std::string> LineSplitter::next_line() {
  if (lines_.empty()) return std::nullopt;
  std::string line = std::move(lines_.front());
  lines_.pop_front();
  return line;
}

std::string encode_line(const Json& message) {
  // Invalid UTF-8 in a string is replaced rather than thrown on.
  return message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// ---- hex, HMAC, nonce ------------------------------------------------------


namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

namespace {
std::string hmac_sha256_raw(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(md), len);
}
}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  return to_hex(hmac_sha256_raw(key, data));
}

namespace {
std::string handshake_data(std::string_view label, const HandshakeIds& ids) {
  // Ids are printable without spaces and nonces hex, so newlines separate
  // the fields unambiguously.
  std::string data(label);
  for (const std::string* f : {&ids.head_nonce, &ids.agent_nonce, &ids.job_id, &ids.run_id}) {
    data.push_back('\n');
    data.append(*f);
  }
  return data;
}

const char* sender_label(Sender s) { return s == Sender::Head ? "head\n" : "agent\n"; }
}  // namespace

std::string agent_proof(std::string_view secret, const HandshakeIds& ids) {
  return hmac_sha256_hex(secret, handshake_data("vramsim-live-1 agent hello", ids));
}

std::string head_proof(std::string_view secret, const HandshakeIds& ids) {
  return hmac_sha256_hex(secret, handshake_data("vramsim-live-1 head welcome", ids));
}

std::string session_key(std::string_view secret, const HandshakeIds& ids) {
  return hmac_sha256_raw(secret, handshake_data("vramsim-live-1 session key", ids));
}

bool proof_matches(std::string_view expected_hex, std::string_view received_hex) {
  auto expected = from_hex(expected_hex);
  auto received = from_hex(received_hex);
  if (!expected || !received || expected->size() != 32 || received->size() != 32) return false;
  return CRYPTO_memcmp(expected->data(), received->data(), expected->size()) == 0;
}

MessageSeal::MessageSeal(std::string key, Sender me) : key_(std::move(key)), me_(me) {}

std::string MessageSeal::mac(Sender from, const Json& message_with_seq) const {
  std::string data = sender_label(from);
  // As encode_line writes it, so both ends hash the same bytes.
  data.append(message_with_seq.dump(-1, ' ', false, Json::error_handler_t::replace));
  return hmac_sha256_raw(key_, data);
}

Json MessageSeal::seal(Json message) {
  message.erase("mac");
  message["seq"] = send_seq_++;
  message["mac"] = to_hex(mac(me_, message));
  return message;
}

std::string MessageSeal::open(Json& message) {
  if (!message.is_object()) return "not an object";
  auto m = message.find("mac");
  auto q = message.find("seq");
  if (m == message.end() || q == message.end()) return "no MAC";
  if (!m->is_string() || !q->is_number_unsigned()) return "wrong MAC";
  auto received = from_hex(m->get<std::string>());
  // The MAC covers the message without it; a refused line is dropped anyway.
  message.erase(m);
  const Sender peer = me_ == Sender::Head ? Sender::Agent : Sender::Head;
  const std::string expected = mac(peer, message);
  if (!received || received->size() != expected.size() ||
      CRYPTO_memcmp(expected.data(), received->data(), expected.size()) != 0)
    return "wrong MAC";
  const auto seq = q->get<std::uint64_t>();
  if (seq != receive_seq_)
    return "replayed or out of order: seq " + std::to_string(seq) + ", expected " + std::to_string(receive_seq_);
  ++receive_seq_;
  message.erase("seq");
  return "";
}

std::string make_nonce() {
  unsigned char buf[kNonceBytes];
  if (RAND_bytes(buf, sizeof buf) != 1) throw std::runtime_error("RAND_bytes failed");
  return to_hex(std::string_view(reinterpret_cast<const char*>(buf), sizeof buf));
}

// ---- secret file -----------------------------------------------------------

std::string read_secret_file(const std::string& path) {
  auto fail = [&](const std::string& why) { return SecretFileError("secret file " + path + ": " + why); };
  // O_NOFOLLOW: the checks below must be about the file itself, not a link.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw fail(std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail("not a regular file");
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    throw fail("owned by uid " + std::to_string(st.st_uid) + ", expected " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    ::close(fd);
    throw fail(std::string("mode ") + mode + " lets others read it; expected 0600");
  }
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw fail(std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 65536) {
      ::close(fd);
      throw fail("larger than 64 KiB");
    }
  }
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t'))
    text.pop_back();
  if (text.size() < kMinSecretBytes)
    throw fail("secret shorter than " + std::to_string(kMinSecretBytes) + " bytes");
  return text;
}

// ---- messages --------------------------------------------------------------

Parsed<Json> parse_line(std::string_view line) {
  Parsed<Json> p;
  p.value = Json::parse(line.begin(), line.end(), nullptr, false);
  if (p.value.is_discarded()) {
    p.error = "malformed message: not JSON";
  } else if (!p.value.is_object()) {
    p.error = "malformed message: not a JSON object";
  } else if (!p.value.contains("type") || !p.value["type"].is_string()) {
    p.error = "malformed message: field 'type': expected a string";
  }
  return p;
}

std::string message_type(const Json& m) {
  if (m.is_object() && m.contains("type") && m["type"].is_string()) return m["type"].get<std::string>();
  return "";
}

namespace {

// Reads fields of one message, remembering the first problem.
class Reader {
 public:
  Reader(const Json& m, std::string type) : m_(m), type_(std::move(type)) {}

  std::string str(const char* field, bool id = false) {
    const Json* v = find(field);
    if (v == nullptr) return "";
    if (!v->is_string()) return fail(field, "a string"), "";
    auto s = v->get<std::string>();
    if (id && !valid_id(s)) return fail(field, "an id of 1..128 printable ASCII characters, no spaces"), "";
    return s;
  }
  std::int64_t integer(const char* field, std::int64_t lo, std::int64_t hi) {
    const Json* v = find(field);
    if (v == nullptr) return 0;
    if (!v->is_number_integer()) return fail(field, "an integer"), 0;
    if (v->is_number_unsigned()) {
      auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) return fail(field, range(lo, hi)), 0;
      return static_cast<std::int64_t>(u);
    }
    auto i = v->get<std::int64_t>();
    if (i < lo || i > hi) return fail(field, range(lo, hi)), 0;
    return i;
  }
  std::uint64_t uinteger(const char* field) {
    const Json* v = find(field);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned()) return fail(field, "an integer >= 0"), 0;
    return v->get<std::uint64_t>();
  }
  bool boolean(const char* field) {
    const Json* v = find(field);
    if (v == nullptr) return false;
    if (!v->is_boolean()) return fail(field, "true or false"), false;
    return v->get<bool>();
  }
  const Json* array(const char* field) {
    const Json* v = find(field);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) return fail(field, "an array"), nullptr;
    return v;
  }
  const Json* any(const char* field) { return find(field); }

  void fail(const std::string& field, const std::string& expected) {
    if (error_.empty())
      error_ = "malformed message: field '" + prefix_ + field + "' of " + type_ + ": expected " + expected;
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  Reader sub(const Json& element, const std::string& prefix) {
    Reader r(element, type_);
    r.prefix_ = prefix;
    return r;
  }
  void adopt(const Reader& r) {
    if (error_.empty()) error_ = r.error_;
  }

 private:
  static std::string range(std::int64_t lo, std::int64_t hi) {
    return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  const Json* find(const char* field) {
    if (!m_.is_object()) {
      if (error_.empty()) error_ = "malformed message: " + prefix_ + " of " + type_ + ": expected an object";
      return nullptr;
    }
    auto it = m_.find(field);
    if (it == m_.end()) {
      if (error_.empty())
        error_ = "malformed message: field '" + prefix_ + field + "' of " + type_ + ": missing";
      return nullptr;
    }
    return &*it;
  }

  const Json& m_;
  std::string type_;
  std::string prefix_;
  std::string error_;
};

template <class T>
Parsed<T> finish(T value, const Reader& r) {
  Parsed<T> p;
  p.error = r.error();
  if (p.error.empty()) p.value = std::move(value);
  return p;
}

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();

Json typed(const char* type) {
  Json j = Json::object();
  j["type"] = type;
  return j;
}

}  // namespace

Parsed<Challenge> parse_challenge(const Json& m) {
  Reader r(m, "challenge");
  Challenge c{r.str("nonce")};
  if (r.ok() && (c.nonce.size() != 2 * kNonceBytes || !from_hex(c.nonce)))
    r.fail("nonce", std::to_string(2 * kNonceBytes) + " hex digits");
  return finish(std::move(c), r);
}

Parsed<Hello> parse_hello(const Json& m) {
  Reader r(m, "hello");
  Hello h;
  h.job_id = r.str("job_id", true);
  h.run_id = r.str("run_id", true);
  h.nonce = r.str("nonce");
  if (r.ok() && (h.nonce.size() != 2 * kNonceBytes || !from_hex(h.nonce)))
    r.fail("nonce", std::to_string(2 * kNonceBytes) + " hex digits");
  h.hmac = r.str("hmac");
  if (r.ok() && (h.hmac.size() != 64 || !from_hex(h.hmac))) r.fail("hmac", "64 hex digits");
  return finish(std::move(h), r);
}

Parsed<Welcome> parse_welcome(const Json& m) {
  Reader r(m, "welcome");
  Welcome w;
  w.job_id = r.str("job_id", true);
  w.hmac = r.str("hmac");
  if (r.ok() && (w.hmac.size() != 64 || !from_hex(w.hmac))) r.fail("hmac", "64 hex digits");
  return finish(std::move(w), r);
}

Parsed<AgentRegistration> parse_register(const Json& m) {
  Reader r(m, "register");
  AgentRegistration a;
  a.job_id = r.str("job_id", true);
  a.hostname = r.str("hostname");
  a.ip = r.str("ip");
  a.pid = static_cast<int>(r.integer("pid", 0, kMaxInt));
  if (const Json* res = r.any("resources")) {
    if (!res->is_object()) {
      r.fail("resources", "an object of name -> number");
    } else {
      for (auto it = res->begin(); it != res->end(); ++it) {
        if (!it.value().is_number() || it.value().get<double>() < 0) {
          r.fail("resources." + it.key(), "a number >= 0");
          break;
        }
      }
      a.resources = *res;
    }
  }
  a.cpus = static_cast<int>(r.integer("cpus", 0, kMaxInt));
  a.memory_bytes = r.integer("memory_bytes", 0, kMaxI64);
  if (const Json* devs = r.array("devices")) {
    for (std::size_t i = 0; i < devs->size(); ++i) {
      Reader d = r.sub((*devs)[i], "devices[" + std::to_string(i) + "].");
      AgentDevice dev;
      dev.index = static_cast<int>(d.integer("index", 0, kMaxInt));
      dev.name = d.str("name");
      dev.total_mb = d.integer("total_mb", 0, kMaxI64);
      r.adopt(d);
      a.devices.push_back(std::move(dev));
    }
  }
  a.notice = r.str("notice");
  a.script_resources = r.str("script_resources");
  if (const Json* al = m.is_object() && m.contains("allocation") ? &m["allocation"] : nullptr) {
    bool strings = al->is_object();
    for (auto it = strings ? al->begin() : al->end(); strings && it != al->end(); ++it)
      strings = it.value().is_string();
    if (!strings) r.fail("allocation", "an object of name -> string");
    else a.allocation = *al;
  }
  return finish(std::move(a), r);
}

Parsed<Registered> parse_registered(const Json& m) {
  Reader r(m, "registered");
  Registered x{r.str("job_id", true)};
  return finish(std::move(x), r);
}

Parsed<Heartbeat> parse_heartbeat(const Json& m) {
  Reader r(m, "heartbeat");
  Heartbeat h;
  if (const Json* devs = r.array("devices")) {
    for (std::size_t i = 0; i < devs->size(); ++i) {
      Reader d = r.sub((*devs)[i], "devices[" + std::to_string(i) + "].");
      DeviceUsage u;
      u.index = static_cast<int>(d.integer("index", 0, kMaxInt));
      u.used_bytes = d.integer("used_bytes", 0, kMaxI64);
      r.adopt(d);
      h.devices.push_back(u);
    }
  }
  if (const Json* reps = r.array("replicas")) {
    for (std::size_t i = 0; i < reps->size(); ++i) {
      Reader d = r.sub((*reps)[i], "replicas[" + std::to_string(i) + "].");
      ReplicaState s;
      s.replica = d.str("replica", true);
      s.state = d.str("state");
      r.adopt(d);
      h.replicas.push_back(std::move(s));
    }
  }
  return finish(std::move(h), r);
}

Parsed<ReplicaLaunch> parse_start_replica(const Json& m) {
  Reader r(m, "start_replica");
  ReplicaLaunch l;
  l.app = r.str("app", true);
  l.replica = r.str("replica", true);
  l.gpu_memory_mb = r.integer("gpu_memory_mb", 0, std::int64_t{1} << 40);
  l.device = static_cast<int>(r.integer("device", -1, kMaxInt));
  l.kind = r.str("kind");
  if (r.ok() && l.kind != "plain" && l.kind != "probe") r.fail("kind", "\"plain\" or \"probe\"");
  return finish(std::move(l), r);
}

Parsed<StopReplica> parse_stop_replica(const Json& m) {
  Reader r(m, "stop_replica");
  StopReplica s{r.str("replica", true)};
  return finish(std::move(s), r);
}

Parsed<ReplicaStarted> parse_replica_started(const Json& m) {
  Reader r(m, "replica_started");
  ReplicaStarted s;
  s.replica = r.str("replica", true);
  s.ok = r.boolean("ok");
  s.error = r.str("error");
  // Optional: older agents do not say what their replica holds.
  if (m.is_object() && m.contains("memory")) {
    s.memory = r.str("memory");
    if (r.ok() && s.memory != "device" && s.memory != "host" && !s.memory.empty())
      r.fail("memory", "\"device\", \"host\" or \"\"");
    s.bytes = r.integer("bytes", 0, kMaxI64);
  }
  return finish(std::move(s), r);
}

Parsed<Call> parse_call(const Json& m) {
  Reader r(m, "call");
  Call c;
  c.call_id = r.uinteger("call_id");
  c.replica = r.str("replica", true);
  if (const Json* p = r.any("payload")) c.payload = *p;
  return finish(std::move(c), r);
}

Parsed<CallResult> parse_call_result(const Json& m) {
  Reader r(m, "call_result");
  CallResult c;
  c.call_id = r.uinteger("call_id");
  c.replica = r.str("replica", true);
  if (const Json* p = r.any("result")) c.result = *p;
  return finish(std::move(c), r);
}

Parsed<Goodbye> parse_goodbye(const Json& m) {
  Reader r(m, "goodbye");
  Goodbye g{r.str("reason")};
  return finish(std::move(g), r);
}

Parsed<ErrorMessage> parse_error(const Json& m) {
  Reader r(m, "error");
  ErrorMessage e{r.str("reason")};
  return finish(std::move(e), r);
}

Json to_message(const Challenge& m) {
  Json j = typed("challenge");
  j["nonce"] = m.nonce;
  return j;
}

Json to_message(const Hello& m) {
  Json j = typed("hello");
  j["job_id"] = m.job_id;
  j["run_id"] = m.run_id;
  j["nonce"] = m.nonce;
  j["hmac"] = m.hmac;
  return j;
}

Json to_message(const Welcome& m) {
  Json j = typed("welcome");
  j["job_id"] = m.job_id;
  j["hmac"] = m.hmac;
  return j;
}

Json to_message(const AgentRegistration& m) {
  Json j = typed("register");
  j["job_id"] = m.job_id;
  j["hostname"] = m.hostname;
  j["ip"] = m.ip;
  j["pid"] = m.pid;
  j["resources"] = m.resources.is_object() ? m.resources : Json::object();
  j["cpus"] = m.cpus;
  j["memory_bytes"] = m.memory_bytes;
  Json devs = Json::array();
  for (const auto& d : m.devices) devs.push_back({{"index", d.index}, {"name", d.name}, {"total_mb", d.total_mb}});
  j["devices"] = std::move(devs);
  j["notice"] = m.notice;
  j["script_resources"] = m.script_resources;
  j["allocation"] = m.allocation;
  return j;
}

Json to_message(const Registered& m) {
  Json j = typed("registered");
  j["job_id"] = m.job_id;
  return j;
}

Json to_message(const Heartbeat& m) {
  Json j = typed("heartbeat");
  Json devs = Json::array();
  for (const auto& d : m.devices) devs.push_back({{"index", d.index}, {"used_bytes", d.used_bytes}});
  j["devices"] = std::move(devs);
  Json reps = Json::array();
  for (const auto& r : m.replicas) reps.push_back({{"replica", r.replica}, {"state", r.state}});
  j["replicas"] = std::move(reps);
  return j;
}

Json to_message(const ReplicaLaunch& m) {
  Json j = typed("start_replica");
  j["app"] = m.app;
  j["replica"] = m.replica;
  j["gpu_memory_mb"] = m.gpu_memory_mb;
  j["device"] = m.device;
  j["kind"] = m.kind;
  return j;
}

Json to_message(const StopReplica& m) {
  Json j = typed("stop_replica");
  j["replica"] = m.replica;
  return j;
}

Json to_message(const ReplicaStarted& m) {
  Json j = typed("replica_started");
  j["replica"] = m.replica;
  j["ok"] = m.ok;
  j["error"] = m.error;
  j["memory"] = m.memory;
  j["bytes"] = m.bytes;
  return j;
}

Json to_message(const Call& m) {
  Json j = typed("call");
  j["call_id"] = m.call_id;
  j["replica"] = m.replica;
  j["payload"] = m.payload;
  return j;
}

Json to_message(const CallResult& m) {
  Json j = typed("call_result");
  j["call_id"] = m.call_id;
  j["replica"] = m.replica;
  j["result"] = m.result;
  return j;
}

Json to_message(const Goodbye& m) {
  Json j = typed("goodbye");
  j["reason"] = m.reason;
  return j;
}

Json to_message(const ErrorMessage& m) {
  Json j = typed("error");
  j["reason"] = m.reason;
  return j;
}

Json drain_message() { return typed("drain"); }
Json ping_message() { return typed("ping"); }

}  // namespace vramsim::slurm
