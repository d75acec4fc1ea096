#pragma once
// The bound on what functional mode plans for the programs that rename
// tensors (LoadedExecutable::renamedPlans, and a renamed Copy's
// ExchangePlan): their vertices and copy regions. In its own header so that
// the compiler can hold a pipeline's mini-batches to it before it builds
// them (scheduler/models/workload_limits.hpp, checkFunctionalPipeline).
#include <cstdint>

namespace ipusim::model::hardware {

// Functional mode plans each renaming program's work on its own tensors
// (renamedPlans, and a renamed Copy's ExchangePlan): their vertices and copy
// regions, 2^24 at most, 16.8 M (design choice: about 4.5 GB of host memory.
// Measured: the tutorial's 2-IPU pipeline plans 28,587 vertices and 33,181
// copy regions a mini-batch after the first, 16.6 MB, about 270 bytes an
// item, so up to 272 mini-batches; the compile's bound on mini-batches let
// it have 1,990, about 33 GB). Checked before any is planned, and by the
// compiler of a functional run before it lays a pipeline's mini-batches out.
inline constexpr std::uint64_t kMaxRenamedPlanItems = 1ull << 24;

}  // namespace ipusim::model::hardware
