#include "scheduler/lowering/plan_temporaries.hpp"

#include <gtest/gtest.h>

namespace ipusim::scheduler::plan_temporaries_test {
namespace {

TEST(PlanTemporaries, AreTheMatmulAndConvolutionPlansBlocksAndPartialsAndTheirPipelineCopies) {
  for (const char* name : {"dense/matmul/a_blocks", "dense/kernel_grad/rows_0_392/b_blocks", "conv/windows",
                           "conv/kernel_blocks", "conv/kernel_grad/deltas_blocks", "dense/matmul/partials",
                           "layer3/matmul/a_blocks [mini-batch 7]"})
    EXPECT_TRUE(isPlanTemporary(name)) << name;
  for (const char* name : {"mlm/bias_grad/tile_sums", "pool/pool_windows", "embedding/block_partials",
                           "dense/matmul/partials_gathered", "a_blocks", "x/a_blocks [mini-batch 7", ""})
    EXPECT_FALSE(isPlanTemporary(name)) << name;
}

}  // namespace
}  // namespace ipusim::scheduler::plan_temporaries_test
