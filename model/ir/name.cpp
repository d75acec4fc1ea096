#include "model/ir/name.hpp"

#include <mutex>
#include <unordered_set>

namespace ipusim::ir {
namespace {

// The interned strings: node-based, so an element's address never changes.
struct Table {
  std::mutex mutex;
  std::unordered_set<std::string> strings;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: Names may outlive static destructors
  return *t;
}

const std::string* intern(std::string_view s) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return &*t.strings.emplace(s).first;
}

}  // namespace

Name::Name() {
  static const std::string* const empty = intern("");
  s_ = empty;
}
Name::Name(std::string_view s) : s_(intern(s)) {}

}  // namespace ipusim::ir
