#include "traces/internal/slice_batch_inserter.hpp"

#include <utility>

namespace ipusim::traces::internal {

namespace {

constexpr int kColumnsPerSlice = 12;

std::string insertSql(int rows) {
  std::string sql =
      "INSERT INTO slices(id, track_id, run_id, ts, dur, name, category, depth, parent_id, "
      "program_id, phase_id, bytes) VALUES ";
  for (int r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ",(";
    for (int c = 0; c < kColumnsPerSlice; ++c) sql += c == 0 ? "?" : ",?";
    sql += ")";
  }
  return sql;
}

}  // namespace

SliceBatchInserter::SliceBatchInserter(sqlite3* db, const std::string& file)
    : batchInsert_(db, insertSql(kRowsPerStatement), file), singleInsert_(db, insertSql(1), file) {
  pending_.reserve(kRowsPerStatement);
}

void SliceBatchInserter::add(SliceRow&& row) {
  pending_.push_back(std::move(row));
  if (pending_.size() == kRowsPerStatement) flush();
}

void SliceBatchInserter::flush() {
  if (pending_.size() == kRowsPerStatement) {
    insertAll(batchInsert_, 0, kRowsPerStatement);
  } else {
    for (std::size_t i = 0; i < pending_.size(); ++i) insertAll(singleInsert_, i, 1);
  }
  pending_.clear();
}

void SliceBatchInserter::close() noexcept {
  batchInsert_ = Statement();
  singleInsert_ = Statement();
  pending_.clear();
}

void SliceBatchInserter::bindRow(Statement& s, int p, const SliceRow& row) {
  s.bindInt(p + 0, row.id);
  s.bindInt(p + 1, row.trackId);
  s.bindOptionalInt(p + 2, row.runId);
  s.bindInt(p + 3, row.ts);
  s.bindInt(p + 4, row.dur);
  s.bindTextNoCopy(p + 5, row.name);  // pending_ keeps the row until the step
  s.bindTextNoCopy(p + 6, row.category);
  s.bindInt(p + 7, row.depth);
  s.bindOptionalInt(p + 8, row.parentId);
  s.bindOptionalInt(p + 9, row.programId);
  s.bindOptionalInt(p + 10, row.phaseId);
  s.bindOptionalInt(p + 11, row.bytes);
}

void SliceBatchInserter::insertAll(Statement& statement, std::size_t first, std::size_t count) {
  for (std::size_t r = 0; r < count; ++r)
    bindRow(statement, static_cast<int>(r) * kColumnsPerSlice + 1, pending_[first + r]);
  const SliceRow& head = pending_[first];
  const SliceRow& tail = pending_[first + count - 1];
  // Name the rows: "cannot add slice 7 'fc1'" or "cannot add slices 65..128".
  const std::string action =
      count == 1 ? "cannot add slice " + std::to_string(head.id) + " '" + head.name + "'"
                 : "cannot add slices " + std::to_string(head.id) + ".." + std::to_string(tail.id);
  statement.execute(action.c_str());
}

}  // namespace ipusim::traces::internal
