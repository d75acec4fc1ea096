#pragma once
// ProgramTree: the profile's programs table as a tree, for the program panel
// and for the "program path" of a slice (its parent chain).
#include "traces/profile_rows.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ipusim::viewer {

class ProgramTree {
 public:
  ProgramTree() = default;
  explicit ProgramTree(std::vector<traces::ProgramRow> rows);

  const std::vector<std::int64_t>& roots() const { return roots_; }
  const std::vector<std::int64_t>& children(std::int64_t id) const;
  const traces::ProgramRow* find(std::int64_t id) const;
  // "Sequence main / Repeat 10 / Execute dense_1/matmul": root first.
  std::string path(std::int64_t id) const;
  // True when `id` is `ancestor` or below it.
  bool isWithin(std::int64_t id, std::int64_t ancestor) const;
  std::size_t size() const { return rows_.size(); }

 private:
  std::vector<traces::ProgramRow> rows_;
  std::unordered_map<std::int64_t, std::size_t> index_;
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> children_;
  std::vector<std::int64_t> roots_;
};

// "Execute dense_1/matmul" style label of one program.
std::string programLabel(const traces::ProgramRow& row);

}  // namespace ipusim::viewer
