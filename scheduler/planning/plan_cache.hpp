#pragma once
// Plans cached by shape and machine, as poplin caches its plans: a model
// repeats its shapes (every layer of an MLP, forward and backward), and a
// plan is a pure function of (shape, target, tiles, budget). Thread-safe.
#include "model/target.hpp"

#include <cstdint>
#include <mutex>
#include <vector>

namespace ipusim::scheduler {

template <class Shape, class Plan>
class PlanCache {
 public:
  // The cached plan for these keys, or make() computed, cached and returned.
  template <class Make>
  Plan get(const Shape& shape, const model::Target& target, std::uint32_t tiles, std::uint64_t budget, Make&& make) {
    const nlohmann::json targetKey = target.toJson();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const Entry& e : entries_)
        if (e.shape == shape && e.tiles == tiles && e.budget == budget && e.target == targetKey) return e.plan;
    }
    Plan plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back({shape, targetKey, tiles, budget, plan});
    return plan;
  }

 private:
  struct Entry {
    Shape shape;
    nlohmann::json target;
    std::uint32_t tiles;
    std::uint64_t budget;
    Plan plan;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace ipusim::scheduler
