#pragma once
// The ipu2 preset cut to a few tiles: the scheduler tests' machine.
#include "model/target.hpp"

#include <string>

namespace ipusim::testing {

inline model::Target ipu2(std::uint32_t tiles) {
  model::Target t = model::Target::preset("ipu2");
  t.set("tile.tilesPerIpu", std::to_string(tiles));
  return t;
}

}  // namespace ipusim::testing
