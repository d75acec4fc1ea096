#pragma once
// What replicated training must give (tests/scheduler/replication_test.cpp,
// pod_replication_test.cpp): R replicas of batch b train as one IPU with
// batch R x b over the same examples.
#include "training_harness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace ipusim::testing {

// The reference's losses and weights within its tolerance, and every
// replica's weights the same bits (the all-reduce sums each chunk once and
// copies it).
inline void expectReplicasMatchOneIpu(const TrainingLosses& r, std::uint32_t replicas, std::uint64_t steps) {
  ASSERT_EQ(r.simulated.size(), steps);
  for (std::size_t s = 0; s < steps; ++s)
    EXPECT_NEAR(r.simulated[s], r.reference[s], 1e-4 * std::fabs(r.reference[s])) << "step " << s;
  ASSERT_EQ(r.simulatedWeights.size(), replicas);
  for (std::size_t t = 0; t < r.referenceWeights.size(); ++t) {
    const auto& ref = r.referenceWeights[t];
    for (std::uint32_t rep = 0; rep < replicas; ++rep) {
      ASSERT_EQ(r.simulatedWeights[rep][t].size(), ref.size());
      EXPECT_EQ(r.simulatedWeights[rep][t], r.simulatedWeights[0][t]) << "tensor " << t << " replica " << rep;
    }
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(r.simulatedWeights[0][t][i], ref[i], 1e-5 + 1e-4 * std::fabs(ref[i]))
          << "tensor " << t << " [" << i << "]";
  }
}

}  // namespace ipusim::testing
