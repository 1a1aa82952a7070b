// The agent protocol's building blocks: framing, HMAC, secret file, parsing.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/slurm/ids.hpp"
#include "backends/slurm/protocol.hpp"

namespace vramsim::slurm {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "vramsim-live-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string write(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(LineSplitter, SplitsAcrossFeedsAndDropsCarriageReturns) {
  LineSplitter s(16);
  EXPECT_TRUE(s.feed("{\"a\":1}\r\n{\"b\""));
  EXPECT_EQ(s.next_line(), std::optional<std::string>("{\"a\":1}"));
  EXPECT_FALSE(s.next_line());
  EXPECT_TRUE(s.feed(":2}\n\n"));
  EXPECT_EQ(s.next_line(), std::optional<std::string>("{\"b\":2}"));
  EXPECT_EQ(s.next_line(), std::optional<std::string>(""));
  EXPECT_FALSE(s.next_line());
}

TEST(LineSplitter, LineOfExactlyTheLimitPassesOneMoreByteFailsForGood) {
  LineSplitter s(8);
  EXPECT_TRUE(s.feed(std::string(8, 'x') + "\n"));
  EXPECT_EQ(s.next_line(), std::optional<std::string>(std::string(8, 'x')));
  EXPECT_TRUE(s.feed("yyyy"));
  EXPECT_FALSE(s.feed("yyyyy"));  // 9 bytes pending, no newline yet
  EXPECT_TRUE(s.overflowed());
  EXPECT_FALSE(s.feed("\n{}\n"));
  EXPECT_FALSE(s.next_line());
}

TEST(LineSplitter, KeepsLinesCompletedBeforeAnOversizedOne) {
  LineSplitter s(4);
  EXPECT_FALSE(s.feed("ab\ncdefgh"));
  EXPECT_EQ(s.next_line(), std::optional<std::string>("ab"));
  EXPECT_FALSE(s.next_line());
}

TEST(Hmac, MatchesRfc4231TestCase1) {
  const std::string key(20, '\x0b');
  EXPECT_EQ(hmac_sha256_hex(key, "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

HandshakeIds some_ids() { return {make_nonce(), make_nonce(), "1000", "run-1"}; }

TEST(Handshake, EachProofAcceptsTheRightSecretAndIdsOnly) {
  const std::string secret = "0123456789abcdef0123";
  const HandshakeIds ids = some_ids();
  const std::string proof = agent_proof(secret, ids);
  EXPECT_EQ(proof, hmac_sha256_hex(secret, "vramsim-live-1 agent hello\n" + ids.head_nonce + "\n" +
                                               ids.agent_nonce + "\n1000\nrun-1"));
  EXPECT_TRUE(proof_matches(agent_proof(secret, ids), proof));
  EXPECT_FALSE(proof_matches(agent_proof("another-secret-of-20", ids), proof));
  for (auto change : {&HandshakeIds::head_nonce, &HandshakeIds::agent_nonce, &HandshakeIds::job_id,
                      &HandshakeIds::run_id}) {
    HandshakeIds other = ids;
    other.*change += "0";
    EXPECT_FALSE(proof_matches(agent_proof(secret, other), proof)) << "each id is bound";
  }
  EXPECT_FALSE(proof_matches(agent_proof(secret, ids), proof.substr(2)));
  EXPECT_FALSE(proof_matches(agent_proof(secret, ids), std::string(64, 'z')));
}

TEST(Handshake, NoProofOrKeyServesAsAnother) {
  // An impostor head that collects an agent's proof holds no head proof and
  // no session key: each is its own label over the same ids.
  const std::string secret = "0123456789abcdef0123";
  const HandshakeIds ids = some_ids();
  const std::string a = agent_proof(secret, ids), h = head_proof(secret, ids), k = to_hex(session_key(secret, ids));
  EXPECT_NE(a, h);
  EXPECT_NE(a, k);
  EXPECT_NE(h, k);
  EXPECT_FALSE(proof_matches(h, a));
}

TEST(MessageSeal, EachSideOpensWhatTheOtherSealedInOrder) {
  const std::string key = session_key("0123456789abcdef0123", some_ids());
  MessageSeal head(key, Sender::Head), agent(key, Sender::Agent);
  for (int i = 0; i < 3; ++i) {
    Json m = head.seal(drain_message());
    EXPECT_EQ(m["seq"], i);
    // Through the wire and back, as the receiver sees it.
    Json got = parse_line(encode_line(m).substr(0, encode_line(m).size() - 1)).value;
    EXPECT_EQ(agent.open(got), "");
    EXPECT_EQ(got, drain_message()) << "seq and mac are stripped";
  }
  Heartbeat hb;
  hb.devices = {{0, 1234}};
  Json up = agent.seal(to_message(hb));
  EXPECT_EQ(head.open(up), "");
  EXPECT_EQ(head.next_to_receive(), 1u);
}

TEST(MessageSeal, RefusesUnsealedForgedReplayedAndReflectedLines) {
  const std::string key = session_key("0123456789abcdef0123", some_ids());
  MessageSeal head(key, Sender::Head), agent(key, Sender::Agent);
  Json plain = drain_message();
  EXPECT_EQ(agent.open(plain), "no MAC");
  Json first = head.seal(to_message(StopReplica{"a#0"}));
  Json forged = first;
  forged["replica"] = "b#0";  // the body changed, the MAC kept
  EXPECT_EQ(agent.open(forged), "wrong MAC");
  Json other_key = MessageSeal(session_key("another-secret-of-20", some_ids()), Sender::Head).seal(drain_message());
  EXPECT_EQ(agent.open(other_key), "wrong MAC");
  Json kept = first;
  EXPECT_EQ(agent.open(first), "");
  EXPECT_EQ(agent.open(kept), "replayed or out of order: seq 0, expected 1");
  // The agent's own sealed line sent back to it is the wrong direction.
  Json mine = agent.seal(drain_message());
  EXPECT_EQ(agent.open(mine), "wrong MAC");
  // Refused lines do not move the sequence: the head's next line still opens.
  Json next = head.seal(drain_message());
  EXPECT_EQ(agent.open(next), "");
  Json bad_type = head.seal(drain_message());
  bad_type["seq"] = "1";
  EXPECT_EQ(agent.open(bad_type), "wrong MAC");
}

TEST(Nonce, IsFreshHex) {
  const std::string a = make_nonce(), b = make_nonce();
  EXPECT_EQ(a.size(), 2 * kNonceBytes);
  ASSERT_TRUE(from_hex(a));
  EXPECT_NE(a, b);
}

TEST(SecretFile, Mode0600IsReadWithoutTrailingNewline) {
  TempDir d;
  auto p = write(d.file("secret"), "s3cr3t-s3cr3t-s3cr3t\n", 0600);
  EXPECT_EQ(read_secret_file(p), "s3cr3t-s3cr3t-s3cr3t");
  ::chmod(p.c_str(), 0400);
  EXPECT_EQ(read_secret_file(p), "s3cr3t-s3cr3t-s3cr3t");
}

TEST(SecretFile, LooserModesAreRefusedNamingThePath) {
  TempDir d;
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    auto p = write(d.file("secret"), "s3cr3t-s3cr3t-s3cr3t\n", mode);
    try {
      read_secret_file(p);
      ADD_FAILURE() << "mode " << std::oct << mode << " accepted";
    } catch (const SecretFileError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected 0600"), std::string::npos) << e.what();
    }
  }
}

TEST(SecretFile, MissingShortAndSymlinkedFilesAreRefused) {
  TempDir d;
  EXPECT_THROW(read_secret_file(d.file("absent")), SecretFileError);
  auto shortp = write(d.file("short"), "tiny\n", 0600);
  EXPECT_THROW(read_secret_file(shortp), SecretFileError);
  auto real = write(d.file("real"), "s3cr3t-s3cr3t-s3cr3t\n", 0600);
  std::filesystem::create_symlink(real, d.file("link"));
  EXPECT_THROW(read_secret_file(d.file("link")), SecretFileError);
}

TEST(Ids, OneRuleForIdsANarrowerOneForRunIds) {
  EXPECT_TRUE(valid_id("probe#0"));
  EXPECT_TRUE(valid_id(std::string(128, 'a')));
  for (const std::string& bad : {std::string(), std::string(129, 'a'), std::string("a b"), std::string("a\tb"),
                                std::string("caf\xc3\xa9")}) {
    EXPECT_FALSE(valid_id(bad)) << bad;
    EXPECT_EQ(id_problem(bad), "expected 1..128 printable ASCII characters, no spaces");
  }
  EXPECT_EQ(run_id_problem("run-1.a_b"), "");
  EXPECT_EQ(run_id_problem(""), "expected a non-empty run id");
  EXPECT_EQ(run_id_problem(std::string(65, 'a')), "expected at most 64 characters, got 65");
  EXPECT_EQ(run_id_problem("-x"), "expected a run id that does not start with '-' or '.'");
  EXPECT_EQ(run_id_problem("a#1"), "expected only letters, digits, '.', '_' and '-'");
  // Every run id is an id.
  EXPECT_TRUE(valid_id(std::string(64, 'z')));
}

TEST(Messages, ParseLineRefusesWhatIsNotATypedObject) {
  EXPECT_NE(parse_line("{not json").error.find("not JSON"), std::string::npos);
  EXPECT_NE(parse_line("[1,2]").error.find("not a JSON object"), std::string::npos);
  EXPECT_NE(parse_line("{\"kind\":\"hello\"}").error.find("'type'"), std::string::npos);
  EXPECT_TRUE(parse_line("{\"type\":\"drain\"}"));
}

TEST(Messages, HelloNamesTheBadField) {
  auto m = parse_line(R"({"type":"hello","job_id":"1000","run_id":"r1"})").value;
  auto h = parse_hello(m);
  EXPECT_FALSE(h);
  EXPECT_EQ(h.error, "malformed message: field 'nonce' of hello: missing");
  m["nonce"] = "abc";
  EXPECT_EQ(parse_hello(m).error, "malformed message: field 'nonce' of hello: expected 64 hex digits");
  m["nonce"] = make_nonce();
  EXPECT_EQ(parse_hello(m).error, "malformed message: field 'hmac' of hello: missing");
  m["hmac"] = std::string(64, 'a');
  m["job_id"] = "10 00";
  EXPECT_NE(parse_hello(m).error.find("field 'job_id' of hello: expected an id"), std::string::npos);
  m["job_id"] = "1000";
  EXPECT_TRUE(parse_hello(m));
}

TEST(Messages, WelcomeRoundTripsAndWantsAProof) {
  Welcome w{"1000", std::string(64, 'b')};
  auto back = parse_welcome(to_message(w));
  ASSERT_TRUE(back) << back.error;
  EXPECT_EQ(back.value.job_id, "1000");
  EXPECT_EQ(back.value.hmac, w.hmac);
  Json m = to_message(w);
  m["hmac"] = "zz";
  EXPECT_EQ(parse_welcome(m).error, "malformed message: field 'hmac' of welcome: expected 64 hex digits");
}

TEST(Messages, RegisterRoundTripsAndChecksNestedFields) {
  AgentRegistration r;
  r.job_id = "77";
  r.hostname = "node-1";
  r.ip = "127.0.0.1";
  r.pid = 42;
  r.resources = Json{{"slurm_job_id:77", 1}, {"VRAM_MB", 40960}};
  r.cpus = 8;
  r.memory_bytes = std::int64_t{1} << 36;
  r.devices = {{0, "NVIDIA A100-SXM4-40GB", 40960}};
  r.script_resources = "{\"slurm_job_id:77\": 1}";
  auto line = encode_line(to_message(r));
  ASSERT_EQ(line.back(), '\n');
  auto back = parse_register(parse_line(line.substr(0, line.size() - 1)).value);
  ASSERT_TRUE(back) << back.error;
  EXPECT_EQ(back.value.devices.at(0).name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(back.value.devices.at(0).total_mb, 40960);
  EXPECT_EQ(back.value.resources["VRAM_MB"], 40960);
  EXPECT_EQ(back.value.memory_bytes, std::int64_t{1} << 36);

  Json bad = to_message(r);
  bad["devices"][0]["total_mb"] = "lots";
  EXPECT_EQ(parse_register(bad).error,
            "malformed message: field 'devices[0].total_mb' of register: expected an integer");
  bad = to_message(r);
  bad["resources"]["VRAM_MB"] = -1;
  EXPECT_NE(parse_register(bad).error.find("resources.VRAM_MB"), std::string::npos);
}

TEST(Messages, StartReplicaChecksKindAndDevice) {
  ReplicaLaunch l{"probe", "probe#1", 8000, 0, "probe"};
  auto back = parse_start_replica(to_message(l));
  ASSERT_TRUE(back);
  EXPECT_EQ(back.value.gpu_memory_mb, 8000);
  EXPECT_EQ(back.value.kind, "probe");
  Json m = to_message(l);
  m["kind"] = "gpu";
  EXPECT_NE(parse_start_replica(m).error.find("'kind'"), std::string::npos);
  m = to_message(l);
  m["device"] = -2;
  EXPECT_NE(parse_start_replica(m).error.find("'device'"), std::string::npos);
}

TEST(Messages, HeartbeatAndCallResultRoundTrip) {
  Heartbeat h{{{0, 1234LL << 20}}, {{"r1", "running"}}};
  auto hb = parse_heartbeat(to_message(h));
  ASSERT_TRUE(hb);
  EXPECT_EQ(hb.value.devices.at(0).used_bytes, 1234LL << 20);
  EXPECT_EQ(hb.value.replicas.at(0).state, "running");
  CallResult c{9, "r1", Json{{"error", "no CUDA device visible: x"}}};
  auto cr = parse_call_result(to_message(c));
  ASSERT_TRUE(cr);
  EXPECT_EQ(cr.value.call_id, 9u);
  EXPECT_EQ(cr.value.result["error"], "no CUDA device visible: x");
  Json m = to_message(c);
  m["call_id"] = -1;
  EXPECT_FALSE(parse_call_result(m));
}

}  // namespace
}  // namespace vramsim::slurm
