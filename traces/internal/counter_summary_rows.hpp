#pragma once
// Internal to traces/: counter_summary rows (SCHEMA.md) to and from
// CounterSummary, for the writer, the reader and the verification.
#include "traces/counter_summary.hpp"
#include "traces/internal/sqlite_statement.hpp"

#include <cstdint>
#include <string>

namespace ipusim::traces::internal {

// The columns, in the order readCounterSummaryRow expects them.
inline constexpr const char* kCounterSummaryColumns =
    "track_id, value_count, origin_ts, bucket_cycles, bucket_count, bucket_values, first_ts, last_ts, "
    "value_min, value_max, value_first, value_last";

// Inserts the row of track `trackId`.
void writeCounterSummary(sqlite3* db, const std::string& path, std::int64_t trackId, const CounterSummary& summary);

// The row `s` stands on (selected with kCounterSummaryColumns), checked:
// bucket width and count in range, every array as long as bucket_count, the
// counts adding up to value_count, every non-empty bucket's first and last
// ts inside it and in order. Throws ProfileError naming the file, the track
// and the problem.
CounterSummary readCounterSummaryRow(const Statement& s, const std::string& path);

}  // namespace ipusim::traces::internal
