#pragma once
// SliceSearch: find slices by name in the loaded lanes of a profile, and step
// through the matches with next/previous (wrapping), in time order. The
// match is a case-insensitive substring of the slice's name; lanes still
// loading are searched when the search is run again.
#include "viewer/core/lane.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::viewer {

struct SliceMatch {
  std::size_t lane = 0, row = 0, index = 0;
  std::int64_t start = 0, end = 0;
};

class SliceSearch {
 public:
  // Finds every slice whose name contains `query` (an empty query finds
  // nothing); the current match becomes the first one.
  void run(const std::vector<std::unique_ptr<Lane>>& lanes, const std::string& query);
  const std::string& query() const { return query_; }
  std::size_t count() const { return matches_.size(); }
  const std::vector<SliceMatch>& matches() const { return matches_; }
  // The current match and its 0-based position; nullopt when there is none.
  std::optional<SliceMatch> current() const;
  std::size_t position() const { return position_; }
  void next();
  void previous();

 private:
  std::string query_;
  std::vector<SliceMatch> matches_;
  std::size_t position_ = 0;
};

}  // namespace ipusim::viewer
