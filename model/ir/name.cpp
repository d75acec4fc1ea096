#include "model/ir/name.hpp"

#include <cstdint>
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

// Most names come from string literals ("in", "out", "ConvPartialnx1"): a
// small per-thread cache by the characters' address, confirmed by content
// (the address may be a reused buffer's), skips the hash and the lock.
const std::string* internCString(const char* s) {
  struct Entry {
    const char* chars = nullptr;
    const std::string* interned = nullptr;
  };
  thread_local Entry cache[64];
  Entry& e = cache[(reinterpret_cast<std::uintptr_t>(s) >> 3) % 64];
  if (e.chars == s && e.interned->compare(s) == 0) return e.interned;
  e = {s, intern(s)};
  return e.interned;
}

}  // namespace

Name::Name() {
  static const std::string* const empty = intern("");
  s_ = empty;
}
Name::Name(std::string_view s) : s_(intern(s)) {}
Name::Name(const char* s) : s_(internCString(s)) {}

}  // namespace ipusim::ir
