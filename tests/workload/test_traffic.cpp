// Traffic processes (rates as specified, thinning for time-varying ones) and
// the request-trace readers: times, filters, scales, and errors that name
// the file, the line and the column.
#include "workload/traffic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <fstream>

#include "tests/support/test_dir.hpp"
#include "workload/traffic_trace.hpp"

namespace vramsim {
namespace {

using testing_support::TestDir;

std::vector<Duration> arrivals(const TrafficSpec& spec, std::size_t n, std::uint64_t seed = 7) {
  RandomStream rng(seed);
  TrafficSource src(spec, rng);
  std::vector<Duration> out;
  while (out.size() < n)
    if (auto a = src.next()) out.push_back(a->at);
    else break;
  return out;
}

TEST(Traffic, PoissonHasItsRateAndExponentialGaps) {
  TrafficSpec t;
  t.rate_per_s = 5;
  const auto a = arrivals(t, 200000);
  ASSERT_EQ(a.size(), 200000u);
  const double rate = static_cast<double>(a.size()) / to_seconds(a.back());
  EXPECT_NEAR(rate, 5, 5 * 0.01);
  // Exponential gaps: the coefficient of variation is 1.
  double sum = 0, sq = 0;
  for (std::size_t i = 1; i < a.size(); ++i) {
    const double g = to_seconds(a[i] - a[i - 1]);
    sum += g;
    sq += g * g;
  }
  const double n = static_cast<double>(a.size() - 1), mean = sum / n;
  EXPECT_NEAR(std::sqrt(sq / n - mean * mean) / mean, 1.0, 0.01);
}

TEST(Traffic, PiecewiseStepAndLinearRatesHoldPerSegment) {
  TrafficSpec t;
  t.process = TrafficSpec::Process::Piecewise;
  t.points = {{0, 2}, {1000 * kSecond, 10}, {2000 * kSecond, 0}};
  t.step = true;
  EXPECT_EQ(t.rate_at(500 * kSecond), 2);
  EXPECT_EQ(t.rate_at(1500 * kSecond), 10);
  t.step = false;
  EXPECT_DOUBLE_EQ(t.rate_at(500 * kSecond), 6);
  EXPECT_DOUBLE_EQ(t.rate_at(1500 * kSecond), 5);
  t.step = true;
  const auto a = arrivals(t, 100000);
  std::size_t first = 0, second = 0;
  for (Duration x : a) (x < 1000 * kSecond ? first : second)++;
  EXPECT_NEAR(static_cast<double>(first), 2000, 4 * std::sqrt(2000.0));
  EXPECT_NEAR(static_cast<double>(second), 10000, 4 * std::sqrt(10000.0));
  EXPECT_LE(a.back(), 2000 * kSecond) << "a rate of 0 from the last point on ends the traffic";
}

TEST(Traffic, DiurnalPeaksAndTroughsWhereTheSinusoidSays) {
  TrafficSpec t;
  t.process = TrafficSpec::Process::Diurnal;
  t.mean_rate_per_s = 10;
  t.amplitude = 0.8;
  t.period = 1000 * kSecond;
  EXPECT_NEAR(t.rate_at(250 * kSecond), 18, 1e-9);
  EXPECT_NEAR(t.rate_at(750 * kSecond), 2, 1e-9);
  const auto a = arrivals(t, 1000000);
  std::size_t peak = 0, trough = 0;  // 100 s around each, over every period
  for (Duration x : a) {
    const double ph = std::fmod(to_seconds(x), 1000);
    if (ph >= 200 && ph < 300) ++peak;
    if (ph >= 700 && ph < 800) ++trough;
  }
  const double periods = to_seconds(a.back()) / 1000;
  // The mean rate over [200, 300) is 10 (1 + 0.8 x 0.9836): 17.87 a second.
  EXPECT_NEAR(static_cast<double>(peak) / periods / 100, 10 * (1 + 0.8 * 0.98363), 0.3);
  EXPECT_NEAR(static_cast<double>(trough) / periods / 100, 10 * (1 - 0.8 * 0.98363), 0.3);
}

// The raised form: mean x r x ((1 + sin) / 2)^k. By hand, k is 0 at r = 1 and
// 1 at r = 2 (Wallis: the mean of (1 + sin) / 2 is 1/2), where the form is
// the sinusoid of amplitude 1; at r = 6, k = 10.6... as the ratio
// sqrt(pi) Gamma(k + 1) / Gamma(k + 1/2) gives.
TEST(Traffic, DiurnalPeakToMeanKeepsTheMeanAndReachesThePeak) {
  EXPECT_NEAR(diurnal_power(1), 0, 1e-12);
  EXPECT_NEAR(diurnal_power(2), 1, 1e-12);
  EXPECT_GT(diurnal_power(1.5), 0);
  EXPECT_LT(diurnal_power(1.5), 1) << "between the flat and the sinusoid";
  // k = 3: sqrt(pi) x 3! / Gamma(3.5) = 6 sqrt(pi) / (15 sqrt(pi) / 8) = 3.2.
  EXPECT_NEAR(diurnal_power(3.2), 3, 1e-10);
  EXPECT_THROW(diurnal_power(0.5), std::invalid_argument);
  for (double r : {1.0, 1.5, 3.2, 10.0, 100.0}) {
    TrafficSpec t;
    t.process = TrafficSpec::Process::Diurnal;
    t.mean_rate_per_s = 3;
    t.period = 1000 * kSecond;
    t.phase = 100 * kSecond;
    t.peak_to_mean = r;
    t.power = diurnal_power(r);
    // The mean over a period, by the midpoint rule on 10^5 steps.
    double sum = 0, top = 0;
    for (int i = 0; i < 100000; ++i) {
      const double v = t.rate_at(static_cast<Duration>((i + 0.5) * 10000));
      sum += v;
      top = std::max(top, v);
    }
    EXPECT_NEAR(sum / 100000, 3, 3e-9) << "peak_to_mean " << r;
    EXPECT_NEAR(t.peak_rate(), 3 * r, 1e-12);
    EXPECT_NEAR(t.rate_at(350 * kSecond), 3 * r, 1e-9) << "the peak a quarter period after the phase";
    EXPECT_LE(top, 3 * r * (1 + 1e-12));
  }
  // At 2 it is the sinusoid of amplitude 1, point by point.
  TrafficSpec raised, sine;
  raised.process = sine.process = TrafficSpec::Process::Diurnal;
  raised.peak_to_mean = 2;
  raised.power = diurnal_power(2);
  sine.amplitude = 1;
  for (int s = 0; s < 86400; s += 977)
    EXPECT_NEAR(raised.rate_at(s * kSecond), sine.rate_at(s * kSecond), 1e-9) << s;
}

TEST(Traffic, DiurnalPeakToMeanArrivalsFollowTheRate) {
  // r = 6 over periods of 1000 s at a mean of 10 a second: the count over
  // whole periods is the mean's, and a 50 s window at the peak holds r x the
  // mean x the window's mean of ((1 + sin) / 2)^k, integrated here.
  TrafficSpec t;
  t.process = TrafficSpec::Process::Diurnal;
  t.mean_rate_per_s = 10;
  t.period = 1000 * kSecond;
  t.peak_to_mean = 6;
  t.power = diurnal_power(6);
  const auto a = arrivals(t, 400000);
  const double periods = std::floor(to_seconds(a.back()) / 1000);
  std::size_t whole = 0, peak = 0;
  for (Duration x : a) {
    if (to_seconds(x) >= periods * 1000) break;
    ++whole;
    const double ph = std::fmod(to_seconds(x), 1000);
    if (ph >= 225 && ph < 275) ++peak;
  }
  const double expected = 10 * 1000 * periods;
  EXPECT_NEAR(static_cast<double>(whole), expected, 4 * std::sqrt(expected));
  double window = 0;
  for (int i = 0; i < 5000; ++i) window += t.rate_at(static_cast<Duration>((225 + (i + 0.5) * 0.01) * 1e6)) * 0.01;
  const double expected_peak = window * periods;
  EXPECT_NEAR(static_cast<double>(peak), expected_peak, 4 * std::sqrt(expected_peak));
  EXPECT_GT(window / 50, 50) << "the peak window runs near six times the mean";
}

TEST(Traffic, MaxRequestsStopsTheTraffic) {
  TrafficSpec t;
  t.max_requests = 17;
  EXPECT_EQ(arrivals(t, 100).size(), 17u);
}

TEST(TrafficTrace, UtcDatesAreSecondsSince1970) {
  EXPECT_EQ(*parse_utc_datetime("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(*parse_utc_datetime("2024-11-15 16:57:50"), 1731689870);
  EXPECT_NEAR(*parse_utc_datetime("2023-11-16 18:15:46.6805900"), 1700158546.68059, 1e-6);
  EXPECT_FALSE(parse_utc_datetime("2023-02-29 00:00:00")) << "not a leap year";
  EXPECT_TRUE(parse_utc_datetime("2024-02-29 00:00:00"));
  EXPECT_FALSE(parse_utc_datetime("2024-13-01 00:00:00"));
  EXPECT_FALSE(parse_utc_datetime("2024-11-15"));
  EXPECT_FALSE(parse_utc_datetime("2024-11-15 16:57:5x"));
}

TEST(TrafficTrace, Gentd26RequestsArriveInOrderWithTheirWorkAndAppFilter) {
  TestDir dir;
  TrafficTraceOptions o;
  o.format = "gentd26-requests";
  o.path = dir.write("r.csv",
                     "gmt_create,predict_type,predict_status,exec_time_seconds,groupId,prompt_length,"
                     "negative_prompt_length,num_images_per_prompt,num_inference_steps,checkpoint_model_version_id,"
                     "num_lora\n"
                     "2024-11-15 16:57:50,TXT_2_IMG,SUCCEED,32.0,G0,63.0,26.0,1.0,30.0,M0000,0\n"
                     "2024-11-15 16:58:00,TXT_2_IMG,FAILED,,G1,63.0,26.0,1.0,30.0,M0001,0\n"
                     "2024-11-15 16:57:55,TXT_2_IMG,SUCCEED,12.5,G2,63.0,26.0,1.0,30.0,M0000,0\n");
  TrafficSpec all = load_traffic_trace(o);
  ASSERT_EQ(all.requests.size(), 3u);
  EXPECT_EQ(all.requests[0].at, 0);
  EXPECT_EQ(all.requests[0].service, 32 * kSecond);
  EXPECT_EQ(all.requests[1].at, 5 * kSecond) << "sorted by arrival";
  EXPECT_EQ(all.requests[1].service, 12500 * kMillisecond);
  EXPECT_EQ(all.requests[2].service, -1) << "no execution time: drawn from service_time";
  o.app_column = "checkpoint_model_version_id";
  o.app_id = "M0000";
  o.time_scale = 2;
  TrafficSpec one = load_traffic_trace(o);
  ASSERT_EQ(one.requests.size(), 2u);
  EXPECT_EQ(one.requests[1].at, 10 * kSecond);
}

TEST(TrafficTrace, Gentd26QpsSumsTheContainersOfEachWindow) {
  TestDir dir;
  TrafficTraceOptions o;
  o.format = "gentd26-qps";
  o.path = dir.write("q.csv",
                     "timestamp_anon,value,container_ip,request_type\n"
                     "100.0,0.5,a,Generative Requests\n"
                     "100.0,0.25,b,Generative Requests\n"
                     "160.0,1.0,a,Generative Requests\n"
                     "160.0,9.0,,API Requests\n");
  o.filter["request_type"] = "Generative Requests";
  o.rate_scale = 2;
  const TrafficSpec t = load_traffic_trace(o);
  ASSERT_EQ(t.points.size(), 3u);
  EXPECT_DOUBLE_EQ(t.points[0].rate_per_s, 1.5);
  EXPECT_EQ(t.points[1].at, 60 * kSecond);
  EXPECT_DOUBLE_EQ(t.points[1].rate_per_s, 2.0);
  EXPECT_EQ(t.points[2].rate_per_s, 0) << "the last window ends the rate";
  EXPECT_TRUE(t.step);
}

TEST(TrafficTrace, AzureLlmWorkFollowsTheTokenModel) {
  TestDir dir;
  TrafficTraceOptions o;
  o.format = "azure-llm";
  o.path = dir.write("a.csv",
                     "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                     "2023-11-16 18:15:46.6805900,1000,100\n"
                     "2023-11-16 18:15:47.1805900,10,1\n");
  const TrafficSpec t = load_traffic_trace(o);
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(t.requests[1].at, 500 * kMillisecond);
  EXPECT_EQ(t.requests[0].service, seconds(0.05 + 0.0002 * 1000 + 0.02 * 100));
}

TEST(TrafficTrace, ErrorsNameTheFileTheLineAndTheColumn) {
  TestDir dir;
  TrafficTraceOptions o;
  o.format = "gentd26-requests";
  auto error = [&](const std::string& text) {
    o.path = dir.write("bad.csv", text);
    try {
      load_traffic_trace(o);
    } catch (const WorkloadError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string header = "gmt_create,exec_time_seconds\n";
  EXPECT_NE(error(header + "2024-11-15 16:57:50,1\n2024-11-15 99:00:00,2\n").find("bad.csv:3: gmt_create: expected a date"),
            std::string::npos);
  EXPECT_NE(error(header + "2024-11-15 16:57:50,-3\n").find("bad.csv:2: exec_time_seconds: expected a number"),
            std::string::npos);
  EXPECT_NE(error(header + "2024-11-15 16:57:50\n").find("bad.csv:2: row: expected 2 fields, got 1"),
            std::string::npos);
  EXPECT_NE(error("when,exec_time_seconds\n2024-11-15 16:57:50,1\n").find("gmt_create: no such column"),
            std::string::npos);
  EXPECT_NE(error(header).find("no request is left"), std::string::npos);
  o.path = dir.file("missing.csv");
  EXPECT_THROW(load_traffic_trace(o), WorkloadError);
}

}  // namespace
}  // namespace vramsim
