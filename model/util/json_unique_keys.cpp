#include "model/util/json_unique_keys.hpp"

#include <set>
#include <stdexcept>
#include <vector>

namespace ipusim::util {

nlohmann::json parseJsonWithUniqueKeys(std::string_view text, const std::string& source, bool allowExceptions) {
  using json = nlohmann::json;
  struct Frame {
    std::string prefix;  // the container's path: "pipeline", "model.layers[]"
    bool array = false;
    std::set<std::string> keys;
  };
  std::vector<Frame> open;  // bounded by the nesting checked before (json_nesting.hpp)
  std::string lastKey;
  json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string prefix;
        if (!open.empty()) {
          const Frame& outer = open.back();
          prefix = outer.array ? outer.prefix + "[]" : (outer.prefix.empty() ? "" : outer.prefix + ".") + lastKey;
        }
        open.push_back({prefix, event == json::parse_event_t::array_start, {}});
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        lastKey = parsed.get<std::string>();
        if (!open.empty() && !open.back().keys.insert(lastKey).second) {
          const std::string& prefix = open.back().prefix;
          throw std::invalid_argument(source + ": " + (prefix.empty() ? "" : prefix + ".") + lastKey +
                                      ": given twice in one object (JSON keeps only the last); expected each key once");
        }
        break;
      default:
        break;
    }
    return true;
  };
  return json::parse(text, check, allowExceptions);
}

}  // namespace ipusim::util
