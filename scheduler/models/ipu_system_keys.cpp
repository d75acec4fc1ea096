#include "scheduler/models/ipu_system_keys.hpp"

#include "model/system_preset.hpp"

#include <set>
#include <string>

namespace ipusim::scheduler {

void parseSystem(const WorkloadReader& ipu, Workload& w) {
  std::set<std::string> names;
  for (const model::SystemPreset& s : model::systemPresets()) names.insert(s.name);
  w.ipu.system = ipu.string("system", "", names);
  if (!w.ipu.system.empty()) {
    const model::SystemPreset& system = model::systemPreset(w.ipu.system);
    if (w.ipu.arch != "ipu2")
      ipu.fail(ipu.key("system"), "\"" + w.ipu.system + "\" is built of IPU-M2000s: expected ipu.arch \"ipu2\", " +
                                      "got \"" + w.ipu.arch + "\"");
    if (ipu.has("num_ipus") && w.ipu.numIpus != system.ipus)
      ipu.fail(ipu.key("num_ipus"), std::to_string(w.ipu.numIpus) + " differs from the " + std::to_string(system.ipus) +
                                        " IPUs of ipu.system \"" + w.ipu.system + "\": expected " +
                                        std::to_string(system.ipus) + ", or no num_ipus");
    w.ipu.numIpus = system.ipus;
  }
  w.ipu.ipusPerPod = ipu.count32("ipus_per_pod", 0, false);
  if (w.ipu.ipusPerPod && w.ipu.numIpus % w.ipu.ipusPerPod)
    ipu.fail(ipu.key("ipus_per_pod"), std::to_string(w.ipu.ipusPerPod) + " does not divide ipu.num_ipus " +
                                          std::to_string(w.ipu.numIpus) +
                                          ": expected PODs of equal size (a divisor of num_ipus), or 0 for one POD");
}

}  // namespace ipusim::scheduler
