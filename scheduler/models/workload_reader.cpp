#include "scheduler/models/workload_reader.hpp"

#include <cmath>
#include <stdexcept>

namespace ipusim::scheduler {
namespace {

// A range's bound in a message: 0 and 1, not 0.0 and 1.0 (as the Keras reader and the optimizers write them).
std::string rangeBound(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(std::int64_t(v)) : nlohmann::json(v).dump();
}

}  // namespace

WorkloadReader::WorkloadReader(const json& j, std::string source, std::string path)
    : j_(j), source_(std::move(source)), path_(std::move(path)) {
  if (!j_.is_object()) fail(path_.empty() ? "(document)" : path_, std::string("expected an object, got ") + j_.type_name());
}

void WorkloadReader::allowOnly(const std::set<std::string>& keys) const {
  for (auto it = j_.begin(); it != j_.end(); ++it)
    if (!keys.count(it.key())) {
      std::string valid;
      for (const auto& k : keys) valid += (valid.empty() ? "" : ", ") + k;
      fail(key(it.key()), "unknown key (valid keys here: " + valid + ")");
    }
}

WorkloadReader WorkloadReader::object(const std::string& k) const {
  static const json empty = json::object();
  return WorkloadReader(has(k) ? j_.at(k) : empty, source_, key(k));
}

std::string WorkloadReader::string(const std::string& k, const std::string& def,
                                   const std::set<std::string>& allowed) const {
  if (!has(k)) return def;
  const json& v = j_.at(k);
  if (!v.is_string()) fail(key(k), "expected a string, got " + v.dump());
  std::string s = v.get<std::string>();
  if (!allowed.empty() && !allowed.count(s)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : " | ") + a;
    fail(key(k), "'" + s + "' is not one of " + list);
  }
  return s;
}

std::uint64_t WorkloadReader::count(const std::string& k, std::uint64_t def, bool positive) const {
  if (!has(k)) return def;
  const json& v = j_.at(k);
  // An integer beyond 2^63 is unsigned in nlohmann::json: read as signed, 1e19
  // was "expected a positive integer, got 10000000000000000000".
  const bool negative = v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0;
  if (!v.is_number_integer() || negative || (positive && v.get<std::uint64_t>() == 0))
    fail(key(k), std::string(positive ? "expected a positive integer" : "expected a non-negative integer") + ", got " + v.dump());
  return v.get<std::uint64_t>();
}

std::uint32_t WorkloadReader::count32(const std::string& k, std::uint32_t def, bool positive) const {
  std::uint64_t v = count(k, def, positive);
  if (v > 0xffffffffull) fail(key(k), std::to_string(v) + " is more than 4294967295");
  return std::uint32_t(v);
}

double WorkloadReader::number(const std::string& k, double def) const {
  if (!has(k)) return def;
  if (!j_.at(k).is_number()) fail(key(k), "expected a number, got " + j_.at(k).dump());
  return j_.at(k).get<double>();
}

double WorkloadReader::numberIn(const std::string& k, double def, double lo, double hi, bool hiOpen) const {
  const double v = number(k, def);
  if (!(v >= lo && (hiOpen ? v < hi : v <= hi)))
    fail(key(k), "expected a number in [" + rangeBound(lo) + ", " + rangeBound(hi) + (hiOpen ? ")" : "]") + ", got " + json(v).dump());
  return v;
}

bool WorkloadReader::boolean(const std::string& k, bool def) const {
  if (!has(k)) return def;
  if (!j_.at(k).is_boolean()) fail(key(k), "expected true or false, got " + j_.at(k).dump());
  return j_.at(k).get<bool>();
}

std::array<std::uint32_t, 2> WorkloadReader::pair(const std::string& k, std::array<std::uint32_t, 2> def) const {
  if (!has(k)) return def;
  const json& v = j_.at(k);
  auto positive = [](const json& e) {
    return e.is_number_integer() && e.get<std::int64_t>() > 0 && e.get<std::int64_t>() <= 0xffffffffll;
  };
  if (positive(v)) return {v.get<std::uint32_t>(), v.get<std::uint32_t>()};
  if (v.is_array() && v.size() == 2 && positive(v[0]) && positive(v[1]))
    return {v[0].get<std::uint32_t>(), v[1].get<std::uint32_t>()};
  fail(key(k), "expected a positive integer or a pair of them [rows, columns], got " + v.dump());
}

std::uint32_t WorkloadReader::single(const std::string& k, std::uint32_t def) const {
  if (!has(k)) return def;
  const json& v = j_.at(k);
  const json& e = v.is_array() && v.size() == 1 ? v[0] : v;
  if (e.is_number_integer() && e.get<std::int64_t>() > 0 && e.get<std::int64_t>() <= 0xffffffffll) return e.get<std::uint32_t>();
  fail(key(k), "expected a positive integer (or a list of one), got " + v.dump());
}

std::vector<std::int64_t> WorkloadReader::integers(const std::string& k) const {
  if (!has(k)) fail(key(k), "missing (expected an array of integers)");
  const json& v = j_.at(k);
  if (!v.is_array() || v.empty()) fail(key(k), "expected a non-empty array of integers, got " + v.dump());
  std::vector<std::int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) fail(key(k), "expected integers, got " + v.dump());
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

std::vector<std::string> WorkloadReader::strings(const std::string& k) const {
  if (!has(k)) fail(key(k), "missing (expected an array of strings)");
  const json& v = j_.at(k);
  if (!v.is_array() || v.empty()) fail(key(k), "expected a non-empty array of strings, got " + v.dump());
  std::vector<std::string> out;
  for (const json& e : v) {
    if (!e.is_string()) fail(key(k), "expected strings, got " + v.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

void WorkloadReader::fail(const std::string& keyPath, const std::string& what) const {
  throw std::invalid_argument(source_ + ": " + keyPath + ": " + what);
}

}  // namespace ipusim::scheduler
