#pragma once
// gtest expectations: two readings of one model (a Keras file and its layer
// list in ipusim's workload format) give the same layers, layer for layer:
// kinds, names, inputs, placement, sizes, activations, attention's heads and
// causal mask, the recurrent layers (wrapped ones too), and the shapes.
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

namespace ipusim::testing {

inline void expectSameLayers(const scheduler::Workload& read, const scheduler::Workload& listed) {
  ASSERT_EQ(read.layers.size(), listed.layers.size());
  for (std::size_t i = 0; i < listed.layers.size(); ++i) {
    const scheduler::LayerSpec &a = read.layers[i], &b = listed.layers[i];
    EXPECT_EQ(a.kind, b.kind) << b.name;
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.inputs, b.inputs) << b.name;
    EXPECT_EQ(a.shard, b.shard) << b.name;
    EXPECT_EQ(a.units, b.units) << b.name;
    EXPECT_EQ(a.activation, b.activation) << b.name;
    EXPECT_EQ(a.heads, b.heads) << b.name;
    EXPECT_EQ(a.keyDim, b.keyDim) << b.name;
    EXPECT_EQ(a.causalMask, b.causalMask) << b.name;
    EXPECT_EQ(a.epsilon, b.epsilon) << b.name;
    EXPECT_EQ(a.inputDim, b.inputDim) << b.name;
    EXPECT_EQ(a.returnSequences, b.returnSequences) << b.name;
    EXPECT_EQ(a.mergeMode, b.mergeMode) << b.name;
    ASSERT_EQ(a.wrapped.size(), b.wrapped.size()) << b.name;
    for (std::size_t k = 0; k < b.wrapped.size(); ++k) {
      EXPECT_EQ(a.wrapped[k].kind, b.wrapped[k].kind) << b.name;
      EXPECT_EQ(a.wrapped[k].units, b.wrapped[k].units) << b.name;
      EXPECT_EQ(a.wrapped[k].goBackwards, b.wrapped[k].goBackwards) << b.name;
      EXPECT_EQ(a.wrapped[k].returnSequences, b.wrapped[k].returnSequences) << b.name;
    }
    EXPECT_EQ(a.inputShapes, b.inputShapes) << b.name;
    EXPECT_EQ(a.outputShape, b.outputShape) << b.name;
  }
}

}  // namespace ipusim::testing
