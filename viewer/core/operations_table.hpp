#pragma once
// OperationsTable: the viewer's operations summary — the rows of
// profiler/analysis/operations_summary.hpp (one definition for report --ops
// and the viewer), sortable by any column, and the programs of a selected row
// (whose slices the trace highlights).
#include "profiler/analysis/operations_summary.hpp"

#include <cstdint>
#include <string>
#include <unordered_set>

namespace ipusim::viewer {

enum class OperationColumn {
  Name, Pass, Cycles, Share, Compute, Exchange, Sync, StreamingMemory, Flops, FlopRate, Tiles, Memory
};

class OperationsTable {
 public:
  explicit OperationsTable(profiler::analysis::OperationsSummary summary);
  const profiler::analysis::OperationsSummary& summary() const { return summary_; }
  const std::vector<profiler::analysis::OperationRow>& rows() const { return summary_.rows; }
  void sortBy(OperationColumn column, bool ascending);
  // Selects a row (an index into rows(), or -1 for none).
  void select(std::int64_t row) { selected_ = row; }
  std::int64_t selected() const { return selected_; }
  // Selects the first row whose "layer/op" contains `text`; returns false
  // (selection unchanged) when none does.
  bool selectNamed(const std::string& text);
  // The program ids of the selected row (empty when none is selected).
  std::unordered_set<std::int64_t> selectedPrograms() const;

 private:
  profiler::analysis::OperationsSummary summary_;
  std::int64_t selected_ = -1;
};

}  // namespace ipusim::viewer
