// The damaged-profile corpus (tests/data/damaged_profiles/cases.json)
// against the C++ reader API: every case is refused with a ProfileError
// naming the file and the damage in the words the Python reader uses
// (traces/python/tests/damaged_profile_corpus.py runs the same cases
// against the Python reader and the ipusim commands), and the cases of
// non-finite data are read as such.
#include "hardening_helpers.hpp"

#include "profiler/analysis/liveness_summary.hpp"
#include "profiler/analysis/operations_summary.hpp"
#include "profiler/analysis/profile_target.hpp"
#include "profiler/analysis/report.hpp"
#include "traces/profile_reader.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include <sys/stat.h>

namespace ipusim::test::test_damaged_profile_corpus {
namespace {

nlohmann::json corpus() {
  return nlohmann::json::parse(readText(sourcePath("tests/data/damaged_profiles/cases.json"))).at("cases");
}

// The good profile every case damages: a training run's (counters, tensors, liveness).
const fs::path& goodProfile() {
  static ScratchDir dir("damaged-corpus-good");
  static const fs::path profile = [] {
    const auto r = runCommand(withReports(dir.path()) + ipusimBinary() + " run " +
                              quote(sourcePath("workloads/mnist_with_feeds.json")) + " --steps 20");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    return dir.path() / "profile.pop";
  }();
  return profile;
}

// The damaged profile of `c` under `dir`; returns the path a reader is given.
fs::path makeCase(const nlohmann::json& c, const fs::path& dir) {
  const fs::path folder = dir / c.at("name").get<std::string>();
  fs::create_directories(folder);
  const fs::path file = folder / "profile.pop";
  if (c.value("fifo", false)) {
    EXPECT_EQ(mkfifo(file.c_str(), 0600), 0);
    return file;
  }
  if (c.value("directory", false)) {
    fs::create_directory(file);
    return folder;
  }
  fs::copy_file(goodProfile(), file);
  if (c.contains("sql")) execSql(file, c.at("sql").get<std::string>());
  if (c.contains("truncate_bytes")) fs::resize_file(file, fs::file_size(file) - c.at("truncate_bytes").get<std::uintmax_t>());
  if (c.contains("replace_with")) std::ofstream(file, std::ios::trunc) << c.at("replace_with").get<std::string>();
  return file;
}

// Every figure of the reader API and the analyses; returns the loss's last value.
double readEverything(const fs::path& path) {
  const traces::ProfileReader reader(path.string());
  profiler::analysis::readProfileTarget(reader);
  reader.runs();
  reader.programs();
  reader.phases();
  reader.tileMemory();
  reader.tileMemoryPeaks();
  reader.programWork();
  reader.tensors();
  reader.programOrder();
  reader.tensorLifetimes();
  double lastLoss = 0;
  for (const auto& track : reader.tracks()) {
    reader.forEachSlice(track.id, [](const traces::SliceRow&) {});
    for (const auto& value : reader.counters(track.id))
      if (track.name == "loss") lastLoss = value.value;
  }
  profiler::analysis::buildReport(reader);
  profiler::analysis::summarizeOperations(reader);
  profiler::analysis::summarizeLiveness(reader);
  return lastLoss;
}

TEST(DamagedProfileCorpus, TheGoodProfileIsRead) { EXPECT_NO_THROW(readEverything(goodProfile())); }

TEST(DamagedProfileCorpus, EveryCaseIsRefusedByTheReaderApiNamingTheDamage) {
  ScratchDir dir("damaged-corpus");
  int refused = 0;
  for (const auto& c : corpus()) {
    if (c.value("accept", false)) continue;
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const fs::path path = makeCase(c, dir.path());
    try {
      readEverything(path);
      ADD_FAILURE() << "read a damaged profile";
    } catch (const traces::ProfileError& e) {
      const std::string message = e.what();
      for (const auto& words : c.at("expect")) EXPECT_NE(message.find(words.get<std::string>()), std::string::npos) << message;
      EXPECT_NE(message.find(name), std::string::npos) << "the message names the file: " << message;
      ++refused;
    }
  }
  EXPECT_GE(refused, 40);
}

// A case that every command reads (no "commands" list) is refused when the
// profile is opened, before any analysis reads the damaged value: so every
// reader refuses it (export and the viewer read no program tree and no
// stream direction; refused only by `report`, such a case was read by them).
TEST(DamagedProfileCorpus, ACaseEveryCommandReadsIsRefusedOnOpen) {
  ScratchDir dir("damaged-corpus-open");
  int refused = 0;
  for (const auto& c : corpus()) {
    if (c.value("accept", false) || c.contains("commands")) continue;
    const std::string name = c.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const fs::path path = makeCase(c, dir.path());
    try {
      const traces::ProfileReader reader(path.string());
      ADD_FAILURE() << "opened a damaged profile";
    } catch (const traces::ProfileError& e) {
      for (const auto& words : c.at("expect")) EXPECT_NE(std::string(e.what()).find(words.get<std::string>()), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GE(refused, 40);
}

TEST(DamagedProfileCorpus, TheAcceptedCasesAreRead) {
  ScratchDir dir("damaged-corpus-accepted");
  int read = 0;
  for (const auto& c : corpus()) {
    if (!c.value("accept", false)) continue;
    SCOPED_TRACE(c.at("name").get<std::string>());
    EXPECT_NO_THROW(readEverything(makeCase(c, dir.path())));
    ++read;
  }
  EXPECT_GE(read, 4);
}

TEST(DamagedProfileCorpus, NonFiniteValuesAreData) {
  ScratchDir dir("damaged-corpus-accept");
  for (const auto& c : corpus()) {
    if (!c.contains("shows")) continue;
    SCOPED_TRACE(c.at("name").get<std::string>());
    const double last = readEverything(makeCase(c, dir.path()));
    if (c.at("shows").at("loss") == "nan")
      EXPECT_TRUE(std::isnan(last)) << last;
    else
      EXPECT_TRUE(std::isinf(last)) << last;
  }
}

}  // namespace
}  // namespace ipusim::test::test_damaged_profile_corpus
