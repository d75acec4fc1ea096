#pragma once
// The workload's ipu.system and ipu.ipus_per_pod keys: a named IPU-POD
// (model/system_preset.hpp), and the size of the PODs joined by GW-Links.
#include "scheduler/models/workload.hpp"
#include "scheduler/models/workload_reader.hpp"

namespace ipusim::scheduler {

// Reads ipu.system and ipu.ipus_per_pod into w.ipu (after arch and num_ipus):
// a system gives num_ipus when the workload does not, and must agree with it
// when it does; it needs arch ipu2. ipus_per_pod must divide num_ipus.
// Errors name the key, the value and what was expected.
void parseSystem(const WorkloadReader& ipu, Workload& w);

}  // namespace ipusim::scheduler
