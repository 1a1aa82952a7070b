// vramsim-probe's command line (probe_cli.hpp), parsed without CLI11.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/probe_cli.hpp"

namespace vramsim::gpu {
namespace {

Expected<ProbeCommand> parse(std::vector<std::string> args) { return parse_probe_args(args); }

TEST(ProbeCli, NoArgumentsGiveTheDefaults) {
  const auto c = parse({});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->options.n, ProbeOptions{}.n);
  EXPECT_FALSE(c->detect);
  EXPECT_FALSE(c->help);
  EXPECT_FALSE(c->peak_for);
  EXPECT_EQ(c->json_out, "");
}

TEST(ProbeCli, ValuesBySpaceOrEqualsSign) {
  const auto c = parse({"--n", "4096", "--iterations=7", "-n=1024", "--sample-ms", "12.5", "--warmup-ms=0",
                        "--check-n", "64", "--samples", "3", "--warmup", "0", "--check-samples=4", "--json-out",
                        "out.json"});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->options.n, 1024);  // the last one wins
  EXPECT_EQ(c->options.iterations, 7);
  EXPECT_DOUBLE_EQ(c->options.sample_ms, 12.5);
  EXPECT_DOUBLE_EQ(c->options.warmup_ms, 0.0);
  EXPECT_EQ(c->options.check_n, 64);
  EXPECT_EQ(c->options.samples, 3);
  EXPECT_EQ(c->options.warmup, 0);
  EXPECT_EQ(c->options.check_samples, 4);
  EXPECT_EQ(c->json_out, "out.json");
  const auto d = parse({"-n", "33", "--detect", "--peak-for", "NVIDIA H100 PCIe"});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->options.n, 33);
  EXPECT_TRUE(d->detect);
  EXPECT_EQ(d->peak_for, "NVIDIA H100 PCIe");
}

TEST(ProbeCli, NegativeNumbersReachValidation) {
  const auto c = parse({"--n=-3", "--warmup", "-1"});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->options.n, -3);
  EXPECT_EQ(c->options.warmup, -1);
  EXPECT_TRUE(validate(c->options));
}

TEST(ProbeCli, MistakesAreOneLineNamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"--n", "abc"}, "--n: expected an integer, got 'abc'"},
      {{"--n", "12x"}, "--n: expected an integer, got '12x'"},
      {{"--n="}, "--n: expected an integer, got ''"},
      {{"--n", "99999999999999999999999"}, "--n: expected an integer, got '99999999999999999999999'"},
      {{"--sample-ms", "fast"}, "--sample-ms: expected a number, got 'fast'"},
      {{"--sample-ms", "inf"}, "--sample-ms: expected a number, got 'inf'"},
      {{"--json-out"}, "--json-out: expected a value FILE"},
      {{"--json-out", "--detect"}, "--json-out: expected a value FILE"},
      {{"--bogus"}, "unknown option '--bogus' (see --help)"},
      {{"extra-positional"}, "unexpected argument 'extra-positional' (options start with --)"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.args);
    ASSERT_FALSE(r) << c.args.front();
    EXPECT_EQ(r.error().kind, ErrorKind::InvalidArgument);
    EXPECT_EQ(r.error().message, c.message);
  }
}

TEST(ProbeCli, HelpListsEveryOptionAndTheExitStatuses) {
  const auto c = parse({"--help"});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->help);
  const std::string usage = probe_usage();
  for (const char* option : {"--n", "--iterations", "--warmup ", "--check-n", "--samples", "--sample-ms",
                             "--warmup-ms", "--check-samples", "--detect", "--json-out", "--peak-for", "--help"})
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  EXPECT_NE(usage.find("6 out of device memory"), std::string::npos);
}

}  // namespace
}  // namespace vramsim::gpu
