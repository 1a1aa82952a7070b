// JobJournal: fsync'd lines of submitted job ids, read back by --cleanup.
#include "backends/slurm/job_journal.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace vramsim::slurm {
namespace {

namespace fs = std::filesystem;

class JobJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "vramsim-journal-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    fs::permissions(dir, fs::perms::owner_all);
    fs::remove_all(dir);
  }
  std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir;
};

TEST_F(JobJournalTest, RecordsOneLinePerJobAndReadsThemBack) {
  const auto path = (dir / "jobs.journal").string();
  {
    JobJournal j(path);
    j.record("run-a", "101");
    j.record("run-b", "102");
    // Each line is on disk as soon as record returns, before the journal closes.
    EXPECT_EQ(slurp(path), "run-a\t101\nrun-b\t102\n");
    j.record("run-a", "103");
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto entries = JobJournal::read(path);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0], std::make_pair(std::string("run-a"), std::string("101")));
  EXPECT_EQ(entries[1], std::make_pair(std::string("run-b"), std::string("102")));
  EXPECT_EQ(entries[2], std::make_pair(std::string("run-a"), std::string("103")));
}

TEST_F(JobJournalTest, ReopeningAppends) {
  const auto path = (dir / "j").string();
  JobJournal(path).record("r", "1");
  JobJournal(path).record("r", "2");
  EXPECT_EQ(JobJournal::read(path).size(), 2u);
}

TEST_F(JobJournalTest, MalformedLineNamesFileAndLine) {
  const auto path = (dir / "bad.journal").string();
  std::ofstream(path) << "run-a\t1\nrun-a 2\n";
  try {
    JobJournal::read(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: expected \"<run_id><TAB><job_id>\", got \"run-a 2\"");
  }
  std::ofstream(path) << "\t7\n";
  EXPECT_THROW(JobJournal::read(path), std::runtime_error);
}

TEST_F(JobJournalTest, TornLastLineIsSkipped) {
  const auto path = (dir / "torn.journal").string();
  std::ofstream(path) << "run-a\t1\nrun-a\t2";
  const auto entries = JobJournal::read(path);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second, "1");
}

TEST_F(JobJournalTest, UnwritablePathThrowsNamingIt) {
  const auto path = (dir / "no-such-dir" / "j").string();
  try {
    JobJournal j(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(JobJournal::read(path), std::runtime_error);
}

TEST_F(JobJournalTest, FullDeviceMakesRecordThrow) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full not writable here";
  JobJournal j("/dev/full");
  EXPECT_THROW(j.record("run", "1"), std::runtime_error);
}

TEST_F(JobJournalTest, IdsWithWhitespaceAreRefused) {
  JobJournal j((dir / "j").string());
  EXPECT_THROW(j.record("run a", "1"), std::invalid_argument);
  EXPECT_THROW(j.record("run", ""), std::invalid_argument);
  EXPECT_TRUE(JobJournal::read((dir / "j").string()).empty());
}

}  // namespace
}  // namespace vramsim::slurm
