// The SWF reader: header fields from the comments, the 18 fields of a job,
// and one message per kind of malformed line naming the file, the line, the
// column and what was expected.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/test_dir.hpp"
#include "workload/swf.hpp"
#include "workload/workload_file.hpp"

using namespace vramsim;

namespace {

const char* kGood =
    "; Version: 2.2\n"
    "; MaxNodes: 64\n"
    ";  MaxProcs:  128  \n"
    "; Note: a comment with: colons\n"
    "\n"
    "   15   599850 192180   3477    4     -1    -1    4  53940    -1  1  12  12  -1 -1 -1 -1 -1\n"
    "16\t600022 11940 2488 25 12.5 1024.75 25 3600 -1 0 13 13 7 2 1 15 30\r\n"
    "   \n"
    "17 600476 -1 -1 -1 -1 -1 5 -1 -1 5 14 14 -1 -1 -1 -1 -1";  // no newline at the end

// The message parse_swf throws for `text`, or "" if it parsed.
std::string error_of(const std::string& text) {
  try {
    parse_swf(text, "t.swf");
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "";
}

const char* kRow = "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1";

}  // namespace

TEST(Swf, ReadsHeaderAndEveryField) {
  const SwfTrace t = parse_swf(kGood, "good.swf");
  EXPECT_EQ(t.file, "good.swf");
  EXPECT_EQ(t.header.max_procs, 128);
  EXPECT_EQ(t.header.max_nodes, 64);
  ASSERT_EQ(t.jobs.size(), 3u);
  const SwfJob& a = t.jobs[0];
  EXPECT_EQ(a.id, 15);
  EXPECT_EQ(a.submit, 599850);
  EXPECT_EQ(a.wait, 192180);
  EXPECT_EQ(a.run_time, 3477);
  EXPECT_EQ(a.alloc_procs, 4);
  EXPECT_EQ(a.req_procs, 4);
  EXPECT_EQ(a.req_time, 53940);
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(a.line, 6u);
  const SwfJob& b = t.jobs[1];
  EXPECT_DOUBLE_EQ(b.avg_cpu_time, 12.5);
  EXPECT_DOUBLE_EQ(b.used_memory, 1024.75);
  EXPECT_EQ(b.status, 0);
  EXPECT_EQ(b.executable, 7);
  EXPECT_EQ(b.queue, 2);
  EXPECT_EQ(b.partition, 1);
  EXPECT_EQ(b.preceding_job, 15);
  EXPECT_EQ(b.think_time, 30) << "a CR before the newline is whitespace";
  const SwfJob& c = t.jobs[2];
  EXPECT_EQ(c.run_time, -1);
  EXPECT_EQ(c.wait, -1);
  EXPECT_EQ(c.line, 9u);
}

TEST(Swf, LimitStopsAfterThatManyJobs) {
  const SwfTrace t = parse_swf(kGood, "good.swf", 2);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[1].id, 16);
  // A malformed line after the limit is never read.
  EXPECT_EQ(parse_swf(std::string(kRow) + "\nbad\n", "t.swf", 1).jobs.size(), 1u);
}

TEST(Swf, NoHeaderLeavesItUnset) {
  const SwfTrace t = parse_swf(kRow, "t.swf");
  EXPECT_FALSE(t.header.max_procs);
  EXPECT_FALSE(t.header.max_nodes);
  EXPECT_EQ(t.jobs.size(), 1u);
}

TEST(Swf, TooFewFieldsNamesTheFirstMissing) {
  EXPECT_EQ(error_of("; c\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1\n"),
            "t.swf:2: think_time: expected 18 fields, got 17 (line ends before think_time)");
  EXPECT_EQ(error_of("1 2 3\n"), "t.swf:1: run_time: expected 18 fields, got 3 (line ends before run_time)");
}

TEST(Swf, TooManyFields) {
  EXPECT_EQ(error_of(std::string(kRow) + " 1 99\n"), "t.swf:1: field 20: expected 18 or 19 fields, got more: '99'");
}

// vramsim's optional 19th field: GPUs per node (-1 or absent: none); lines
// of 18 and of 19 fields mix in one file.
TEST(Swf, ReadsTheGpusPerNodeField) {
  const SwfTrace t = parse_swf(std::string(kRow) + "\n" + kRow + " 2\n" + kRow + " -1\n" + kRow + "\t0\r\n" + kRow +
                                   " 64\n",
                               "t.swf");
  ASSERT_EQ(t.jobs.size(), 5u);
  EXPECT_EQ(t.jobs[0].gpus_per_node, -1) << "18 fields: none stated";
  EXPECT_EQ(t.jobs[1].gpus_per_node, 2);
  EXPECT_EQ(t.jobs[2].gpus_per_node, -1);
  EXPECT_EQ(t.jobs[3].gpus_per_node, 0);
  EXPECT_EQ(t.jobs[4].gpus_per_node, 64);
  EXPECT_EQ(t.jobs[1].think_time, -1) << "the 18 fields read as without it";
  EXPECT_EQ(t.jobs[1].run_time, 10);
}

TEST(Swf, GpusPerNodeOutOfItsRange) {
  for (const char* bad : {"65", "-2", "1.5", "x", "+1", "99999999999999999999"})
    EXPECT_EQ(error_of("; c\n" + std::string(kRow) + " " + bad + "\n"),
              std::string("t.swf:2: gpus_per_node: expected -1 (none) or GPUs per node from 0 to 64, got '") + bad +
                  "'")
        << bad;
}

TEST(Swf, NonIntegerField) {
  EXPECT_EQ(error_of("1 0 0 ten 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: run_time: expected an integer (-1 for unknown), got 'ten'");
  EXPECT_EQ(error_of("1 0 0 10 4.5 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: alloc_procs: expected an integer (-1 for unknown), got '4.5'");
  EXPECT_EQ(error_of("1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 \x01\n"),
            "t.swf:1: think_time: expected an integer (-1 for unknown), got '?'");
}

TEST(Swf, NegativeOtherThanMinusOne) {
  EXPECT_EQ(error_of("1 0 0 10 4 -1 -1 -4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: req_procs: expected -1 (unknown) or a value >= 0, got '-4'");
  EXPECT_EQ(error_of("1 0 0 10 4 -2.5 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: avg_cpu_time: expected -1 (unknown) or a value >= 0, got '-2.5'");
}

TEST(Swf, ValuesOutOfRange) {
  EXPECT_EQ(error_of("1 0 0 99999999999999999999 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: run_time: expected at most 1000000000000, got '99999999999999999999'");
  EXPECT_EQ(error_of("1 1000000000001 0 1 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: submit_time: expected at most 1000000000000, got '1000000000001'");
  EXPECT_EQ(error_of("1 0 0 1 4 1e13 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: avg_cpu_time: expected at most 1000000000000, got '1e13'");
  EXPECT_EQ(error_of("1 0 0 1 4 -1 nan 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: used_memory: expected a number (-1 for unknown), got 'nan'");
}

// An integer field at the edges of int64 and of the 10^12 bound: a value
// beyond int64 is "at most" even with bytes after it, one within int64 only
// when whole; a minus takes int64's lowest value (-2^63) as a number.
TEST(Swf, IntegerFieldAtTheBounds) {
  const auto run_time = [](const std::string& tok) {
    return error_of("1 0 0 " + tok + " 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
  };
  const std::string at_most = "t.swf:1: run_time: expected at most 1000000000000, got '";
  const std::string integer = "t.swf:1: run_time: expected an integer (-1 for unknown), got '";
  const std::string negative = "t.swf:1: run_time: expected -1 (unknown) or a value >= 0, got '";
  EXPECT_EQ(parse_swf("1 0 0 1000000000000 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.swf").jobs.at(0).run_time,
            1'000'000'000'000);
  EXPECT_EQ(parse_swf("1 0 0 -0 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.swf").jobs.at(0).run_time, 0);
  EXPECT_EQ(parse_swf("1 0 0 0007 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.swf").jobs.at(0).run_time, 7);
  for (const char* tok : {"1000000000001", "9223372036854775807", "9223372036854775808", "18446744073709551616",
                          "9223372036854775808x", "-9223372036854775809", "184467440737095516150"})
    EXPECT_EQ(run_time(tok), at_most + tok + "'") << tok;
  for (const char* tok : {"-", "+5", "12a", "1e3", "9223372036854775807x", "-x", "--1"})
    EXPECT_EQ(run_time(tok), integer + tok + "'") << tok;
  for (const char* tok : {"-2", "-9223372036854775808", "-1000000000001"})
    EXPECT_EQ(run_time(tok), negative + tok + "'") << tok;
}

TEST(Swf, JobIdAndSubmitMustBeKnown) {
  EXPECT_EQ(error_of("-1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: job_id: expected a job number >= 0, got -1");
  EXPECT_EQ(error_of("1 -1 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: submit_time: expected a submit time >= 0, got -1");
}

// SWF header lines are informational: a value that is not a number is kept
// as text and named in one warning, never a reason to refuse the log.
TEST(Swf, AnUnreadableHeaderValueWarnsAndTheLogStillLoads) {
  const SwfTrace t = parse_swf(std::string("; MaxProcs: lots\n;\n; MaxNodes: 0\n; MaxProcs: -1\n; MaxNodes: 4x100\n") +
                                   kRow + "\n",
                               "t.swf");
  EXPECT_EQ(t.jobs.size(), 1u);
  EXPECT_FALSE(t.header.max_procs);
  EXPECT_FALSE(t.header.max_nodes);
  EXPECT_EQ(t.warnings, (std::vector<std::string>{
                            "t.swf:1: MaxProcs: expected a positive number first, got 'lots'; the field is ignored",
                            "t.swf:3: MaxNodes: expected a positive number first, got '0'; the field is ignored",
                            "t.swf:4: MaxProcs: expected a positive number first, got '-1'; the field is ignored",
                            "t.swf:5: MaxNodes: expected a positive number first, got '4x100'; the field is ignored"}));
}

// Real archive logs write free text after the number. Headers in the styles
// of the Parallel Workloads Archive: the number is read, the text is kept,
// continuation lines and prose with colons are not fields.
TEST(Swf, ArchiveHeadersWithTextAfterTheNumberAreRead) {
  const std::string paragon =
      "; Version: 2.2\n"
      "; Computer: Intel Paragon\n"
      "; Installation: San Diego Supercomputer Center (SDSC)\n"
      "; Information: http://www.sdsc.edu/\n"
      ";              http://www.cs.huji.ac.il/labs/parallel/workload/\n"
      "; MaxJobs: 32135\n"
      "; MaxNodes: 400 (48 interactive, 352 batch, of them 64 with 32 MB)\n"
      "; MaxProcs: 400\n"
      "; Note: the interactive partition: jobs of at most 1 hour\n"
      ";\n";
  const SwfTrace p = parse_swf(paragon + kRow + "\n", "SDSC-Par-1995.swf");
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  EXPECT_EQ(p.header.max_nodes, 400);
  EXPECT_EQ(p.header.max_procs, 400);
  ASSERT_EQ(p.header.fields.size(), 8u) << "the URL continuation is no field";
  EXPECT_EQ(p.header.fields[5], (std::pair<std::string, std::string>{
                                    "MaxNodes", "400 (48 interactive, 352 batch, of them 64 with 32 MB)"}));
  EXPECT_EQ(p.header.fields[7].first, "Note");
  EXPECT_EQ(p.jobs.size(), 1u);

  const std::string cluster =
      "; Version: 2.2\n"
      "; Computer: Linux cluster\n"
      "; MaxNodes: 120\n"
      "; MaxProcs: 240 (2 per node)\n"
      "; MaxQueues: 3\n"
      "; Queue: 1 normal\n"
      "; Note: Scheduler is Maui: see http://example.org/maui\n";
  const SwfTrace c = parse_swf(cluster + kRow + "\n", "HPC2N-2002.swf");
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.header.max_nodes, 120);
  EXPECT_EQ(c.header.max_procs, 240);
}

// SWF's status field: 2 (partial execution, to be continued), 3 (last
// partial, completed) and 4 (last partial, failed) mark the lines of a
// checkpointed or swapped job; its summary line (1, 0 or 5) is the job.
TEST(Swf, PartialExecutionLinesAreNotJobs) {
  const std::string text =
      "1 0 0 30 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"    // the job's summary line
      "1 0 0 10 4 -1 -1 4 60 -1 2 1 1 -1 -1 -1 -1 -1\n"    // its first part
      "1 0 0 20 4 -1 -1 4 60 -1 3 1 1 -1 -1 -1 -1 -1\n"    // its last part, completed
      "2 5 0 7 2 -1 -1 2 60 -1 4 1 1 -1 -1 -1 -1 -1\n"     // a last part that failed
      "2 5 0 7 2 -1 -1 2 60 -1 0 1 1 -1 -1 -1 -1 -1\n";    // and its summary line
  const SwfTrace t = parse_swf(text, "t.swf");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].run_time, 30);
  EXPECT_EQ(t.jobs[1].status, 0);
  EXPECT_EQ(t.partial_lines, 3u);
}

// A line is read 64 bytes at a time: tokens of every length from 1 to 13
// digits, at every offset, across chunk boundaries, in lines past 128
// bytes, with gaps of spaces and tabs, read as std::stoll reads their
// digits. The text lies in a buffer of exactly its size (the last line
// runs to its end, without a newline), so a read past it is an error under
// AddressSanitizer.
TEST(Swf, TokensOfEveryLengthAtEveryOffsetReadAsTheirDigits) {
  std::string text;
  std::vector<std::array<std::string, 18>> want;
  std::uint64_t state = 12345;
  const auto digit = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<char>('0' + (state >> 33) % 10);
  };
  for (int pad = 0; pad < 80; ++pad) {
    std::array<std::string, 18> tok;
    text += std::string(static_cast<std::size_t>(pad), ' ');
    for (std::size_t i = 0; i < tok.size(); ++i) {
      const std::size_t len = (i + static_cast<std::size_t>(pad)) % 13 + 1;
      for (std::size_t k = 0; k < len; ++k) tok[i] += digit();
      if (len == 13) tok[i][0] = '0';  // at most 10^12
      if (i == 10) tok[i] = "1";       // status: a whole job
      if (i > 0) text += (i + static_cast<std::size_t>(pad)) % 4 == 0 ? "\t" : std::string((i * 7 + static_cast<std::size_t>(pad)) % 3 + 1, ' ');
      text += tok[i];
    }
    want.push_back(tok);
    if (pad + 1 < 80) text += pad % 2 ? "\n" : "  \r\n";
  }
  const auto buffer = std::make_unique<char[]>(text.size());
  std::memcpy(buffer.get(), text.data(), text.size());
  const SwfTrace t = parse_swf(std::string_view(buffer.get(), text.size()), "t.swf");
  ASSERT_EQ(t.jobs.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    const auto v = [&](std::size_t i) { return static_cast<std::int64_t>(std::stoll(want[j][i])); };
    const SwfJob& job = t.jobs[j];
    const std::int64_t got[] = {job.id, job.submit, job.wait, job.run_time, job.alloc_procs,
                                static_cast<std::int64_t>(job.avg_cpu_time), static_cast<std::int64_t>(job.used_memory),
                                job.req_procs, job.req_time, job.req_memory, job.status, job.user, job.group,
                                job.executable, job.queue, job.partition, job.preceding_job, job.think_time};
    for (std::size_t i = 0; i < 18; ++i) EXPECT_EQ(got[i], v(i)) << "line " << j + 1 << ", field " << i << ": '" << want[j][i] << "'";
  }
}

// A token that is not all digits is named whole wherever it lies: one that
// crosses from one 64-byte chunk into the next, with its bad byte on
// either side.
TEST(Swf, ABadByteInATokenAcrossChunksIsNamed) {
  for (std::size_t len = 2; len <= 13; ++len)
    for (std::size_t bad = 0; bad < len; ++bad) {
      std::string tok(len, '7');
      tok[bad] = 'x';
      // run_time (the 4th token) starts at 64 - len / 2: it crosses byte 64.
      const std::string head = "1 0 0";
      const std::string line = head + std::string(64 - len / 2 - head.size(), ' ') + tok + " 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n";
      EXPECT_EQ(error_of(line), "t.swf:1: run_time: expected an integer (-1 for unknown), got '" + tok + "'") << line;
    }
}

TEST(Swf, LongTokensAreClipped) {
  const std::string msg = error_of("1 0 0 " + std::string(100, 'x') + " 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
  EXPECT_EQ(msg, "t.swf:1: run_time: expected an integer (-1 for unknown), got '" + std::string(24, 'x') + "...'");
}

TEST(Swf, UnreadableFiles) {
  namespace fs = std::filesystem;
  try {
    load_swf("/nonexistent/x.swf");
    FAIL() << "expected a WorkloadError";
  } catch (const WorkloadError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.swf: file: cannot be opened for reading");
  }
  const fs::path dir = fs::temp_directory_path();
  try {
    load_swf(dir.string());
    FAIL() << "expected a WorkloadError";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": file: expected a file, got a folder");
  }
}

TEST(Swf, LoadsTheBundledKthTrace) {
  const std::string path = std::string(VRAMSIM_TRACE_DIR) + "/pwa-swf/KTH-SP2-1996-2.1-cln.swf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no trace at " << path;
  const SwfTrace t = load_swf(path);
  EXPECT_EQ(t.jobs.size(), 28476u) << "the README's row count";
  EXPECT_EQ(t.header.max_procs, 100);
  EXPECT_EQ(t.jobs.front().id, 15);
}

// A regular file is read for its size, a pipe to its end: both give the
// file's bytes, and an empty file gives none.
TEST(WorkloadFileText, RegularFilesFifosAndEmptyFilesGiveTheirBytes) {
  const testing_support::TestDir dir;
  std::string text = "; MaxProcs: 4\n";
  for (int i = 1; i <= 5000; ++i) text += std::to_string(i) + " 0 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n";
  const std::string path = dir.write("big.swf", text);
  {
    const WorkloadFile f(path);
    EXPECT_EQ(f.text(), text);
  }
  const SwfTrace loaded = load_swf(path), parsed = parse_swf(text, path);
  ASSERT_EQ(loaded.jobs.size(), 5000u);
  EXPECT_EQ(loaded.jobs.back().id, parsed.jobs.back().id);
  EXPECT_EQ(loaded.header.max_procs, 4);

  const WorkloadFile empty(dir.write("empty.swf", ""));
  EXPECT_TRUE(empty.text().empty());

  const std::string fifo = dir.file("pipe.swf");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << text;
  });
  const WorkloadFile piped(fifo);
  writer.join();
  EXPECT_EQ(piped.text(), text);
}
