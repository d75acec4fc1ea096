#include "traces/internal/counter_summary_rows.hpp"

#include "traces/internal/little_endian_blobs.hpp"
#include "traces/profile_error.hpp"

namespace ipusim::traces::internal {

void writeCounterSummary(sqlite3* db, const std::string& path, std::int64_t trackId, const CounterSummary& summary) {
  Statement insert(db, std::string("INSERT INTO counter_summary(") + kCounterSummaryColumns +
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                   path);
  insert.bindInt(1, trackId);
  insert.bindInt(2, summary.valueCount);
  insert.bindInt(3, summary.originTs);
  insert.bindInt(4, summary.bucketCycles);
  insert.bindInt(5, static_cast<std::int64_t>(summary.size()));
  insert.bindBlob(6, encodeWords(summary.count));
  insert.bindBlob(7, encodeInt64s(summary.firstTs));
  insert.bindBlob(8, encodeInt64s(summary.lastTs));
  insert.bindBlob(9, encodeDoubles(summary.min));
  insert.bindBlob(10, encodeDoubles(summary.max));
  insert.bindBlob(11, encodeDoubles(summary.first));
  insert.bindBlob(12, encodeDoubles(summary.last));
  insert.execute("cannot write counter_summary");
}

CounterSummary readCounterSummaryRow(const Statement& s, const std::string& path) {
  const std::int64_t trackId = s.columnInt(0);
  const std::string what = path + ": damaged profile: counter_summary row of track " + std::to_string(trackId);
  CounterSummary out;
  out.valueCount = s.columnInt(1);
  out.originTs = s.columnInt(2);
  out.bucketCycles = s.columnInt(3);
  const std::int64_t count = s.columnInt(4);
  // Bounded by the data: no more buckets than the writer ever makes, and
  // every bucket's cycles within int64.
  constexpr std::int64_t kMaxCycles = std::int64_t(1) << 62;
  if (out.valueCount < 0 || out.originTs < 0 || out.originTs > kMaxCycles || out.bucketCycles < 1 || count < 1 ||
      count > (std::int64_t(1) << 24) || out.bucketCycles > (kMaxCycles - out.originTs) / count)
    throw ProfileError(what + ": value_count " + std::to_string(out.valueCount) + ", origin_ts " +
                       std::to_string(out.originTs) + ", bucket_cycles " + std::to_string(out.bucketCycles) +
                       " or bucket_count " + std::to_string(count) + " out of range");
  out.count = decodeWords(s.columnBlob(5), count, what + ": bucket_values");
  out.firstTs = decodeInt64s(s.columnBlob(6), count, what + ": first_ts");
  out.lastTs = decodeInt64s(s.columnBlob(7), count, what + ": last_ts");
  out.min = decodeDoubles(s.columnBlob(8), count, what + ": value_min");
  out.max = decodeDoubles(s.columnBlob(9), count, what + ": value_max");
  out.first = decodeDoubles(s.columnBlob(10), count, what + ": value_first");
  out.last = decodeDoubles(s.columnBlob(11), count, what + ": value_last");
  std::int64_t values = 0;
  for (std::size_t b = 0; b < out.size(); ++b) {
    if (out.count[b] == 0) continue;
    values += out.count[b];
    const std::int64_t from = out.originTs + std::int64_t(b) * out.bucketCycles, to = from + out.bucketCycles;
    if (out.firstTs[b] < from || out.lastTs[b] < out.firstTs[b] || out.lastTs[b] >= to)
      throw ProfileError(what + ": bucket " + std::to_string(b) + " holds ts " + std::to_string(out.firstTs[b]) +
                         ".." + std::to_string(out.lastTs[b]) + ", outside its cycles [" + std::to_string(from) +
                         ", " + std::to_string(to) + ")");
  }
  if (values != out.valueCount)
    throw ProfileError(what + ": its buckets hold " + std::to_string(values) + " values, value_count says " +
                       std::to_string(out.valueCount));
  return out;
}

}  // namespace ipusim::traces::internal
