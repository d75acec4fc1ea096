#include "model/util/json_unique_keys.hpp"

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

namespace ipusim::util {
namespace {

// A SAX pass over the text that keeps no value, only each open object's keys
// (nlohmann's parser callback was not used for this: on every object's end
// it walks the enclosing array for a discarded element, so an array of
// 200,000 objects took 8 s to parse, quadratic in the array's length).
class UniqueKeys {
 public:
  explicit UniqueKeys(const std::string& source) : source_(source) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& name) {
    lastKey_ = name;
    if (!frames_.empty() && !frames_.back().keys.insert(name).second) {
      const std::string& prefix = frames_.back().prefix;
      throw std::invalid_argument(source_ + ": " + (prefix.empty() ? "" : prefix + ".") +
                                  (name.empty() ? "\"\" (the empty key)" : name) +
                                  ": given twice in one object (JSON keeps only the last); expected each key once");
    }
    return true;
  }
  // A syntax error: the DOM parse that follows reports it as its callers expect.
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) { return false; }

 private:
  struct Frame {
    std::string prefix;  // the container's path: "pipeline", "model.layers[]"
    bool array = false;
    std::set<std::string> keys;
  };

  bool open(bool array) {
    std::string prefix;
    if (!frames_.empty()) {
      const Frame& outer = frames_.back();
      prefix = outer.array ? outer.prefix + "[]" : (outer.prefix.empty() ? "" : outer.prefix + ".") + lastKey_;
    }
    frames_.push_back({std::move(prefix), array, {}});
    return true;
  }
  bool close() {
    if (!frames_.empty()) frames_.pop_back();
    return true;
  }

  const std::string& source_;
  std::vector<Frame> frames_;  // bounded by the nesting checked before (json_nesting.hpp)
  std::string lastKey_;
};

}  // namespace

nlohmann::json parseJsonWithUniqueKeys(std::string_view text, const std::string& source, bool allowExceptions) {
  UniqueKeys keys(source);
  nlohmann::json::sax_parse(text, &keys, nlohmann::json::input_format_t::json, /*strict=*/true);
  return nlohmann::json::parse(text, nullptr, allowExceptions);
}

}  // namespace ipusim::util
