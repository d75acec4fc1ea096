#include "viewer/core/operations_table.hpp"

#include <algorithm>
#include <tuple>

namespace ipusim::viewer {

using profiler::analysis::OperationRow;

OperationsTable::OperationsTable(profiler::analysis::OperationsSummary summary) : summary_(std::move(summary)) {}

void OperationsTable::sortBy(OperationColumn column, bool ascending) {
  const auto& s = summary_;
  const auto key = [&](const OperationRow& r) -> double {
    switch (column) {
      case OperationColumn::Cycles: case OperationColumn::Share: return double(r.cycles());
      case OperationColumn::Compute: return double(r.compute);
      case OperationColumn::Exchange: return double(r.exchange);
      case OperationColumn::Sync: return double(r.sync);
      case OperationColumn::StreamingMemory: return double(r.streamingMemory);
      case OperationColumn::Flops: return double(r.flops);
      case OperationColumn::FlopRate: return s.flopsPerSecond(r);
      case OperationColumn::Tiles: return double(r.tiles);
      case OperationColumn::Memory: return double(r.memoryBytes);
      default: return 0;
    }
  };
  // Keep the selection on the same row.
  const OperationRow* chosen = selected_ >= 0 && selected_ < std::int64_t(rows().size()) ? &rows()[selected_] : nullptr;
  const auto chosenKey = chosen ? std::make_tuple(chosen->layer, chosen->op) : std::make_tuple(std::string(), std::string());
  std::stable_sort(summary_.rows.begin(), summary_.rows.end(), [&](const OperationRow& a, const OperationRow& b) {
    bool less;
    if (column == OperationColumn::Name) less = std::tie(a.layer, a.op) < std::tie(b.layer, b.op);
    else if (column == OperationColumn::Pass) less = a.pass < b.pass;
    else less = key(a) < key(b);
    bool greater;
    if (column == OperationColumn::Name) greater = std::tie(b.layer, b.op) < std::tie(a.layer, a.op);
    else if (column == OperationColumn::Pass) greater = b.pass < a.pass;
    else greater = key(b) < key(a);
    return ascending ? less : greater;
  });
  if (chosen) {
    for (std::size_t i = 0; i < rows().size(); ++i)
      if (std::make_tuple(rows()[i].layer, rows()[i].op) == chosenKey) selected_ = std::int64_t(i);
  }
}

bool OperationsTable::selectNamed(const std::string& text) {
  for (std::size_t i = 0; i < rows().size(); ++i) {
    if ((rows()[i].layer + "/" + rows()[i].op).find(text) != std::string::npos) {
      selected_ = std::int64_t(i);
      return true;
    }
  }
  return false;
}

std::unordered_set<std::int64_t> OperationsTable::selectedPrograms() const {
  if (selected_ < 0 || selected_ >= std::int64_t(rows().size())) return {};
  const auto& ids = rows()[selected_].programIds;
  return {ids.begin(), ids.end()};
}

}  // namespace ipusim::viewer
