#pragma once
// RecentProfiles: the start page's list of recently opened profiles, kept one
// path per line in $XDG_STATE_HOME/ipusim/recent-profiles (or
// ~/.local/state/ipusim/recent-profiles), newest first.
#include <string>
#include <vector>

namespace ipusim::viewer {

class RecentProfiles {
 public:
  // `file` empty: the default location from the environment.
  explicit RecentProfiles(std::string file = "");
  static std::string defaultFile();

  const std::vector<std::string>& paths() const { return paths_; }
  // Moves `path` to the front (absolute), keeps at most `limit`, saves.
  // A state directory that cannot be written is not an error for the viewer:
  // returns false and keeps the list in memory.
  bool remember(const std::string& path, std::size_t limit = 12);
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::string> paths_;
};

}  // namespace ipusim::viewer
