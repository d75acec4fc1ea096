// The summary a profile keeps for counter tracks of more than 65,536 values
// (SCHEMA.md counter_summary): built exactly, read back as written, and a
// damaged one refused by the verification every reader runs.
#include "scratch_directory.hpp"
#include "traces/internal/counter_summary_builder.hpp"
#include "traces/profile_error.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_verification.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ipusim::traces::counter_summary_test {
namespace {

using testing::ScratchDirectory;

TEST(CounterSummaryBuilder, KeepsCountLeastGreatestFirstAndLastPerBucket) {
  // ts 0..99 over 10 values: 10 buckets of 10 cycles.
  internal::CounterSummaryBuilder builder(0, 99, 10);
  builder.add(3, 5.0);
  builder.add(7, -1.0);
  builder.add(9, 2.0);   // bucket 0: 3 values
  builder.add(10, 4.0);  // bucket 1
  builder.add(99, 8.0);  // bucket 9
  const CounterSummary s = builder.take();
  EXPECT_EQ(s.valueCount, 5);
  EXPECT_EQ(s.originTs, 0);
  EXPECT_EQ(s.bucketCycles, 10);
  ASSERT_EQ(s.size(), 10u);
  EXPECT_EQ(s.count, (std::vector<std::uint32_t>{3, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(s.firstTs[0], 3);
  EXPECT_EQ(s.lastTs[0], 9);
  EXPECT_EQ(s.min[0], -1.0);
  EXPECT_EQ(s.max[0], 5.0);
  EXPECT_EQ(s.first[0], 5.0);
  EXPECT_EQ(s.last[0], 2.0);
  EXPECT_EQ(s.firstTs[9], 99);
  EXPECT_EQ(s.last[9], 8.0);
  EXPECT_EQ(s.count[2], 0u);
  EXPECT_EQ(s.min[2], 0.0);  // empty buckets hold zeros
}

// 200,000 values 10 cycles apart on one counter track, 10 on another.
class CounterSummaryProfile : public ::testing::Test {
 protected:
  static constexpr std::int64_t kValues = 200'000;
  static double valueAt(std::int64_t i) { return double((i * 7919) % 1000) / 8.0; }
  void SetUp() override {
    path_ = dir_.file("profile.pop");
    ProfileWriter w(path_);
    big_ = w.addTrack({0, -1, "counter", "loss", -1, -1, 0});
    small_ = w.addTrack({0, -1, "counter", "accuracy", -1, -1, 1});
    for (std::int64_t i = 0; i < kValues; ++i) w.addCounter({big_, i * 10, valueAt(i), -1, i});
    for (std::int64_t i = 0; i < 10; ++i) w.addCounter({small_, i * 10, 0.5, -1, i});
    w.commit();
  }
  void exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::string verificationError() {
    try {
      verifyProfileFile(path_);
    } catch (const ProfileError& e) {
      return e.what();
    }
    return "";
  }
  ScratchDirectory dir_;
  std::string path_;
  std::int64_t big_ = 0, small_ = 0;
};

TEST_F(CounterSummaryProfile, RoundTripsEveryBucketOfTheValues) {
  const ProfileReader reader(path_);
  EXPECT_FALSE(reader.counterSummary(small_).has_value());  // 10 values: read whole, no summary
  const auto s = reader.counterSummary(big_);
  ASSERT_TRUE(s.has_value());
  // Extent [0, 1,999,990] (1,999,991 cycles) over 131,072 buckets: 16 cycles each, 125,000 of them.
  EXPECT_EQ(s->valueCount, kValues);
  EXPECT_EQ(s->originTs, 0);
  EXPECT_EQ(s->bucketCycles, 16);
  ASSERT_EQ(s->size(), 125'000u);
  // Bucket 0 ([0, 16)): ts 0 and 10, values 0 and 919/8.
  EXPECT_EQ(s->count[0], 2u);
  EXPECT_EQ(s->firstTs[0], 0);
  EXPECT_EQ(s->lastTs[0], 10);
  EXPECT_EQ(s->first[0], 0.0);
  EXPECT_EQ(s->last[0], 919.0 / 8);
  EXPECT_EQ(s->min[0], 0.0);
  EXPECT_EQ(s->max[0], 919.0 / 8);
  // Every bucket against the values themselves.
  CounterSummary expected;
  expected.count.assign(s->size(), 0);
  expected.firstTs = expected.lastTs = std::vector<std::int64_t>(s->size(), 0);
  expected.min = expected.max = expected.first = expected.last = std::vector<double>(s->size(), 0);
  for (const CounterRow& row : reader.counters(big_)) {
    const auto b = std::size_t(row.ts / 16);
    if (expected.count[b]++ == 0) {
      expected.firstTs[b] = row.ts;
      expected.first[b] = expected.min[b] = expected.max[b] = row.value;
    }
    expected.min[b] = std::min(expected.min[b], row.value);
    expected.max[b] = std::max(expected.max[b], row.value);
    expected.lastTs[b] = row.ts;
    expected.last[b] = row.value;
  }
  EXPECT_EQ(s->count, expected.count);
  EXPECT_EQ(s->firstTs, expected.firstTs);
  EXPECT_EQ(s->lastTs, expected.lastTs);
  EXPECT_EQ(s->min, expected.min);
  EXPECT_EQ(s->max, expected.max);
  EXPECT_EQ(s->first, expected.first);
  EXPECT_EQ(s->last, expected.last);
  EXPECT_EQ(verificationError(), "");
}

TEST_F(CounterSummaryProfile, AMissingSummaryRowIsRefusedByTheRowCounts) {
  exec("DELETE FROM counter_summary");
  EXPECT_EQ(verificationError(), path_ + ": damaged profile: table counter_summary has 0 rows, its writer recorded 1");
}

TEST_F(CounterSummaryProfile, ASummaryThatDisagreesWithTheValuesIsRefused) {
  exec("DELETE FROM counters WHERE rowid = (SELECT max(rowid) FROM counters WHERE track_id = " +
       std::to_string(big_) + "); UPDATE meta SET value = replace(value, '\"counters\":200010', '\"counters\":200009') "
       "WHERE key = 'row_counts'");
  EXPECT_EQ(verificationError(), path_ + ": damaged profile: counter_summary row of track " + std::to_string(big_) +
                                     " summarises 200000 values, counters holds 199999");
}

TEST_F(CounterSummaryProfile, ADamagedSummaryRowIsRefusedNamingTheFileAndTheColumn) {
  exec("UPDATE counter_summary SET value_min = x'0102'");
  const std::string message = verificationError();
  EXPECT_EQ(message, path_ + ": damaged profile: counter_summary row of track " + std::to_string(big_) +
                         ": value_min has 2 bytes, expected 8 per bucket for 125000 buckets");
  // The reader refuses it too when asked for the summary (the viewer's path).
  const ProfileReader reader(path_, ProfileReader::Checks::WholeFileDeferred);
  EXPECT_THROW(reader.counterSummary(big_), ProfileError);
}

TEST_F(CounterSummaryProfile, ABucketWhoseValuesLieOutsideItIsRefused) {
  // Bucket 0's first ts set to 16 (bucket 1's cycles): little-endian 64-bit 16 in place of 0.
  exec("UPDATE counter_summary SET first_ts = CAST(x'1000000000000000' || substr(first_ts, 9) AS BLOB)");
  EXPECT_EQ(verificationError(), path_ + ": damaged profile: counter_summary row of track " + std::to_string(big_) +
                                     ": bucket 0 holds ts 16..10, outside its cycles [0, 16)");
}

}  // namespace
}  // namespace ipusim::traces::counter_summary_test
