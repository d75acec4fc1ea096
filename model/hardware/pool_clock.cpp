#include "model/hardware/pool_clock.hpp"

namespace ipusim::model::hardware {
namespace {

class SteadyPoolClock final : public PoolClock {
 public:
  std::chrono::nanoseconds now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  }
};

}  // namespace

const PoolClock& steadyPoolClock() {
  static const SteadyPoolClock clock;
  return clock;
}

}  // namespace ipusim::model::hardware
