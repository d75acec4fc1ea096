#include "scheduler/lowering/plan_temporaries.hpp"

namespace ipusim::scheduler {

bool isPlanTemporary(std::string_view name) {
  if (const std::size_t mark = name.rfind(" [mini-batch "); mark != std::string_view::npos && name.back() == ']')
    name = name.substr(0, mark);
  const auto endsWith = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  for (const char* suffix :
       {kMatMulABlocks, kMatMulBBlocks, kConvWindows, kConvKernelBlocks, kConvDeltasBlocks, kPlanPartials})
    if (endsWith(suffix)) return true;
  return false;
}

}  // namespace ipusim::scheduler
