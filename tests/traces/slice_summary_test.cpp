// The chunk spans and the busy summary a profile keeps for tracks of more
// than one chunk (SCHEMA.md slice_chunks, slice_summary): exact values, and
// a damaged summary is an error naming the file.
#include "scratch_directory.hpp"
#include "traces/internal/slice_summary_builder.hpp"
#include "traces/profile_error.hpp"
#include "traces/profile_reader.hpp"
#include "traces/profile_writer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace ipusim::traces::slice_summary_test {
namespace {

using testing::ScratchDirectory;

TEST(SliceSummaryBuilder, ClipsSlicesToBucketsAndKeepsTheLargestOverlapsCategory) {
  // Extent [0, 1000) over 10 slices: 10 buckets of 100 cycles.
  internal::SliceSummaryBuilder builder(0, 1000, 10);
  builder.add(50, 200, 0, 7);   // 50 in bucket 0, 100 in bucket 1, 50 in bucket 2
  builder.add(260, 30, 0, 9);   // 30 more in bucket 2: category 7 keeps it (50 > 30)
  builder.add(900, 100, 1, 4);  // depth 1: bucket 9
  builder.add(500, 0, 0, 5);    // an instant covers nothing
  const auto summaries = builder.take();
  ASSERT_EQ(summaries.size(), 2u);
  const SliceSummary& d0 = summaries[0];
  EXPECT_EQ(d0.depth, 0);
  EXPECT_EQ(d0.originTs, 0);
  EXPECT_EQ(d0.bucketCycles, 100);
  ASSERT_EQ(d0.size(), 10u);
  EXPECT_EQ(d0.busy, (std::vector<std::uint32_t>{50, 100, 80, 0, 0, 0, 0, 0, 0, 0}));
  const auto none = SliceSummary::kNoCategory;
  EXPECT_EQ(d0.category, (std::vector<std::uint32_t>{7, 7, 7, none, none, none, none, none, none, none}));
  EXPECT_EQ(summaries[1].depth, 1);
  EXPECT_EQ(summaries[1].busy[9], 100u);
  EXPECT_EQ(summaries[1].category[9], 4u);
}

// 3 chunks on one track (65,536 slices each at most), one chunk on another.
class MultiChunkProfile : public ::testing::Test {
 protected:
  static constexpr std::int64_t kSlices = 150'000;
  void SetUp() override {
    path_ = dir_.file("profile.pop");
    ProfileWriter w(path_);
    big_ = w.addTrack({0, -1, "bsp", "IPU 0 BSP", 0, -1, 0});
    small_ = w.addTrack({0, -1, "host", "host", -1, -1, 1});
    for (std::int64_t i = 0; i < kSlices; ++i)
      w.addSlice({0, big_, 0, i * 10, 6, i % 3 ? "compute" : "exchange", i % 3 ? "compute" : "exchange", 0, -1, -1,
                  -1, -1});
    w.addSlice({0, small_, -1, 0, 5, "prepare", "host", 0, -1, -1, -1, -1});
    w.commit();
  }
  ScratchDirectory dir_;
  std::string path_;
  std::int64_t big_ = 0, small_ = 0;
};

TEST_F(MultiChunkProfile, ChunkSpansCoverTheirSlices) {
  const ProfileReader reader(path_);
  const auto spans = reader.packedChunkSpans(big_);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].sliceCount, 65536);
  EXPECT_EQ(spans[0].minTs, 0);
  EXPECT_EQ(spans[0].maxEnd, 65535 * 10 + 6);
  EXPECT_EQ(spans[1].minTs, 65536 * 10);
  EXPECT_EQ(spans[2].sliceCount, kSlices - 2 * 65536);
  EXPECT_EQ(spans[2].maxEnd, (kSlices - 1) * 10 + 6);
  EXPECT_TRUE(spans[1].meets(spans[1].minTs - 5, spans[1].minTs + 1));
  EXPECT_FALSE(spans[1].meets(0, spans[1].minTs));
  // Reading a range of chunks gives exactly their slices.
  std::int64_t read = 0;
  reader.forEachPackedChunk(big_, 1, 2, [&](const PackedSlices& p) { read += std::int64_t(p.size()); });
  EXPECT_EQ(read, kSlices - 65536);
}

TEST_F(MultiChunkProfile, TheSummaryAddsUpToTheSlicesDurations) {
  const ProfileReader reader(path_);
  EXPECT_TRUE(reader.sliceSummaries(small_).empty());  // one chunk: loaded whole, no summary
  const auto summaries = reader.sliceSummaries(big_);
  ASSERT_EQ(summaries.size(), 1u);
  const SliceSummary& s = summaries[0];
  // Extent [0, 1,499,996) over 131,072 buckets: 12 cycles each.
  EXPECT_EQ(s.originTs, 0);
  EXPECT_EQ(s.bucketCycles, 12);
  EXPECT_EQ(std::int64_t(s.size()), (1'499'996 + 11) / 12);
  std::uint64_t busy = 0;
  for (const std::uint32_t b : s.busy) busy += b;
  EXPECT_EQ(busy, std::uint64_t(kSlices) * 6);
  // Bucket 0 ([0, 12)): the slice at 0 (6 cycles, exchange) and the one at 10 (2 of its 6, compute).
  EXPECT_EQ(s.busy[0], 8u);
  EXPECT_EQ(reader.packedSliceStrings().at(s.category[0]), "exchange");
}

TEST_F(MultiChunkProfile, ADamagedSummaryIsAnErrorNamingTheFile) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE slice_summary SET busy = x'0102'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const ProfileReader reader(path_);
  try {
    reader.sliceSummaries(big_);
    FAIL() << "expected ProfileError";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(path_ + ": corrupt slice_summary row of track"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("busy has 2 bytes"), std::string::npos) << e.what();
  }
}

TEST_F(MultiChunkProfile, ASummaryDepthOutsideTheRulesOfSlicesIsAnError) {
  // A summary's depth is a slices.depth: 2e9 was drawn as a row.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE slice_summary SET depth = 2000000000", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const ProfileReader reader(path_);
  try {
    reader.sliceSummaries(big_);
    FAIL() << "expected ProfileError";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find(path_ + ": corrupt slice_summary row of track " + std::to_string(big_) +
                                         " depth 2000000000: depth, bucket_cycles"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ipusim::traces::slice_summary_test
