#pragma once
// SliceColumns: the slices of one row of a lane (one nesting depth of one
// track), column-wise, sorted by start. Within a row slices never overlap:
// LaneLoader puts a slice that starts before its row's last end on an extra
// row, so binary searches on `start` find what is under a point.
//
// Names and categories are interned (StringTable) so a slice costs 29 bytes:
// 10 million slices fit in ~300 MB and a row scan touches only what it needs.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ipusim::viewer {

// Interns strings: the same text always gets the same small index.
class StringTable {
 public:
  std::uint32_t intern(const std::string& text);
  const std::string& at(std::uint32_t index) const { return strings_.at(index); }
  std::size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

struct SliceColumns {
  std::vector<std::int64_t> start;     // cycles
  std::vector<std::int64_t> end;       // cycles, start + dur
  std::vector<std::int64_t> sliceId;   // slices.id, for details on demand
  std::vector<std::uint32_t> name;     // index into the lane's StringTable
  std::vector<std::uint8_t> category;  // index into the lane's StringTable (< 256 categories)
  std::vector<std::int32_t> programId; // programs.id, -1 when none
  std::vector<std::int64_t> phaseId;   // BSP lanes only (else empty): the static phase run

  std::size_t size() const { return start.size(); }
  bool empty() const { return start.empty(); }
  // Room for `n` slices (phaseId too when `withPhases`).
  void reserve(std::size_t n, bool withPhases);
  void push(std::int64_t s, std::int64_t e, std::int64_t id, std::uint32_t n, std::uint8_t c,
            std::int32_t program = -1);
  // First index whose slice ends after `cycle` (the first one visible from there).
  std::size_t firstEndingAfter(std::int64_t cycle) const;
  // First index whose slice starts at or after `cycle`.
  std::size_t firstStartingAtOrAfter(std::int64_t cycle, std::size_t from = 0) const;
};

}  // namespace ipusim::viewer
