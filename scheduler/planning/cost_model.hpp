#pragma once
// The compiler's cost vocabulary: the cycles of one BSP phase, computed by
// the same rules the machine model applies (the codelets' cycles(), the
// tile's worker-interleaving rule, the exchange rate, latency and syncs of
// the Target), so that the planner and the simulator agree by construction.
#include "model/ir/types.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ipusim::model { class Codelet; }

namespace ipusim::scheduler {

inline std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Cycles of one vertex of `codelet` with these field sizes and params.
ir::Cycles vertexCycles(const std::string& codelet, const std::vector<std::uint64_t>& fieldSizes,
                        const std::map<std::string, double>& params, const model::Target& target);

// A codelet's cycles() called with its params in declaration order, without
// building a name -> value map per call: the planners cost tens of thousands
// of partitions. Throws std::logic_error if `paramOrder` is not the codelet's.
class VertexCost {
 public:
  VertexCost(const std::string& codelet, const std::vector<std::string>& paramOrder);
  ir::Cycles operator()(std::vector<std::uint64_t> sizes, std::vector<double> params, const model::Target& t) const;

 private:
  const model::Codelet& codelet_;
};

// A tile's compute cycles for worker vertices (dealt over the contexts) and
// supervisor vertices (run in turn): model::hardware::tileComputeCycles.
ir::Cycles tileCycles(const std::vector<ir::Cycles>& workers, const std::vector<ir::Cycles>& supervisors,
                      const model::Target& target);

// A compute phase whose busiest tile takes `busiestTile` cycles: that, then
// the internal sync that closes it.
ir::Cycles computePhaseCycles(ir::Cycles busiestTile, const model::Target& target);

// An exchange phase whose busiest tile sends or receives `busiestTileBytes`
// bytes across tiles: at exchange.bytesPerCycle, plus the phase latency.
ir::Cycles exchangePhaseCycles(std::uint64_t busiestTileBytes, const model::Target& target);

}  // namespace ipusim::scheduler
