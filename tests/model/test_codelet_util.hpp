#pragma once
// Helpers shared by the codelet tests: bind std::vectors to a codelet's
// fields, build a VertexShape from named params, run validate + compute.
#include "model/codelets/codelet.hpp"
#include "model/numeric/half.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::model::testing {

// One field's storage: float, int or half (bit patterns), by the codelet's
// declared dtype.
struct Buffer {
  std::vector<float> floats;
  std::vector<std::int32_t> ints;
  std::vector<numeric::HalfBits> halves;
  static Buffer of(std::vector<float> v) { return Buffer{std::move(v), {}, {}}; }
  static Buffer ofInts(std::vector<std::int32_t> v) { return Buffer{{}, std::move(v), {}}; }
  // Each value rounded to the nearest half.
  static Buffer ofHalves(const std::vector<float>& v) {
    Buffer b;
    for (float x : v) b.halves.push_back(numeric::floatToHalf(x));
    return b;
  }
  std::uint64_t size() const {
    if (!halves.empty()) return halves.size();
    return floats.empty() ? ints.size() : floats.size();
  }
  // The half values as floats.
  std::vector<float> halfValues() const {
    std::vector<float> v;
    for (auto h : halves) v.push_back(numeric::halfToFloat(h));
    return v;
  }
};

inline VertexShape shapeOf(const Codelet& codelet, const std::vector<std::uint64_t>& sizes,
                           const std::map<std::string, double>& params = {}) {
  return VertexShape{sizes, orderedParams(codelet, params)};
}

inline std::vector<std::uint64_t> sizesOf(const std::vector<Buffer>& buffers) {
  std::vector<std::uint64_t> sizes;
  for (const auto& b : buffers) sizes.push_back(b.size());
  return sizes;
}

// Validates the vertex, then runs compute() on the buffers (in fields() order).
inline void run(const std::string& codeletName, std::vector<Buffer>& buffers,
                const std::map<std::string, double>& params = {}) {
  const Codelet& codelet = CodeletRegistry::instance().get(codeletName);
  const VertexShape shape = shapeOf(codelet, sizesOf(buffers), params);
  codelet.validate(shape);
  std::vector<FieldData> fields;
  for (auto& b : buffers)
    fields.push_back(!b.halves.empty()                       ? FieldData{b.halves.data(), b.halves.size()}
                     : b.floats.empty() && !b.ints.empty() ? FieldData{b.ints.data(), b.ints.size()}
                                                           : FieldData{b.floats.data(), b.floats.size()});
  codelet.compute(fields, shape.params);
}

inline ir::Cycles cyclesOf(const std::string& codeletName, const std::vector<std::uint64_t>& sizes,
                           const std::map<std::string, double>& params = {}, const Target& target = Target{}) {
  const Codelet& codelet = CodeletRegistry::instance().get(codeletName);
  const VertexShape shape = shapeOf(codelet, sizes, params);
  codelet.validate(shape);
  return codelet.cycles(shape, target);
}

// Deterministic pseudo-random floats in [-1, 1) (a fixed LCG: no <random>
// distribution, whose output may differ between standard libraries).
inline std::vector<float> pseudoRandom(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t state = seed * 2654435761u + 1;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = float(state >> 8) / float(1u << 23) - 1.0f;
  }
  return v;
}

}  // namespace ipusim::model::testing
