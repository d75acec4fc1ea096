#pragma once
// VertexParams: a vertex's scalar parameters by name ("scale", "m", ...), as
// a map would hold them but flat: a vector of (Name, value) kept sorted by
// name, 16 bytes a parameter where a std::map node took about 80 (a
// compiled ResNet-50 step has 18 million of them). The map operations the
// compiler and the engine use: operator[], at, find, count, iteration in
// name order.
#include "model/ir/name.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ipusim::ir {

class VertexParams {
 public:
  using value_type = std::pair<Name, double>;
  using const_iterator = std::vector<value_type>::const_iterator;

  VertexParams() = default;
  // (Keys as Names: a string literal's is looked up by its address, not hashed.)
  VertexParams(std::initializer_list<std::pair<Name, double>> items) {
    items_.reserve(items.size());  // (one allocation a vertex, not one per doubling)
    for (const auto& [k, v] : items) (*this)[k] = v;
  }
  VertexParams(const std::map<std::string, double>& m) {  // NOLINT: converts as the map it replaces
    items_.reserve(m.size());
    for (const auto& [k, v] : m) items_.emplace_back(Name(k), v);  // already in name order
  }

  double& operator[](Name key) {
    auto it = lower(key);
    if (it == items_.end() || it->first != key) it = items_.insert(it, {key, 0.0});
    return it->second;
  }
  double at(Name key) const {
    const auto it = find(key);
    if (it == end()) throw std::out_of_range("vertex param '" + key.str() + "'");
    return it->second;
  }
  const_iterator find(Name key) const {
    const auto it = std::lower_bound(items_.begin(), items_.end(), key, [](const value_type& e, Name k) { return e.first < k; });
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  std::size_t count(Name key) const { return find(key) == end() ? 0 : 1; }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  bool operator==(const VertexParams& o) const { return items_ == o.items_; }

 private:
  std::vector<value_type>::iterator lower(Name key) {
    return std::lower_bound(items_.begin(), items_.end(), key, [](const value_type& e, Name k) { return e.first < k; });
  }
  std::vector<value_type> items_;
};

}  // namespace ipusim::ir
