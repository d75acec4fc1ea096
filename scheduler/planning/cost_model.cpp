#include "scheduler/planning/cost_model.hpp"

#include "model/codelets/codelet.hpp"
#include "model/hardware/tile.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim::scheduler {

ir::Cycles vertexCycles(const std::string& codelet, const std::vector<std::uint64_t>& fieldSizes,
                        const std::map<std::string, double>& params, const model::Target& target) {
  const model::Codelet& c = model::CodeletRegistry::instance().get(codelet);
  return c.cycles({fieldSizes, model::orderedParams(c, params)}, target);
}

VertexCost::VertexCost(const std::string& codelet, const std::vector<std::string>& paramOrder)
    : codelet_(model::CodeletRegistry::instance().get(codelet)) {
  if (codelet_.params() != paramOrder) throw std::logic_error(codelet + ": the planner's parameter order is out of date");
}

ir::Cycles VertexCost::operator()(std::vector<std::uint64_t> sizes, std::vector<double> params,
                                  const model::Target& t) const {
  return codelet_.cycles({std::move(sizes), std::move(params)}, t);
}

ir::Cycles tileCycles(const std::vector<ir::Cycles>& workers, const std::vector<ir::Cycles>& supervisors,
                      const model::Target& target) {
  return model::hardware::tileComputeCycles(workers, supervisors, target.tile);
}

ir::Cycles computePhaseCycles(ir::Cycles busiestTile, const model::Target& target) {
  return busiestTile + target.sync.internalCycles;
}

ir::Cycles exchangePhaseCycles(std::uint64_t busiestTileBytes, const model::Target& target) {
  if (!busiestTileBytes) return 0;
  return ceilDiv(busiestTileBytes, std::max<std::uint32_t>(1, target.exchange.bytesPerCycle)) +
         target.exchange.latencyCycles;
}

}  // namespace ipusim::scheduler
