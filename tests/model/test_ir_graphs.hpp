#pragma once
// Small executables built with GraphBuilder, shared by the IR tests.
#include "model/ir/graph_builder.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ipusim::ir::testing {

inline model::Target smallTarget(std::uint32_t tiles = 4) {
  model::Target t = model::Target::preset("ipu2");
  t.set("tile.tilesPerIpu", std::to_string(tiles));
  return t;
}

// One layer, y = relu(x . w), with an infeed, an outfeed, a loop and every program kind.
inline Executable everyKindGraph() {
  GraphBuilder b(smallTarget(), "every-kind");
  const Id x = b.addTensor("x", {2, 3}, DType::Float, "activations", {"dense_1", "input"});
  const Id w = b.addTensor("w1", {3, 4}, DType::Float, "weights", {"dense_1", "kernel"});
  const Id y = b.addTensor("y", {2, 4}, DType::Float, "activations");
  const Id wLocal = b.addTensor("w1_local", {3, 4}, DType::Float);
  const Id flag = b.addTensor("continue", {1}, DType::Bool, "constants");
  const Id label = b.addTensor("label", {2}, DType::Int);
  b.setTileMapping(x, 1);
  b.mapLinearly(w, {0, 1, 2}, 4);  // [0,4) tile 0, [4,8) tile 1, [8,12) tile 2
  b.setTileMapping(y, 1);
  b.setTileMapping(wLocal, 1);
  b.setTileMapping(flag, 3);
  b.mapInterval(label, 1, 2, 2);
  b.mapInterval(label, 0, 1, 2);
  b.setInitialValue(w, {0.5, -1, 2, 0.25, 1e-3, 3, 4, 5, 6, 7, 8, 1.0 / 3});
  b.setInitialValue(flag, {1});
  b.setAlwaysLive(y, false);
  const Id cs = b.addComputeSet("fwd/matmul", {"dense_1", "matmul"});
  b.addVertex(cs, "MatMulPartial", 1, {{"a", b.ref(x)}, {"b", b.ref(wLocal)}, {"out", b.ref(y)}},
              {{"m", 2}, {"k", 3}, {"n", 4}, {"scale", 0.1}});
  const Id relu = b.addComputeSet("fwd/relu");
  b.addVertex(relu, "Relu", 1, {{"in", b.ref(y)}, {"out", b.ref(y)}});
  const Id in = b.addStream("infeed", StreamDirection::HostToDevice, DType::Float, 6, 4, {"input", "infeed"});
  const Id out = b.addStream("outfeed", StreamDirection::DeviceToHost, DType::Float, 8);
  const Id load = b.streamCopy(in, b.ref(x));
  const Id bring = b.copy(b.ref(w), b.ref(wLocal), "w1->tile1");
  const Id step = b.sequence({load, bring, b.execute(cs), b.execute(relu), b.streamCopy(out, b.ref(y))}, "step",
                             {"model", "step"});
  b.markStep(step);
  const Id loop = b.repeat(10, step, "loop");
  const Id check = b.sync(SyncType::External, "check");
  const Id whileLoop = b.repeatWhileTrue(check, b.ref(flag), b.call(loop), "while");
  const Id branch = b.ifElse(b.ref(flag), whileLoop, b.sync(SyncType::Internal));
  b.addEntryPoint("train", branch);
  b.addEntryPoint("once", step);
  b.setOptions({{"debug.instrument", "true"}});
  return b.finish();
}

// The message of the std::invalid_argument thrown by f (fails the test if none is).
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return "";
}

}  // namespace ipusim::ir::testing
