#include "model/system_preset.hpp"

#include <stdexcept>

namespace ipusim::model {

const std::vector<SystemPreset>& systemPresets() {
  static const std::vector<SystemPreset> kSystems = {
      {"pod4", 4, 0, 0, "IPU-POD4 Direct Attach: one IPU-M2000 (M2000 datasheet)"},
      {"pod16", 16, 0, 0, "IPU-POD16: four IPU-M2000s, their IPU-Links a ladder (IPU-POD DA guide)"},
      {"pod64", 64, 1, 0, "IPU-POD64: 16 IPU-M2000s, a 2D-torus of IPU-Links (IPU-POD64 datasheet)"},
      {"pod128", 128, 1, 64, "IPU-POD128: two IPU-POD64 racks joined by GW-Links (IPU-POD128 datasheet)"},
      {"pod256", 256, 1, 64, "IPU-POD256: four IPU-POD64 racks joined by GW-Links (Getting Started with IPU-POD)"},
  };
  return kSystems;
}

std::string systemNames() {
  std::string names;
  for (const SystemPreset& s : systemPresets()) names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

const SystemPreset& systemPreset(const std::string& name) {
  for (const SystemPreset& s : systemPresets())
    if (name == s.name) return s;
  throw std::invalid_argument("unknown IPU system '" + name + "' (valid: " + systemNames() + ")");
}

void applySystem(Target& target, const std::string& name) {
  const SystemPreset& system = systemPreset(name);
  if (target.arch != "ipu2")
    throw std::invalid_argument("IPU system '" + name + "' is built of IPU-M2000s (arch ipu2), not " + target.arch);
  target.ipuLink.numIpus = system.ipus;
  target.ipuLink.railsWrap = system.railsWrap;
  target.gwLink.ipusPerPod = system.ipusPerPod;
}

}  // namespace ipusim::model
