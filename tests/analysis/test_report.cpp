// vramsim report: time to RUNNING, policy labels, CSV reading (quotes
// included), and what the plots draw: the data files and gnuplot scripts
// build_report writes (series, ranges, styles, axes, SLO lines) and the
// summary's words for what is not drawn.
#include "analysis/report.hpp"
#include "engine/stats.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "runner/simulation.hpp"
#include "runner/sweep.hpp"
#include "tests/support/test_dir.hpp"

namespace vramsim {
namespace {

TraceEvent ev(SimTime t, const std::string& kind, Json fields = Json::object()) {
  return TraceEvent{t, trace_kind_named(kind).value(), std::move(fields)};
}

// A folder of this test program's own (made at its first use), removed with
// everything in it when the program exits.
const std::filesystem::path& temp_dir() {
  static const testing_support::TestDir dir;
  return dir.path();
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

const std::string& file_of(const ReportFiles& r, const std::string& name) {
  for (const auto& [n, text] : r.files)
    if (n == name) return text;
  static const std::string none = "(no such file)";
  ADD_FAILURE() << "the report has no file " << name;
  return none;
}
bool has_file(const ReportFiles& r, const std::string& name) {
  for (const auto& f : r.files)
    if (f.first == name) return true;
  return false;
}

// The plot command's series: the text between "plot " and the end of the
// line, split at the commas that start a new series.
std::vector<std::string> series_of(const std::string& script) {
  const auto at = script.find("\nplot ");
  EXPECT_NE(at, std::string::npos) << script;
  if (at == std::string::npos) return {};
  const std::string line = script.substr(at + 6, script.find('\n', at + 1) - at - 6);
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

std::pair<double, double> yrange_of(const std::string& script) {
  std::smatch m;
  const std::regex re(R"(set yrange \[([-0-9.]+):([-0-9.]+)\])");
  EXPECT_TRUE(std::regex_search(script, m, re)) << script;
  return {std::stod(m[1]), std::stod(m[2])};
}

// The first column of a data file's rows.
std::vector<double> first_column(const std::string& dat) {
  std::vector<double> out;
  std::istringstream in(dat);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(std::stod(line));
  return out;
}

TEST(Report, PolicyLabelNamesThePresetOrTheMix) {
  EXPECT_EQ(policy_label(Json{{"admission", "legacy"}, {"autoscaler", "legacy"}}), "legacy");
  EXPECT_EQ(policy_label(Json{{"admission", "legacy"}, {"autoscaler", "fixed"}}), "admission=legacy,autoscaler=fixed");
  EXPECT_EQ(policy_label(Json()), "default");
}

TEST(Report, TimeToRunningFromTheFirstDeployToTheFirstRunning) {
  const std::vector<TraceEvent> events = {
      ev(0, "run_started", {{"scenario", "s"}, {"seed", 3}, {"policies", {{"a", "fixed"}}}}),
      ev(10'000'000, "deploy_requested", {{"app", "x"}}),
      ev(12'000'000, "deploy_requested", {{"app", "y"}}),
      ev(20'000'000, "deploy_requested", {{"app", "x"}}),  // a redeploy: the first request counts
      ev(70'500'000, "app_state", {{"app", "x"}, {"to", "RUNNING"}}),
      ev(90'000'000, "app_state", {{"app", "x"}, {"to", "RUNNING"}}),
      ev(95'000'000, "app_state", {{"app", "y"}, {"to", "DEPLOY_FAILED"}})};
  const TracedRun r = traced_run("t.jsonl", events);
  EXPECT_EQ(r.scenario, "s");
  EXPECT_EQ(r.seed, 3u);
  EXPECT_EQ(r.policies, "fixed");
  ASSERT_EQ(r.apps.size(), 2u);
  EXPECT_EQ(r.apps[0].app, "x");
  ASSERT_TRUE(r.apps[0].to_running_s);
  EXPECT_DOUBLE_EQ(*r.apps[0].to_running_s, 60.5);
  EXPECT_FALSE(r.apps[1].to_running_s) << "y never ran";
  EXPECT_THROW(traced_run("t.jsonl", {ev(0, "deploy_requested", {{"app", "x"}})}), ReportInputError);
}

TEST(Report, EcdfCountsAppsThatNeverRanInTheTotal) {
  const auto c = ecdf({30, 10, 20}, 4);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], std::make_pair(10.0, 0.25));
  EXPECT_EQ(c[2], std::make_pair(30.0, 0.75));
  EXPECT_TRUE(ecdf({}, 0).empty());
  EXPECT_EQ(nearest_rank_percentile({5, 1, 4, 2, 3}, 50), 3);
  EXPECT_EQ(nearest_rank_percentile({5, 1, 4, 2, 3}, 95), 5);
  EXPECT_EQ(nearest_rank_percentile({7}, 1), 7);
  EXPECT_EQ(nearest_rank_percentile({}, 50), std::nullopt);
}

TEST(Report, CsvRecordsKeepQuotedCommasQuotesAndNewlines) {
  std::istringstream in("a,\"b,c\",\"d\"\"e\"\n\"two\nlines\",x,\n\nlast\r\n");
  std::vector<std::string> cells;
  std::size_t line = 0;
  ASSERT_TRUE(read_csv_record(in, cells, line, "f.csv"));
  EXPECT_EQ(cells, (std::vector<std::string>{"a", "b,c", "d\"e"}));
  ASSERT_TRUE(read_csv_record(in, cells, line, "f.csv"));
  EXPECT_EQ(cells, (std::vector<std::string>{"two\nlines", "x", ""}));
  EXPECT_EQ(line, 3u) << "a quoted newline counts as a line";
  ASSERT_TRUE(read_csv_record(in, cells, line, "f.csv"));
  EXPECT_EQ(cells, std::vector<std::string>{""});
  ASSERT_TRUE(read_csv_record(in, cells, line, "f.csv"));
  EXPECT_EQ(cells, std::vector<std::string>{"last"}) << "a CRLF line end is no part of the field";
  EXPECT_FALSE(read_csv_record(in, cells, line, "f.csv"));
  std::istringstream open_quote("ok\n1,\"never closed\n2\n");
  line = 0;
  ASSERT_TRUE(read_csv_record(open_quote, cells, line, "g.csv"));
  try {
    read_csv_record(open_quote, cells, line, "g.csv");
    FAIL() << "an open quote was read";
  } catch (const ReportInputError& e) {
    EXPECT_EQ(std::string(e.what()), "g.csv: line 2: a quoted field is not closed (expected '\"')");
  }
}

// The CSV a sweep writes for JSON parameter values (quoted, with commas and
// doubled quotes) reads back as the values and rows it holds.
TEST(Report, SweepCsvWithJsonValuesAsTheSweepWritesIt) {
  const char* base = R"({"name": "q", "seed": 1, "horizon": "10m",
    "cluster": {"max_workers": 1,
      "partition": [{"count": 1, "cpus": 16, "memory_gb": 64, "gpus": 1, "gpu": "A100-SXM4-40GB"}]},
    "apps": [{"id": "a", "gpu_memory_mb": 8000, "deploy_at": "0s"}]})";
  SweepGrid g;
  g.params.push_back(parse_set(R"(cluster.latency.queue_wait={"dist":"exponential","mean":"60s"},5s)"));
  g.seeds = parse_seeds("1..3");
  std::string csv = sweep_csv_header(g);
  for (const auto& row : run_sweep(g, expand_scenarios(Json::parse(base), "q.json", g), 0, g.size(), 1)) csv += row;
  ASSERT_NE(csv.find("\"{\"\"dist\"\""), std::string::npos) << "the sweep quotes a JSON value: " << csv;
  const SweepTable t = read_sweep_csv(temp_file("json-values.csv", csv));
  EXPECT_EQ(t.params, std::vector<std::string>{"cluster.latency.queue_wait"});
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(t.rows[0].at("cluster.latency.queue_wait"), R"({"dist":"exponential","mean":"60s"})");
  EXPECT_EQ(t.rows[5].at("cluster.latency.queue_wait"), "5s");
  EXPECT_EQ(t.rows[4].at("seed"), "2");
  EXPECT_NE(std::find(t.metrics.begin(), t.metrics.end(), "events"), t.metrics.end());
}

TEST(Report, StatusTimelinePerNodeInFirstSeenOrder) {
  const auto path = temp_file("timeline.csv",
                              "time_s,node,used_gpu,used_vram_mb,total_vram_mb,used_cpu\n"
                              "10.000,node-2,0,0,81920,0\n10.000,node-1,1,8000,81920,1\n"
                              "20.000,node-2,1,16000,81920,1\n20.000,node-1,0,0,81920,0\n"
                              "20.000,head,0,0,0,0\n");
  const auto s = read_status_timeline(path);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].node, "node-2");
  EXPECT_EQ(s[0].peak, 16000);
  EXPECT_EQ(s[0].offered, 81920);
  EXPECT_TRUE(s[0].tracked());
  EXPECT_FALSE(s[2].tracked()) << "no VRAM_MB advertised";
  ASSERT_EQ(s[1].points.size(), 2u);
  EXPECT_EQ(s[1].points[0], std::make_pair(10.0, 8000.0));
  const auto bad = temp_file("timeline-bad.csv",
                             "time_s,node,used_gpu,used_vram_mb,total_vram_mb,used_cpu\n10.000,node-1,0,lots,0,0\n");
  try {
    read_status_timeline(bad);
    FAIL() << "a non-number was read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("timeline-bad.csv: line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("used_vram_mb"), std::string::npos) << e.what();
  }
}

TEST(Report, SweepCurveIsTheMeanOverSeedsPerValue) {
  const auto path = temp_file("sweep.csv",
                              "max_workers,seed,held,p95_s,note\n"
                              "2,1,true,100,a\n2,2,true,200,b\n1,1,false,50,c\n1,2,false,,d\n");
  const SweepTable t = read_sweep_csv(path);
  EXPECT_EQ(t.params, std::vector<std::string>{"max_workers"});
  EXPECT_EQ(t.metrics, std::vector<std::string>{"p95_s"}) << "only columns with numbers are metrics";
  const auto c = sweep_curve(t, "max_workers", "p95_s");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], std::make_pair(std::string("2"), 150.0));
  EXPECT_EQ(c[1], std::make_pair(std::string("1"), 50.0)) << "an empty cell is not a zero";
  EXPECT_THROW(read_sweep_csv(temp_file("noseed.csv", "a,b\n1,2\n")), ReportInputError);
  try {
    read_sweep_csv(temp_file("short.csv", "p,seed,m\n1,1\n"));
    FAIL() << "a short row was read";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.csv: line 2: expected 3 columns, found 2"), std::string::npos)
        << e.what();
  }
}

TEST(Report, SweepCurvesOnePerValueOfTheOtherParameters) {
  const auto path = temp_file("sweep2.csv",
                              "max_workers,policies,seed,p95_s\n"
                              "1,legacy,1,10\n1,legacy,2,20\n1,fixed,1,5\n"
                              "2,legacy,1,4\n2,fixed,1,2\n2,fixed,2,4\n");
  const SweepTable t = read_sweep_csv(path);
  const auto c = sweep_curves(t, "max_workers", "p95_s");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].label, "policies=legacy");
  EXPECT_EQ(c[0].points, (std::vector<std::pair<std::string, double>>{{"1", 15.0}, {"2", 4.0}}));
  EXPECT_EQ(c[1].label, "policies=fixed");
  EXPECT_EQ(c[1].points, (std::vector<std::pair<std::string, double>>{{"1", 5.0}, {"2", 3.0}}));
  ASSERT_EQ(c[0].spread.size(), 2u);
  EXPECT_EQ(c[0].spread[0].n, 2u);
  EXPECT_EQ(c[0].spread[0].p5, 10);
  EXPECT_EQ(c[0].spread[0].p95, 20);
  const auto single = sweep_curves(read_sweep_csv(temp_file("sweep1.csv", "n,seed,m\n1,1,2\n2,1,3\n")), "n", "m");
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].label, "");
}

TEST(Report, SpreadHasTheMeanItsIntervalAndPercentiles) {
  const Spread s = spread_of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  // sd = sqrt(32/7); t(7) = 2.365
  EXPECT_NEAR(s.ci, 2.365 * std::sqrt(32.0 / 7) / std::sqrt(8.0), 1e-9);
  EXPECT_EQ(s.p5, 2);
  EXPECT_EQ(s.p50, 4);
  EXPECT_EQ(s.p95, 9);
  EXPECT_EQ(spread_of({3}).ci, 0) << "one value has no interval";
}

TEST(Report, AxesRangesAndStyles) {
  EXPECT_EQ(time_unit(300).name, "s");
  EXPECT_EQ(time_unit(3000).name, "min");
  EXPECT_EQ(time_unit(18000).name, "h");
  EXPECT_EQ(time_unit(18000).seconds, 3600);
  EXPECT_EQ(y_range(10800, 11150).first, 0) << "from 0";
  EXPECT_DOUBLE_EQ(y_range(10800, 11150).second, 11150 * 1.1) << "with headroom";
  EXPECT_EQ(y_range(0, 0), std::make_pair(0.0, 1.0));
  EXPECT_LT(y_range(-5, 10).first, -5);
  std::set<std::string> styles;
  for (std::size_t k = 0; k < 40; ++k) styles.insert(series_style(k));
  EXPECT_EQ(styles.size(), 40u) << "no two of 40 series look alike";
  EXPECT_EQ(parse_slo("ttr_p95_s=600"), std::make_pair(std::string("ttr_p95_s"), 600.0));
  EXPECT_THROW(parse_slo("ttr_p95_s"), ReportInputError);
  EXPECT_THROW(parse_slo("ttr_p95_s=soon"), ReportInputError);
  EXPECT_THROW(parse_slo("=5"), ReportInputError);
}

NodeSeries node(const std::string& id, double offered, std::vector<std::pair<double, double>> points) {
  NodeSeries s{id, std::move(points), 0, offered};
  for (const auto& p : s.points) s.peak = std::max(s.peak, p.second);
  return s;
}

TEST(ReportPlots, TimelineHasHeadroomOfferedLinesRelativeTimeAndNoUntrackedNodes) {
  ReportInputs in;
  in.title = "t";
  in.timelines.push_back({"timeline-fixed",
                          {node("head", 0, {{612000, 0}, {630000, 0}}),
                           node("node-1", 81920, {{612000, 0}, {615000, 80000}, {630000, 80000}}),
                           node("node-2", 40960, {{612060, 8000}, {630000, 8000}})}});
  const ReportFiles r = build_report(in, {});
  ASSERT_EQ(r.scripts, std::vector<std::string>{"vram-timeline-fixed"});
  const std::string& gp = file_of(r, "vram-timeline-fixed.gp");
  const auto series = series_of(gp);
  ASSERT_EQ(series.size(), 4u) << "two nodes and two offered lines: " << gp;
  EXPECT_EQ(gp.find("\"head\""), std::string::npos) << "an untracked node is not drawn as 0: " << gp;
  EXPECT_FALSE(has_file(r, "vram-timeline-fixed-head.dat"));
  EXPECT_NE(series[2].find("40960 with lines dt 2"), std::string::npos) << series[2];
  EXPECT_NE(series[3].find("81920 with lines dt 2"), std::string::npos) << series[3];
  const auto [lo, hi] = yrange_of(gp);
  EXPECT_EQ(lo, 0);
  EXPECT_GE(hi, 81920 * 1.05) << "the offered line and the peak stay below the frame";
  EXPECT_NE(gp.find("set xlabel \"h since the first sample (t = 612000 s of the run)\""), std::string::npos) << gp;
  const auto t = first_column(file_of(r, "vram-timeline-fixed-node-1.dat"));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[2], 5) << "18000 s after the start, in hours";
  EXPECT_NEAR(first_column(file_of(r, "vram-timeline-fixed-node-2.dat"))[0], 60.0 / 3600, 1e-4);
  EXPECT_NE(r.markdown.find("VRAM_MB not advertised (booking not tracked, not drawn): head."), std::string::npos)
      << r.markdown;
}

TEST(ReportPlots, NoPlotWhereNoNodeTracksVram) {
  ReportInputs in;
  in.timelines.push_back({"timeline-legacy", {node("node-1", 0, {{0, 0}, {10, 0}}), node("node-2", 0, {{0, 0}})}});
  in.timelines.push_back({"timeline-fixed", {node("node-1", 81920, {{0, 0}, {10, 16000}})}});
  const ReportFiles r = build_report(in, {});
  EXPECT_EQ(r.scripts, std::vector<std::string>{"vram-timeline-fixed"});
  EXPECT_NE(r.markdown.find("## VRAM booked per node: timeline-legacy\n\n2 node(s). VRAM_MB not advertised by any "
                            "node: booking not tracked"),
            std::string::npos)
      << r.markdown;
}

TEST(ReportPlots, TwelveNodesTwelveDistinctStyles) {
  ReportInputs in;
  std::vector<NodeSeries> nodes;
  for (int i = 1; i <= 15; ++i) nodes.push_back(node("node-" + std::to_string(i), 81920, {{0, 0}, {60, 1000.0 * i}}));
  in.timelines.push_back({"timeline", nodes});
  const ReportFiles r = build_report(in, {});
  const auto series = series_of(file_of(r, "vram-timeline.gp"));
  ASSERT_EQ(series.size(), 13u) << "the 12 highest peaks and one offered line";
  std::set<std::string> styles;
  const std::regex style(R"(lc rgb "#[0-9a-f]{6}" dt [0-9]+)");
  for (std::size_t i = 0; i < 12; ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(series[i], m, style)) << series[i];
    styles.insert(m.str());
  }
  EXPECT_EQ(styles.size(), 12u);
  EXPECT_NE(series[0].find("\"node-15\""), std::string::npos) << "the highest peak first";
  EXPECT_NE(r.markdown.find("the 12 with the highest peak are drawn"), std::string::npos);
}

TEST(ReportPlots, TimeToRunningLegendOutsideAndTimeInAFittingUnit) {
  ReportInputs in;
  TracedRun a{"a.jsonl", "s", "legacy", 1, {{"x", 100.0}, {"y", std::nullopt}}};
  TracedRun b{"b.jsonl", "s", "fixed", 1, {{"x", 1200.0}, {"y", 1500.0}}};
  in.runs = {a, b};
  const ReportFiles r = build_report(in, {});
  const std::string& gp = file_of(r, "time-to-running.gp");
  EXPECT_NE(gp.find("set key tmargin"), std::string::npos);
  EXPECT_NE(gp.find("set xlabel \"min since"), std::string::npos) << gp;
  EXPECT_EQ(series_of(gp).size(), 2u);
  const auto x = first_column(file_of(r, "time-to-running-fixed.dat"));
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(x[1], 20) << "1200 s in minutes";
}

std::string policies_csv() {
  // ttr_p50_s empty for legacy; const the same everywhere.
  return "policies,seed,ttr_p50_s,ttr_p95_s,const,never\n"
         "legacy,1,,10800,7,\nlegacy,2,,11000,7,\nfixed,1,200,11100,7,\nfixed,2,300,11150,7,\n";
}

TEST(ReportPlots, CategoriesArePointsWithBarsNotLines) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("by-policy.csv", policies_csv())));
  const ReportFiles r = build_report(in, {});
  // A deploy race: time to RUNNING's p95 first, then its p50.
  ASSERT_EQ(r.scripts, (std::vector<std::string>{"sweep-by-policy-policies-ttr_p95_s", "sweep-by-policy-policies-ttr_p50_s"}));
  const std::string& gp = file_of(r, "sweep-by-policy-policies-ttr_p95_s.gp");
  const auto series = series_of(gp);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_NE(series[0].find("with yerrorbars"), std::string::npos) << series[0];
  EXPECT_EQ(gp.find("lines"), std::string::npos) << "no line joins two categories: " << gp;
  EXPECT_NE(gp.find("set xtics (\"legacy\" 0, \"fixed\" 1)"), std::string::npos) << gp;
  const auto [lo, hi] = yrange_of(gp);
  EXPECT_EQ(lo, 0) << "times from 0";
  EXPECT_GT(hi, 11150);
  // The mean and its spread over the seeds.
  EXPECT_NE(file_of(r, "sweep-by-policy-policies-ttr_p95_s-0.dat").find("0.000 10900.000000 10800.000000 11000.000000 2 \"legacy\""),
            std::string::npos)
      << file_of(r, "sweep-by-policy-policies-ttr_p95_s-0.dat");
  // What is not drawn, and why.
  const std::string& md = r.markdown;
  EXPECT_NE(md.find("- the same in every run, so not drawn: `const` = 7"), std::string::npos) << md;
  EXPECT_NE(md.find("- no number in any row (not measured, or not applicable): `never`"), std::string::npos) << md;
  EXPECT_NE(md.find("- `ttr_p50_s` is empty (not measured) in 2 of 4 rows: policies=legacy (2)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("Empty in every row, so not drawn, for policies = legacy."), std::string::npos) << md;
  EXPECT_NE(md.find("| legacy | empty |"), std::string::npos) << md;
  EXPECT_NE(file_of(r, "sweep-by-policy-policies-ttr_p50_s.gp")
                .find("set xtics (\"legacy (empty: not measured)\" 0, \"fixed\" 1)"),
            std::string::npos)
      << "the axis says which category has no value";
  EXPECT_NE(md.find("Over `policies` the mean changes by at most 2.0 % of its largest value (from 10900.0 to 11125.0)."),
            std::string::npos)
      << md;
}

TEST(ReportPlots, NumericParametersOnANumericAxisWithAnSloLine) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("by-workers.csv",
                                               "cluster.max_workers,policies,seed,apps_running\n"
                                               "16,legacy,1,8\n16,fixed,1,12\n2,legacy,1,2\n2,fixed,1,8\n"
                                               "4,legacy,1,4\n4,fixed,1,11\n")));
  ReportOptions opt;
  opt.slo["apps_running"] = 12;
  const ReportFiles r = build_report(in, opt);
  const std::string& gp = file_of(r, "sweep-by-workers-cluster-max_workers-apps_running.gp");
  const auto series = series_of(gp);
  ASSERT_EQ(series.size(), 3u) << "legacy, fixed and the SLO: " << gp;
  EXPECT_NE(series[0].find("with yerrorlines"), std::string::npos) << series[0];
  EXPECT_NE(series[0].find("\"policies=legacy\""), std::string::npos) << series[0];
  EXPECT_NE(series[2].find("12.000000 with lines dt 3"), std::string::npos) << series[2];
  EXPECT_NE(series[2].find("\"SLO: apps_running = 12"), std::string::npos) << series[2];
  EXPECT_EQ(gp.find("xtics ("), std::string::npos) << "numbers need no category labels";
  EXPECT_NE(gp.find("set xrange [1.300000:16.700000]"), std::string::npos) << gp;
  // Workers are whole: integer ticks from the first value, 2 apart over 2..16
  // (at most ten ticks).
  EXPECT_NE(gp.find("set xtics 2, 2\nset format x \"%.0f\"\n"), std::string::npos) << gp;
  EXPECT_EQ(first_column(file_of(r, "sweep-by-workers-cluster-max_workers-apps_running-1.dat")),
            (std::vector<double>{2, 4, 16}))
      << "x is the value itself, in numeric order";
  EXPECT_GT(yrange_of(gp).second, 12);
  EXPECT_NE(r.markdown.find("Over `cluster.max_workers` the mean changes by at most 75.0 % of its largest value "
                            "within a series (from 2 to 8)."),
            std::string::npos)
      << "legacy 2 to 8 moves most: " << r.markdown;
  // The policies plot shares the metric's y range.
  EXPECT_EQ(yrange_of(file_of(r, "sweep-by-workers-policies-apps_running.gp")), yrange_of(gp));
}

TEST(ReportPlots, AParameterWithOneValueIsNotInTheLegend) {
  // policies is a column of the sweep but "fixed" in every row: one series,
  // titled by the metric, not "policies=fixed".
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("one-policy.csv", "cluster.max_workers,policies,seed,apps_running\n"
                                                                 "2,fixed,1,8\n4,fixed,1,11\n2,fixed,2,7\n")));
  const ReportFiles r = build_report(in, ReportOptions{});
  const auto series = series_of(file_of(r, "sweep-one-policy-cluster-max_workers-apps_running.gp"));
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].find("policies="), std::string::npos) << series[0];
  EXPECT_NE(series[0].find("title \"apps_running\""), std::string::npos) << series[0];
}

TEST(ReportPlots, FractionalParametersKeepTheDefaultTicks) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("by-rate.csv", "traffic.rate_per_s,seed,apps_running\n"
                                                              "0.5,1,1\n1.5,1,2\n2.5,1,3\n")));
  const ReportFiles r = build_report(in, ReportOptions{});
  const std::string& gp = file_of(r, "sweep-by-rate-traffic-rate_per_s-apps_running.gp");
  EXPECT_EQ(gp.find("set xtics"), std::string::npos) << "0.5 apart: not an integer parameter\n" << gp;
}

TEST(ReportPlots, SeedsAloneGiveMeanIntervalAndDistribution) {
  std::string csv = "seed,ttr_p95_s,flat\n";
  for (int s = 1; s <= 20; ++s) csv += std::to_string(s) + "," + std::to_string(100 + 10 * s) + ",3\n";
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("seeds.csv", csv)));
  ReportOptions opt;
  opt.slo["ttr_p95_s"] = 250;
  const ReportFiles r = build_report(in, opt);
  ASSERT_EQ(r.scripts, std::vector<std::string>{"sweep-seeds-ttr_p95_s-cdf"});
  const std::string& md = r.markdown;
  EXPECT_NE(md.find("parameters: none (a sweep over seeds alone)"), std::string::npos) << md;
  // mean 205, sd 59.16, t(19) 2.093: +-27.7; p5 110, p50 200, p95 290
  EXPECT_NE(md.find("| ttr_p95_s | 20 | 205.0 | 177.3 to 232.7 | 110.0 | 200.0 | 290.0 | 110.0 | 300.0 |"),
            std::string::npos)
      << md;
  const std::string& gp = file_of(r, "sweep-seeds-ttr_p95_s-cdf.gp");
  EXPECT_NE(gp.find("with steps"), std::string::npos);
  EXPECT_NE(gp.find("set arrow from 250.000000, graph 0 to 250.000000, graph 1"), std::string::npos) << gp;
  EXPECT_EQ(first_column(file_of(r, "sweep-seeds-ttr_p95_s-cdf.dat")).size(), 21u) << "a start at 0 and 20 runs";
  EXPECT_NE(gp.find("set xrange [100.500000:309.500000]"), std::string::npos) << "110 to 300, 5 % on each side: " << gp;
}

TEST(ReportPlots, AMetricNoSweepHasIsAnError) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("m.csv", policies_csv())));
  ReportOptions opt;
  opt.metrics = {"ttr_p99_s"};
  try {
    build_report(in, opt);
    FAIL() << "an unknown metric was drawn";
  } catch (const ReportInputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.csv: --metric ttr_p99_s: expected a column after 'seed'"),
              std::string::npos)
        << e.what();
  }
}

// The run summary's GPU use line reads as the CSV does: a fraction of a GPU
// of fragmentation is not printed as 0 beside a non-zero share.
// A plan CSV as vramsim plan writes it: 2 GPU kinds x 3 worker counts, one
// SLO on the p99 latency, the cost as the objective.
const char* kPlanCsv =
    "cluster.partition.0.gpu,cluster.max_workers,seeds_run,decision,req_latency_p99_s_mean,"
    "req_latency_p99_s_bound,req_latency_p99_s_slo,slo_met,cost_usd,chosen,evaluated_as\n"
    "A10,1,4,certain_fail,90,95,<=10,0,10,0,0\n"
    "A10,2,20,all_seeds,9,9.5,<=10,1,20,1,2\n"
    "A10,3,20,all_seeds,5,5.5,<=10,1,30,0,4\n"
    "A100,1,20,all_seeds,12,12.5,<=10,0,25,0,1\n"
    "A100,2,20,all_seeds,4,4.5,<=10,1,50,0,3\n"
    "A100,3,4,pruned,3,inf,<=10,,75,0,5\n";

TEST(ReportPlan, ThePlanCsvIsReadWithItsSlosAndRows) {
  const PlanTable t = read_plan_csv(temp_file("plan.csv", kPlanCsv));
  EXPECT_EQ(t.params, (std::vector<std::string>{"cluster.partition.0.gpu", "cluster.max_workers"}));
  EXPECT_EQ(t.objective, "cost_usd");
  ASSERT_EQ(t.slos.size(), 1u);
  EXPECT_EQ(t.slos[0].metric, "req_latency_p99_s");
  EXPECT_DOUBLE_EQ(t.slos[0].value, 10);
  EXPECT_TRUE(t.slos[0].upper);
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_TRUE(t.rows[1].chosen);
  EXPECT_EQ(t.rows[5].met, std::nullopt);
  EXPECT_TRUE(std::isinf(t.rows[5].bound[0]));
  EXPECT_EQ(t.rows[0].seeds_run, 4u);
}

TEST(ReportPlan, TheFrontierIsTheCheapestForEachBound) {
  const PlanTable t = read_plan_csv(temp_file("plan-frontier.csv", kPlanCsv));
  // Every seed run: A10x2 (20, 9.5), A100x1 (25, 12.5: dearer and worse),
  // A10x3 (30, 5.5), A100x2 (50, 4.5). Early stops are not on it.
  EXPECT_EQ(plan_frontier(t, 0), (std::vector<std::size_t>{1, 2, 4}));
}

TEST(ReportPlan, TheFrontierPlotHasTheSloLineAndTheChosenPoint) {
  ReportInputs in;
  in.plans.push_back(read_plan_csv(temp_file("study.csv", kPlanCsv)));
  const ReportFiles r = build_report(in, ReportOptions{});
  const std::string& gp = file_of(r, "plan-study-req_latency_p99_s.gp");
  const auto series = series_of(gp);
  ASSERT_GE(series.size(), 6u) << gp;
  EXPECT_NE(gp.find("10.000000000 with lines dt 3"), std::string::npos) << gp;
  EXPECT_NE(gp.find("\"SLO <=10\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xlabel \"cost_usd (USD)\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel \"req_latency_p99_s (s), bound\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("set key outside right"), std::string::npos) << "the key clear of the x label: " << gp;
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-chosen.dat")), (std::vector<double>{20}));
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-frontier.dat")), (std::vector<double>{20, 30, 50}));
  // The GPU model is the dimension asked about: it gives the colour, what
  // the search learnt the shape. A10 x1 stopped certain to miss: a miss;
  // A100 x3 stopped for cost: apart, on the "never" level (its bound is
  // infinite): 95 + 15 % of 95.
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-met-A10.dat")), (std::vector<double>{20, 30}));
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-missed-A10.dat")), (std::vector<double>{10}));
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-met-A100.dat")), (std::vector<double>{50}));
  EXPECT_EQ(first_column(file_of(r, "plan-study-req_latency_p99_s-missed-A100.dat")), (std::vector<double>{25}));
  EXPECT_NE(file_of(r, "plan-study-req_latency_p99_s-pruned-A100.dat").find("\n75.000000 109.250000000\n"),
            std::string::npos);
  EXPECT_NE(gp.find("set ytics add (\"never\" 109.250000000)"), std::string::npos) << gp;
  EXPECT_NE(gp.find("keyentry with points pt 5 ps 1.5 lc rgb \"#1f77b4\" dt 1 title \"A10\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("title \"colour: cluster.partition.0.gpu\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("title \"stopped early (cost)\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("title \"misses the SLO\""), std::string::npos) << gp;
  // Number ticks stop at the highest bound (95), clear of "never": 0 to 95
  // by 20 (about six ticks).
  EXPECT_NE(gp.find("set ytics 0, 20, 95\nset ytics add (\"never\" 109.250000000)"), std::string::npos) << gp;
  // The colour gives the GPU: the labels give the workers alone.
  EXPECT_EQ(file_of(r, "plan-study-req_latency_p99_s-labels-0.dat").find("A10"), std::string::npos);
  EXPECT_NE(r.markdown.find("The colours give `cluster.partition.0.gpu`; the shapes what the search learnt. The "
                            "frontier's labels give `cluster.max_workers`, in that order."),
            std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("Chosen: **cluster.partition.0.gpu=A10 cluster.max_workers=2**, cost_usd 20, "),
            std::string::npos)
      << r.markdown;
  EXPECT_NE(r.markdown.find("1 configuration(s) had a request that never completed in some seed (an infinite "
                            "req_latency_p99_s bound): drawn on the \"never\" level at the top."),
            std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("| cluster.partition.0.gpu=A100 cluster.max_workers=3 | 4 | pruned | 3 | never | - | 75 |"),
            std::string::npos)
      << r.markdown;
}

TEST(ReportPlan, AChosenPointOffTheFrontierIsLabelledAndExplained) {
  // A10 x3 measured a cent cheaper than the chosen A10 x2 (the first passing
  // value of its monotone line), with a better bound.
  std::string csv = kPlanCsv;
  csv.replace(csv.find("A10,3,20,all_seeds,5,5.5,<=10,1,30"), 34, "A10,3,20,all_seeds,5,5.5,<=10,1,19.99");
  ReportInputs in;
  in.plans.push_back(read_plan_csv(temp_file("off.csv", csv)));
  const ReportFiles r = build_report(in, ReportOptions{});
  EXPECT_NE(r.markdown.find("The chosen configuration lies off the frontier: cluster.partition.0.gpu=A10 "
                            "cluster.max_workers=3 measured 0.01 less cost_usd"),
            std::string::npos)
      << r.markdown;
  EXPECT_NE(file_of(r, "plan-off-req_latency_p99_s-labels-0.dat").find("\"chosen: 2\""), std::string::npos);
}

// Frontier labels never print over one another: the second of three
// neighbours goes below its point, the third, clear of neither side, is
// left out and named. One dimension varies: no colours, labels its values.
TEST(ReportPlan, FrontierLabelsDoNotOverprint) {
  const std::string csv = "apps.0.replicas,seeds_run,decision,req_latency_p99_s_mean,req_latency_p99_s_bound,"
                          "req_latency_p99_s_slo,slo_met,cost_usd,chosen,evaluated_as\n"
                          "1,8,all_seeds,5,5,<=10,1,10,1,0\n"
                          "2,8,all_seeds,4.99,4.99,<=10,1,10.1,0,1\n"
                          "3,8,all_seeds,4.98,4.98,<=10,1,10.2,0,2\n";
  ReportInputs in;
  in.plans.push_back(read_plan_csv(temp_file("tight.csv", csv)));
  const ReportFiles r = build_report(in, ReportOptions{});
  EXPECT_NE(file_of(r, "plan-tight-req_latency_p99_s-labels-0.dat").find("\"1\""), std::string::npos);
  EXPECT_NE(file_of(r, "plan-tight-req_latency_p99_s-labels-1.dat").find("\"2\""), std::string::npos);
  EXPECT_NE(r.markdown.find("Labels left out where they would print over another: 3 (the table has every "
                            "configuration)."),
            std::string::npos) << r.markdown;
  EXPECT_TRUE(has_file(r, "plan-tight-req_latency_p99_s-met.dat")) << "no dimension colours: by outcome";
}

TEST(ReportPlan, ABadPlanCsvIsNamedWithItsLine) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"x,seeds_run,decision,m_mean,m_bound,m_slo,slo_met,cost_usd,chosen\n1,4,maybe,1,1,<=2,1,3,0\n",
            "line 2: decision: expected all_seeds, certain_fail or pruned"},
           {"x,seeds_run,decision,m_mean,m_bound,m_slo,slo_met,cost_usd,chosen\n1,4,pruned,1,1,=2,1,3,0\n",
            "m_slo: expected <=V"},
           {"x,seeds_run,decision,m_mean,m_bound,m_slo,slo_met,cost_usd,chosen\n1,4,pruned,1,x,<=2,1,3,0\n",
            "line 2: m_bound: expected a number"},
           {"x,seeds_run,decision,m_mean,m_bound,m_slo,slo_met,cost_usd,chosen\n1,0,pruned,1,1,<=2,1,3,0\n",
            "seeds_run: expected from 1"},
           {"x,seeds_run,m_mean,slo_met,cost_usd,chosen\n", "expected a plan CSV column 'decision'"}}) {
    const std::string path = temp_file("bad-plan.csv", text);
    try {
      read_plan_csv(path);
      ADD_FAILURE() << text << " was read";
    } catch (const ReportInputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad-plan.csv"), std::string::npos) << e.what();
    }
  }
}

TEST(ReportPlots, AxesNameTheMetricsUnit) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("units.csv", "cluster.max_workers,seed,cost_usd,req_slo_attainment\n"
                                                            "1,1,3,0.5\n2,1,6,0.9\n")));
  const ReportFiles r = build_report(in, ReportOptions{});
  EXPECT_NE(file_of(r, "sweep-units-cluster-max_workers-cost_usd.gp").find("set ylabel \"cost_usd (USD)\""),
            std::string::npos);
  EXPECT_NE(file_of(r, "sweep-units-cluster-max_workers-req_slo_attainment.gp")
                .find("set ylabel \"req_slo_attainment (share, 0 to 1)\""),
            std::string::npos);
}

TEST(Summary, FragmentationKeepsAFractionOfAGpu) {
  const auto line = [](double frag, double share) {
    RunResult r;
    r.metrics.utilisation_samples = 100;
    r.metrics.gpu_fragmentation = frag;
    r.metrics.gpu_fragmentation_share = share;
    std::ostringstream out;
    print_summary(r, out);
    const std::string s = out.str();
    const auto at = s.find("fragmentation ");
    return at == std::string::npos ? s : s.substr(at, s.find('\n', at) - at);
  };
  EXPECT_EQ(line(0.044, 0.022), "fragmentation 0.044 GPUs (2.2% of the GPUs)");
  EXPECT_EQ(line(0.04449, 0.0222), "fragmentation 0.0445 GPUs (2.2% of the GPUs)") << "three significant digits";
  EXPECT_EQ(line(582.43, 0.094), "fragmentation 582.4 GPUs (9.4% of the GPUs)");
  EXPECT_EQ(line(2.567, 0.3), "fragmentation 2.57 GPUs (30% of the GPUs)");
  EXPECT_EQ(line(0, 0), "fragmentation 0 GPUs (0% of the GPUs)");
}

}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

TEST(Report, ServingTimelineDrawsLatencyAndReplicasAgainstTraffic) {
  testing_support::TestDir dir;
  // Four 60 s windows: a cold start (p99 300 s), one over the 10 s SLO at
  // p95 but not p99, one without answers, a steady one.
  const std::string path =
      dir.write("run.serve.csv",
                "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,latency_p99_s,replicas,"
                "ongoing_requests,window_s,slo_latency_s\n"
                "60,sd,0.5,30,0,1.5,2.5,300,1,0,60,10\n"
                "120,sd,2,100,3,4,9,9.5,3,5,60,10\n"
                "180,sd,0,0,0,,,,0,0,60,10\n"
                "240,sd,1,60,0,1,2,3,3,0,60,10\n");
  const auto series = read_serve_timeline(path);
  ASSERT_EQ(series.size(), 1u);
  ASSERT_EQ(series[0].points.size(), 4u);
  EXPECT_FALSE(series[0].points[2].p50) << "no request completed in the window";
  EXPECT_EQ(series[0].window_s, 60);
  EXPECT_EQ(series[0].slo_latency_s, std::optional<double>(10));
  ReportInputs in;
  in.serving.emplace_back("run.serve", series);
  const ReportFiles r = build_report(in, {});
  // Each window's values lie over the window, [time_s - 60, time_s]: the
  // cold start's from 0 to 60, not from 60 on.
  const std::string& dat = file_of(r, "serve-run-serve-sd.dat");
  EXPECT_NE(dat.find("\n0.0000 1.500 2.500 300.000 0.500000\n60.0000 1.500 2.500 300.000 0.500000\n"),
            std::string::npos) << dat;
  EXPECT_NE(dat.find("\n60.0000 4.000 9.000 9.500 2.000000\n120.0000 4.000 9.000 9.500 2.000000\n"), std::string::npos);
  EXPECT_NE(dat.find("\n120.0000 NaN NaN NaN 0.000000\n180.0000 NaN NaN NaN 0.000000\n"), std::string::npos)
      << "a window without answers is a gap, not a zero";
  const std::string& lat = file_of(r, "serve-latency-run-serve-sd.gp");
  const auto lines = series_of(lat);
  ASSERT_EQ(lines.size(), 4u) << lat;  // p50, p95, p99 and the SLO
  EXPECT_NE(lines[2].find("using 1:4"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("title \"p99\""), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("10.000000 with lines dt 3"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("\"SLO 10 s\""), std::string::npos) << lines[3];
  // 1 s to 300 s: more than two decades, a log axis from 1/1.5 to 300 x 1.5.
  EXPECT_NE(lat.find("set logscale y\nset yrange [0.666667:450.000000]"), std::string::npos) << lat;
  EXPECT_NE(lat.find("set key tmargin"), std::string::npos) << "the legend above the data";
  const std::string& rep = file_of(r, "serve-replicas-run-serve-sd.gp");
  EXPECT_NE(rep.find("axes x1y2"), std::string::npos) << "the traffic on its own axis";
  EXPECT_NE(file_of(r, "serve-run-serve-sd-replicas.dat").find("\n60.0000 1 0 0\n"), std::string::npos)
      << "replicas as sampled at each window's end";
  EXPECT_NE(r.markdown.find("4 window(s) of 60 s; the highest p99 of a window 300.0 s; the SLO 10 s, missed by the p99 of "
                            "1 of 3 window(s) with answers"),
            std::string::npos)
      << r.markdown;
  EXPECT_NE(r.markdown.find("3 request(s) refused or timed out"), std::string::npos);
  EXPECT_NE(r.markdown.find("![latency](serve-latency-run-serve-sd.png)"), std::string::npos);
  const std::string bad = dir.write("bad.serve.csv", "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,"
                                                     "latency_p95_s,replicas,ongoing_requests\n60,sd,x,1,0,1,1,1,0\n");
  EXPECT_THROW(read_serve_timeline(bad), ReportInputError);
}

// A timeline written before p99, the window and the SLO were columns: the
// window from the rows' spacing, p95 on top, a linear axis from 0.
TEST(Report, ServingTimelineOfTheEarlierFormat) {
  testing_support::TestDir dir;
  const auto series = read_serve_timeline(dir.write(
      "old.csv", "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,replicas,ongoing_requests\n"
                 "30,a,1,30,0,1,2,1,0\n60,a,1,30,0,1,3,1,0\n90,a,1,30,0,1,2,1,0\n"));
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].window_s, 30);
  EXPECT_FALSE(series[0].slo_latency_s);
  ReportInputs in;
  in.serving.emplace_back("old", series);
  const ReportFiles r = build_report(in, {});
  const std::string& lat = file_of(r, "serve-latency-old-a.gp");
  EXPECT_EQ(series_of(lat).size(), 2u) << lat;
  EXPECT_EQ(lat.find("logscale"), std::string::npos) << lat;
  EXPECT_EQ(yrange_of(lat), (std::pair<double, double>{0, 3.3}));
  EXPECT_NE(r.markdown.find("the highest p95 of a window 3 s"), std::string::npos) << r.markdown;
}

TEST(Report, ABadServingTimelineIsNamedWithItsLineAndField) {
  testing_support::TestDir dir;
  const std::string head = "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,latency_p99_s,"
                           "replicas,ongoing_requests,window_s,slo_latency_s\n";
  for (const auto& [row, want] : std::vector<std::pair<std::string, std::string>>{
           {"60,a,1,1,0,1,1,1,1,0,0,\n", "line 2: window_s: expected a number > 0, got '0'"},
           {"60,a,1,1,0,1,1,1,1,0,60,-1\n", "line 2: slo_latency_s: expected a number > 0 or nothing, got '-1'"},
           {"60,a,1,1,0,1,1,x,1,0,60,\n", "line 2: latency_p99_s: expected a number >= 0 or nothing, got 'x'"},
           {"60,a,1,1,0,1,1,1,1,0,60,\n60,a,1,1,0,1,1,1,1,0,60,\n",
            "line 3: time_s: expected the app's windows in time order, got 60 after 60"}}) {
    const std::string path = dir.write("bad.csv", head + row);
    try {
      read_serve_timeline(path);
      ADD_FAILURE() << "accepted: " << row;
    } catch (const ReportInputError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + want), std::string::npos) << e.what();
    }
  }
}

// A sweep whose p99 is "inf" (a request never answered) in some rows: those
// rows are drawn on a "never" level on top, never left out; the metric spans
// more than two decades, so the axis is logarithmic.
TEST(ReportPlots, NeverIsDrawnOnTopAndWideMetricsOnALogAxis) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("wide.csv",
                                               "apps.0.replicas,seed,req_latency_p99_s,events,cost_usd,req_completed\n"
                                               "1,1,inf,100,1,50\n1,2,inf,110,1,50\n"
                                               "2,1,12000,120,2,60\n2,2,13000,130,2,60\n"
                                               "4,1,10,140,4,70\n4,2,12,150,4,70\n")));
  ReportOptions opt;
  opt.slo["req_latency_p99_s"] = 10;
  const ReportFiles r = build_report(in, opt);
  // Apps serve: latency and cost first; the kernel's event count never.
  EXPECT_EQ(r.scripts, (std::vector<std::string>{"sweep-wide-apps-0-replicas-req_latency_p99_s",
                                                 "sweep-wide-apps-0-replicas-cost_usd",
                                                 "sweep-wide-apps-0-replicas-req_completed"}));
  const std::string& md = r.markdown;
  EXPECT_NE(md.find("- vary but not drawn (the sweep is about apps serve requests: request latency and cost first, at "
                    "most 4; choose with --metric): `events`"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- `req_latency_p99_s` is never (a request never answered: `inf`) in 2 of 6 rows"),
            std::string::npos) << md;
  EXPECT_EQ(md.find("req_latency_p99_s` is empty"), std::string::npos) << "never is not \"not measured\"";
  EXPECT_NE(md.find("| 1 | never [never, never] |"), std::string::npos) << md;
  const std::string& gp = file_of(r, "sweep-wide-apps-0-replicas-req_latency_p99_s.gp");
  // 10 (the SLO) to 13000: log; never at 4 x 13000, the top at 8 x.
  EXPECT_NE(gp.find("set logscale y\nset yrange [5.000000:104000.000000]\nset ytics 1, 10, 13000\n"
                    "set ytics add (\"never\" 52000.000000000)\n"),
            std::string::npos) << gp;
  EXPECT_NE(file_of(r, "sweep-wide-apps-0-replicas-req_latency_p99_s-0.dat")
                .find("\n1 52000.000000 52000.000000 52000.000000 2\n2 12500.000000 12000.000000 13000.000000 2\n"),
            std::string::npos)
      << file_of(r, "sweep-wide-apps-0-replicas-req_latency_p99_s-0.dat");
  EXPECT_EQ(first_column(file_of(r, "sweep-wide-apps-0-replicas-req_latency_p99_s-0-never.dat")),
            (std::vector<double>{1}));
  EXPECT_NE(gp.find("\"never: a request never answered (triangles)\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("(log scale)"), std::string::npos) << "the title says so";
  // Cost spans 1 to 4: linear from 0, no never level.
  const std::string& cost = file_of(r, "sweep-wide-apps-0-replicas-cost_usd.gp");
  EXPECT_EQ(cost.find("logscale"), std::string::npos) << cost;
  EXPECT_EQ(cost.find("never"), std::string::npos) << cost;
}

TEST(ReportPlots, SeedsAloneCountNeverRunsInTheShare) {
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("seeds-never.csv", "seed,req_latency_p99_s,req_completed\n"
                                                                  "1,5,10\n2,inf,9\n3,7,10\n4,6,11\n")));
  const ReportFiles r = build_report(in, {});
  EXPECT_NE(r.markdown.find("| req_latency_p99_s | 4 | never | never | 5 | 6 | never | 5 | never |"),
            std::string::npos)
      << r.markdown;
  // Three of four runs answered: the curve ends at 0.75.
  const std::string& dat = file_of(r, "sweep-seeds-never-req_latency_p99_s-cdf.dat");
  EXPECT_NE(dat.find("\n7.000000 0.7500\n"), std::string::npos) << dat;
  EXPECT_NE(file_of(r, "sweep-seeds-never-req_latency_p99_s-cdf.gp").find("1 never: the curve ends below 1"),
            std::string::npos);
}

// report.md embeds the PNG of every picture drawn, and nothing else.
TEST(ReportPlots, TheSummaryEmbedsEachPicturesPng) {
  testing_support::TestDir dir;
  ReportInputs in;
  in.sweeps.push_back(read_sweep_csv(temp_file("embed.csv", policies_csv())));
  in.serving.emplace_back("s", read_serve_timeline(dir.write(
                                   "s.csv", "time_s,app,arrival_rate_per_s,completed,never,latency_p50_s,latency_p95_s,"
                                            "replicas,ongoing_requests\n60,a,1,1,0,1,1,1,0\n")));
  const ReportFiles r = build_report(in, {});
  std::set<std::string> embedded;
  const std::regex image(R"(!\[[^\]]*\]\(([^)]*)\))");
  for (auto it = std::sregex_iterator(r.markdown.begin(), r.markdown.end(), image); it != std::sregex_iterator(); ++it)
    embedded.insert((*it)[1]);
  std::set<std::string> drawn;
  for (const auto& name : r.scripts) drawn.insert(name + ".png");
  EXPECT_EQ(embedded, drawn) << r.markdown;
}

}  // namespace
}  // namespace vramsim

namespace vramsim {
namespace {

// Fragmentation CSVs (vramsim run --frag-csv): the FGD paper's pictures, one
// curve per placement policy, and the figures at 90 % arrived.
const char* kFragHeader =
    "arrival,time_s,pod,placement,pod_gpus,arrived_gpus,arrived_share,gpus,allocated_gpus,unallocated_gpus,"
    "fragmented_gpus,nodes_fragmented,node_fragmentation_max\n";

TEST(ReportFrag, CurvesPerPolicyAgainstTheArrivedWorkload) {
  ReportInputs in;
  in.fragmentation.push_back(read_frag_csv(temp_file("frag-fgd.csv", std::string(kFragHeader) +
                                                                         "1,0,a,fgd,5,5,0.5,10,5,5,0,0,0\n"
                                                                         "2,1,b,fgd,4,9,0.9,10,9,1,0.5,1,0.5\n"
                                                                         "3,2,c,fgd,2,11,1.1,10,9.5,0.5,0.25,1,0.25\n")));
  in.fragmentation.push_back(read_frag_csv(temp_file("frag-ff.csv", std::string(kFragHeader) +
                                                                        "1,0,a,first-fit,5,5,0.5,10,5,5,1,1,1\n"
                                                                        "2,1,b,first-fit,4,9,0.9,10,7,3,2,2,1\n")));
  ASSERT_EQ(in.fragmentation[0].points.size(), 3u);
  EXPECT_EQ(in.fragmentation[0].label, "fgd");
  EXPECT_EQ(frag_first_shortfall(in.fragmentation[0]), std::optional<double>(1.1));
  EXPECT_EQ(frag_first_shortfall(in.fragmentation[1]), std::optional<double>(0.9));
  ASSERT_TRUE(frag_at(in.fragmentation[1], 0.95));
  EXPECT_DOUBLE_EQ(frag_at(in.fragmentation[1], 0.95)->unallocated, 3);
  EXPECT_FALSE(frag_at(in.fragmentation[1], 0.4));
  const ReportFiles r = build_report(in, ReportOptions{});
  const std::string& gp = file_of(r, "frag-unallocated.gp");
  const auto series = series_of(gp);
  ASSERT_EQ(series.size(), 3u) << gp;  // two policies and the ideal
  EXPECT_NE(series[0].find("\"frag-1-fgd.dat\" using 1:2"), std::string::npos) << series[0];
  EXPECT_NE(series[0].find("title \"fgd\""), std::string::npos) << series[0];
  EXPECT_NE(series[1].find("title \"first-fit\""), std::string::npos) << series[1];
  EXPECT_NE(series[2].find("100 - x"), std::string::npos) << series[2];
  EXPECT_NE(gp.find("set xrange [0:110.0]"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xlabel \"arrived workload (% of the cluster's GPUs)\""), std::string::npos) << gp;
  const std::string& tail = file_of(r, "frag-unallocated-tail.gp");
  EXPECT_NE(tail.find("set xrange [90.0:110.0]"), std::string::npos) << tail;
  EXPECT_EQ(yrange_of(tail), (std::pair<double, double>{0, 33}));  // 30 % at 90 % arrived, 10 % headroom
  const std::string& fgp = file_of(r, "frag-fragmented.gp");
  EXPECT_NE(fgp.find("\"frag-2-first-fit.dat\" using 1:3"), std::string::npos) << fgp;
  EXPECT_EQ(first_column(file_of(r, "frag-1-fgd.dat")), (std::vector<double>{50, 90, 110}));
  EXPECT_NE(file_of(r, "frag-2-first-fit.dat").find("90.000 30.000 20.000 3.000 2.000"), std::string::npos);
  EXPECT_NE(r.markdown.find("| fgd | 3 | 110.0% | 110.0% | 1 (10.0%) | 0.5 (5.0%) | 0.5 (5.0%) | 0.25 (2.5%) |"),
            std::string::npos)
      << r.markdown;
  EXPECT_NE(r.markdown.find("| first-fit | 2 | 90.0% | 90.0% | 3 (30.0%) | 2 (20.0%) |"), std::string::npos)
      << r.markdown;
}

TEST(ReportFrag, TwoSeriesOfOnePolicyAreToldApartByFile) {
  ReportInputs in;
  for (const char* name : {"default.csv", "gpushare40.csv"})
    in.fragmentation.push_back(
        read_frag_csv(temp_file(name, std::string(kFragHeader) + "1,0,a,fgd,1,1,0.1,10,1,9,0,0,0\n")));
  const ReportFiles r = build_report(in, ReportOptions{});
  const auto series = series_of(file_of(r, "frag-unallocated.gp"));
  ASSERT_EQ(series.size(), 3u);
  EXPECT_NE(series[0].find("title \"fgd (default)\""), std::string::npos) << series[0];
  EXPECT_NE(series[1].find("title \"fgd (gpushare40)\""), std::string::npos) << series[1];
}

TEST(ReportFrag, ABadFragCsvIsNamedWithItsLine) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {std::string(kFragHeader) + "1,0,a,fgd,1,1,x,10,1,9,0,0,0\n", "line 2: arrived_share: expected a number"},
           {std::string(kFragHeader) + "1,0,a,fgd,1,1,0.1,10,1,-9,0,0,0\n", "line 2: unallocated_gpus: expected"},
           {std::string(kFragHeader) + "1,0,a,fgd,1\n", "line 2: expected 13 columns, found 5"},
           {"arrival,time_s,pod,placement,arrived_share\n", "no column 'arrived_gpus'"}}) {
    const std::string path = temp_file("bad-frag.csv", text);
    try {
      read_frag_csv(path);
      ADD_FAILURE() << text << " was read";
    } catch (const ReportInputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad-frag.csv"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vramsim
