#pragma once
// Internal to traces/: inserts slice rows kRowsPerStatement at a time with one
// multi-row INSERT, which roughly halves SQLite's per-row statement overhead
// (step, reset, VDBE start-up) on the profile's hottest path.
//
// Rows are buffered until a batch is full or flush() is called, so an
// insertion error (a duplicate id) surfaces at the flush that writes the
// row; the message names the ids of the batch.
#include "traces/internal/sqlite_statement.hpp"
#include "traces/profile_rows.hpp"

#include <string>
#include <vector>

namespace ipusim::traces::internal {

class SliceBatchInserter {
 public:
  static constexpr int kRowsPerStatement = 64;

  SliceBatchInserter() = default;
  SliceBatchInserter(sqlite3* db, const std::string& file);

  void add(SliceRow&& row);
  // Writes the buffered rows. Throws ProfileError.
  void flush();
  // Drops the statements (before the connection closes) and buffered rows.
  void close() noexcept;

 private:
  void bindRow(Statement& statement, int firstParameter, const SliceRow& row);
  void insertAll(Statement& statement, std::size_t first, std::size_t count);

  Statement batchInsert_;   // kRowsPerStatement rows
  Statement singleInsert_;  // the remainder at flush()
  std::vector<SliceRow> pending_;
};

}  // namespace ipusim::traces::internal
