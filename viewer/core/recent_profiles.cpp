#include "viewer/core/recent_profiles.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ipusim::viewer {

namespace fs = std::filesystem;

std::string RecentProfiles::defaultFile() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    return (fs::path(state) / "ipusim" / "recent-profiles").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".local" / "state" / "ipusim" / "recent-profiles").string();
  return "";
}

RecentProfiles::RecentProfiles(std::string file) : file_(file.empty() ? defaultFile() : std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && std::find(paths_.begin(), paths_.end(), line) == paths_.end())
      paths_.push_back(line);
}

bool RecentProfiles::remember(const std::string& path, std::size_t limit) {
  std::error_code ec;
  std::string absolute = fs::absolute(path, ec).lexically_normal().string();
  if (ec) absolute = path;
  paths_.erase(std::remove(paths_.begin(), paths_.end(), absolute), paths_.end());
  paths_.insert(paths_.begin(), absolute);
  if (paths_.size() > limit) paths_.resize(limit);
  if (file_.empty()) return false;
  fs::create_directories(fs::path(file_).parent_path(), ec);
  std::ofstream out(file_, std::ios::trunc);
  for (const auto& p : paths_) out << p << '\n';
  return static_cast<bool>(out);
}

}  // namespace ipusim::viewer
