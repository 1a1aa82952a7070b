// Where the head listens and what agents dial (live/head_address.hpp): the
// choice from --bind, --advertise and --agent-port, and the refusals.
#include <gtest/gtest.h>

#include <boost/asio/ip/address_v4.hpp>

#include "live/head_address.hpp"
#include "live/live_run.hpp"

using namespace vramsim;

namespace {

HeadEndpoints choose(const std::string& bind, const std::string& advertise, unsigned short port = 0) {
  return choose_head_endpoints(bind, advertise, port, "login1.cluster.example");
}

std::string refusal(const std::string& bind, const std::string& advertise) {
  try {
    choose(bind, advertise);
  } catch (const LiveOptionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(HeadEndpoints, NeitherGivenDialsThisHostsNameAndListensEverywhere) {
  const auto e = choose("", "");
  EXPECT_EQ(e.advertise_host, "login1.cluster.example");
  EXPECT_EQ(e.bind, "0.0.0.0");
  EXPECT_EQ(e.status_bind, "127.0.0.1") << "the unauthenticated status listener stays on loopback";
  EXPECT_EQ(e.advertise_port, 0);
  EXPECT_EQ(e.listen_port, 0);
}

TEST(HeadEndpoints, ABindAddressAloneIsWhatAgentsDial) {
  const auto e = choose("10.1.2.3", "");
  EXPECT_EQ(e.bind, "10.1.2.3");
  EXPECT_EQ(e.advertise_host, "10.1.2.3");
  EXPECT_EQ(e.status_bind, "127.0.0.1") << "the status lines need no secret: loopback whatever --bind says";
  // A wildcard bind is not an address to dial: the host name is.
  EXPECT_EQ(choose("0.0.0.0", "").advertise_host, "login1.cluster.example");
}

TEST(HeadEndpoints, AdvertiseAloneListensEverywhereAndItsPortIsTheListenPort) {
  auto e = choose("", "head.example:7001");
  EXPECT_EQ(e.advertise_host, "head.example");
  EXPECT_EQ(e.advertise_port, 7001);
  EXPECT_EQ(e.listen_port, 7001);
  EXPECT_EQ(e.bind, "0.0.0.0");
  // --agent-port wins for listening (a port forwarded to another one).
  e = choose("", "head.example:7001", 6000);
  EXPECT_EQ(e.listen_port, 6000);
  EXPECT_EQ(e.advertise_port, 7001);
  e = choose("127.0.0.1", "node-gw");
  EXPECT_EQ(e.bind, "127.0.0.1");
  EXPECT_EQ(e.advertise_host, "node-gw");
  EXPECT_EQ(e.advertise_port, 0);
  EXPECT_EQ(choose("", "[fd00::1]:9000").advertise_host, "fd00::1");
  EXPECT_EQ(choose("", "fd00::1").advertise_host, "fd00::1");
}

TEST(HeadEndpoints, ABindNameIsResolved) {
  EXPECT_EQ(choose("localhost", "").bind.rfind("127.", 0) == 0 || choose("localhost", "").bind == "::1", true);
}

TEST(HeadEndpoints, BadValuesNameTheOption) {
  EXPECT_NE(refusal("", "head:0").find("--advertise 'head:0': expected a port in 1..65535"), std::string::npos);
  EXPECT_NE(refusal("", "head:70000").find("expected a port in 1..65535"), std::string::npos);
  EXPECT_NE(refusal("", "head:").find("expected a port"), std::string::npos);
  EXPECT_NE(refusal("", "bad host").find("--advertise 'bad host': expected HOST or HOST:PORT"), std::string::npos);
  EXPECT_NE(refusal("", "0.0.0.0").find("cannot dial a wildcard"), std::string::npos);
  EXPECT_NE(refusal("", "[fd00::1").find("expected [ADDRESS]:PORT"), std::string::npos);
  EXPECT_NE(refusal("no such host.invalid", "").find("--bind 'no such host.invalid'"), std::string::npos);
  EXPECT_NE(refusal("nosuchhost.invalid", "").find("does not resolve"), std::string::npos);
}

TEST(HeadEndpoints, AWarningWhenTheAdvertisedNameIsLoopbackHere) {
  EXPECT_NE(advertise_warning("localhost").find("resolves to"), std::string::npos);
  EXPECT_NE(advertise_warning("nosuchhost.invalid").find("does not resolve"), std::string::npos);
  EXPECT_EQ(advertise_warning("192.0.2.7"), "") << "an address of another host is not loopback";
}

TEST(HeadEndpoints, AHostWhoseNameDoesNotResolveHasAnAddressToAdvertise) {
  EXPECT_TRUE(resolves("localhost"));
  EXPECT_FALSE(resolves("nosuchhost.invalid"));
  const std::string a = this_host_address();
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address_v4(a, ec);
  EXPECT_FALSE(ec) << a;
  // Loopback only where the host has no other interface up.
  EXPECT_TRUE(!addr.is_loopback() || a == "127.0.0.1") << a;
}
