#include "viewer/core/slice_search.hpp"

#include <algorithm>
#include <cctype>

namespace ipusim::viewer {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

void SliceSearch::run(const std::vector<std::unique_ptr<Lane>>& lanes, const std::string& query) {
  query_ = query;
  matches_.clear();
  position_ = 0;
  if (query.empty()) return;
  const std::string needle = lower(query);
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    const Lane& lane = *lanes[l];
    if (lane.kind != LaneKind::Slices || !lane.isLoaded()) continue;
    // Names are interned: test each distinct name once.
    std::vector<char> nameMatches(lane.strings.size(), 0);
    for (std::size_t i = 0; i < lane.strings.size(); ++i)
      nameMatches[i] = lower(lane.strings.at(std::uint32_t(i))).find(needle) != std::string::npos;
    for (std::size_t r = 0; r < lane.rows.size(); ++r) {
      const SliceColumns& row = lane.rows[r];
      for (std::size_t i = 0; i < row.size(); ++i)
        if (nameMatches[row.name[i]]) matches_.push_back({l, r, i, row.start[i], row.end[i]});
    }
  }
  std::stable_sort(matches_.begin(), matches_.end(), [](const SliceMatch& a, const SliceMatch& b) {
    return a.start != b.start ? a.start < b.start : a.lane < b.lane;
  });
}

std::optional<SliceMatch> SliceSearch::current() const {
  if (matches_.empty()) return std::nullopt;
  return matches_[position_];
}

void SliceSearch::next() {
  if (!matches_.empty()) position_ = (position_ + 1) % matches_.size();
}

void SliceSearch::previous() {
  if (!matches_.empty()) position_ = (position_ + matches_.size() - 1) % matches_.size();
}

}  // namespace ipusim::viewer
