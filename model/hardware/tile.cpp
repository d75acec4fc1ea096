#include "model/hardware/tile.hpp"

#include <algorithm>
#include <cstring>

namespace ipusim::model::hardware {

ir::Cycles tileComputeCycles(const std::vector<ir::Cycles>& workerVertexCycles,
                             const std::vector<ir::Cycles>& supervisorVertexCycles,
                             const TileParams& params) {
  if (workerVertexCycles.empty() && supervisorVertexCycles.empty()) return 0;
  const std::uint32_t contexts = std::max<std::uint32_t>(1, params.workerContexts);
  std::vector<ir::Cycles> load(contexts, 0);
  for (ir::Cycles c : workerVertexCycles) {
    auto least = std::min_element(load.begin(), load.end());
    *least += c;
  }
  ir::Cycles cycles = ir::Cycles(contexts) * *std::max_element(load.begin(), load.end());
  for (ir::Cycles c : supervisorVertexCycles) cycles += c;
  return cycles + params.supervisorOverheadCycles;
}

}  // namespace ipusim::model::hardware
