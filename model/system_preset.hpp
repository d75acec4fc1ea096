#pragma once
// Named IPU systems: Graphcore's IPU-POD reference designs of IPU-M2000s
// (Mk2, arch ipu2), as the IPUs, the IPU-Link topology and the PODs joined by
// GW-Links they give a Target. A what-if can still change any parameter after
// (`--set ipuLink.railsWrap=0`).
#include "model/target.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::model {

struct SystemPreset {
  const char* name;          // "pod64"
  std::uint32_t ipus;        // ipuLink.numIpus
  std::uint32_t railsWrap;   // ipuLink.railsWrap
  std::uint32_t ipusPerPod;  // gwLink.ipusPerPod (0: one POD)
  const char* source;        // where the design is published
};

const std::vector<SystemPreset>& systemPresets();
// "pod4, pod16, pod64, pod128, pod256".
std::string systemNames();
// The preset named `name`; throws std::invalid_argument naming it and the valid names.
const SystemPreset& systemPreset(const std::string& name);
// `target` as system `name`: ipuLink.numIpus, ipuLink.railsWrap, gwLink.ipusPerPod.
// Throws std::invalid_argument for an unknown name or a target arch other than ipu2.
void applySystem(Target& target, const std::string& name);

}  // namespace ipusim::model
