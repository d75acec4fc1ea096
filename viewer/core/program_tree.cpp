#include "viewer/core/program_tree.hpp"

#include <algorithm>

namespace ipusim::viewer {

ProgramTree::ProgramTree(std::vector<traces::ProgramRow> rows) : rows_(std::move(rows)) {
  for (std::size_t i = 0; i < rows_.size(); ++i) index_[rows_[i].id] = i;
  for (const auto& row : rows_) {
    if (row.parentId >= 0 && index_.count(row.parentId)) children_[row.parentId].push_back(row.id);
    else roots_.push_back(row.id);
  }
  auto byOrdinal = [this](std::int64_t a, std::int64_t b) {
    return find(a)->ordinal < find(b)->ordinal || (find(a)->ordinal == find(b)->ordinal && a < b);
  };
  std::sort(roots_.begin(), roots_.end(), byOrdinal);
  for (auto& [id, list] : children_) std::sort(list.begin(), list.end(), byOrdinal);
}

const std::vector<std::int64_t>& ProgramTree::children(std::int64_t id) const {
  static const std::vector<std::int64_t> none;
  auto it = children_.find(id);
  return it == children_.end() ? none : it->second;
}

const traces::ProgramRow* ProgramTree::find(std::int64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &rows_[it->second];
}

std::string ProgramTree::path(std::int64_t id) const {
  std::vector<std::string> parts;
  // Bounded by the tree size: a malformed profile with a parent cycle must not hang.
  for (std::size_t guard = 0; guard <= rows_.size(); ++guard) {
    const auto* row = find(id);
    if (!row) break;
    parts.push_back(programLabel(*row));
    id = row->parentId;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += " / ";
    out += *it;
  }
  return out;
}

bool ProgramTree::isWithin(std::int64_t id, std::int64_t ancestor) const {
  for (std::size_t guard = 0; guard <= rows_.size(); ++guard) {
    if (id == ancestor) return true;
    const auto* row = find(id);
    if (!row) return false;
    id = row->parentId;
  }
  return false;
}

std::string programLabel(const traces::ProgramRow& row) {
  std::string label = row.kind;
  if (!row.name.empty()) label += " " + row.name;
  return label;
}

}  // namespace ipusim::viewer
