#pragma once
// WorkloadReader: reads one JSON object of a workload (or of a Keras model
// file), checking keys and types; every error is std::invalid_argument
// "<source>: <key path>: <what>". Internal to scheduler/.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class WorkloadReader {
 public:
  using json = nlohmann::json;
  WorkloadReader(const json& j, std::string source, std::string path);

  void allowOnly(const std::set<std::string>& keys) const;
  bool has(const std::string& k) const { return j_.contains(k); }
  WorkloadReader object(const std::string& k) const;  // an absent key reads as {}
  std::string string(const std::string& k, const std::string& def, const std::set<std::string>& allowed = {}) const;
  std::uint64_t count(const std::string& k, std::uint64_t def, bool positive) const;
  std::uint32_t count32(const std::string& k, std::uint32_t def, bool positive) const;
  double number(const std::string& k, double def) const;
  // A number in [lo, hi] (or [lo, hi) when hiOpen), named in the error.
  double numberIn(const std::string& k, double def, double lo, double hi, bool hiOpen) const;
  bool boolean(const std::string& k, bool def) const;
  // A positive integer or a pair of them ([rows, columns]), as Keras's kernel_size.
  std::array<std::uint32_t, 2> pair(const std::string& k, std::array<std::uint32_t, 2> def) const;
  // A positive integer or an array of one (a 1-D layer's pool_size, strides).
  std::uint32_t single(const std::string& k, std::uint32_t def) const;
  // A non-empty array of integers (reshape's target_shape).
  std::vector<std::int64_t> integers(const std::string& k) const;
  // A non-empty array of strings (a layer's inputs).
  std::vector<std::string> strings(const std::string& k) const;

  const json& raw() const { return j_; }
  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  [[noreturn]] void fail(const std::string& keyPath, const std::string& what) const;
  const std::string& source() const { return source_; }

 private:
  const json& j_;
  std::string source_, path_;
};

}  // namespace ipusim::scheduler
