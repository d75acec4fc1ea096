#pragma once
// Programs that run another program's work on other tensors
// (Program::renames): an Execute renaming its compute set's fields, a Copy
// (`copyOf`) moving another Copy's regions. The work is laid out once; each
// renaming program names only the tensors it swaps (a pipeline's mini-batch
// m runs its stage's compute sets and exchanges on m's activations).
//
// What reads a renaming program's tensors asks here: liveness, validation
// and functional loading. Timing and code memory are the work's own (the
// same tiles, shapes and messages).
#include "model/ir/executable.hpp"

#include <vector>

namespace ipusim::ir {

// The Copy whose regions `copy` moves: copy.copyOf's, or its own.
const Program& regionsHolder(const Executable& exe, const Program& copy);

// `copy`'s regions as it moves them (2-D regions kept whole): its holder's
// (`regions`, or {src, dst}) with each tensor renamed.
std::vector<CopyRegion> renamedRegions(const Executable& exe, const Program& copy);

// `copy` as a Copy holding its regions (renamedRegions), id kept.
Program withOwnRegions(const Executable& exe, const Program& copy);

// Execute `execute`'s compute set with its fields renamed.
ComputeSet renamedComputeSet(const Executable& exe, const Program& execute);

}  // namespace ipusim::ir
