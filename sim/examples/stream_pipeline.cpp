#include "sim/examples/stream_pipeline.hpp"

#include "model/ir/graph_builder.hpp"

#include <algorithm>

namespace ipusim::sim {

double streamPipelineWeight(std::uint64_t element) { return 0.5 + 0.25 * double(element % 7); }

ir::Executable buildStreamPipeline(const model::Target& target, const StreamPipelineShape& shape) {
  using ir::DType;
  const std::uint32_t tiles = shape.tiles;
  const std::uint64_t chunk = shape.elementsPerTile;
  const std::uint64_t n = tiles * chunk;
  ir::GraphBuilder b(target, "stream_pipeline");
  const auto tileList = ir::GraphBuilder::tileRange(0, tiles);

  auto spread = [&](const std::string& name, const std::string& category) {
    const ir::Id t = b.addTensor(name, {n}, DType::Float, category, {"pipeline", name});
    b.mapLinearly(t, tileList, chunk);
    return t;
  };
  const ir::Id x = spread("x", "stream_buffers");
  const ir::Id w = spread("w", "weights");
  const ir::Id t = spread("t", "activations");
  const ir::Id y = spread("y", "activations");
  const ir::Id z = spread("z", "activations");
  std::vector<double> weights(n);
  for (std::uint64_t i = 0; i < n; ++i) weights[i] = streamPipelineWeight(i);
  b.setInitialValue(w, weights);

  const ir::Id partials = b.addTensor("partials", {tiles}, DType::Float, "temporaries", {"pipeline", "reduce"});
  b.mapLinearly(partials, tileList, 1);
  const ir::Id gathered = b.addTensor("gathered", {tiles}, DType::Float, "temporaries", {"pipeline", "reduce"});
  b.setTileMapping(gathered, 0);
  const ir::Id total = b.addTensor("total", {1}, DType::Float, "activations", {"pipeline", "reduce"});
  b.setTileMapping(total, 0);

  const ir::Id mul = b.addComputeSet("scale", {"pipeline", "mul"});
  const ir::Id relu = b.addComputeSet("relu", {"pipeline", "relu"});
  const ir::Id partialSums = b.addComputeSet("partial_sums", {"pipeline", "reduce"});
  const ir::Id finalSum = b.addComputeSet("total", {"pipeline", "reduce"});
  for (std::uint32_t tile = 0; tile < tiles; ++tile) {
    const std::uint64_t lo = tile * chunk, hi = lo + chunk;
    b.addVertex(mul, "Mul", tile, {{"in0", b.ref(x, lo, hi)}, {"in1", b.ref(w, lo, hi)}, {"out", b.ref(t, lo, hi)}});
    b.addVertex(relu, "Relu", tile, {{"in", b.ref(t, lo, hi)}, {"out", b.ref(y, lo, hi)}});
    b.addVertex(partialSums, "ReduceSum", tile, {{"in", b.ref(z, lo, hi)}, {"out", b.ref(partials, tile, tile + 1)}},
                {{"rows", 1}, {"cols", double(chunk)}, {"axis", 1}});
  }
  b.addVertex(finalSum, "ReduceSum", 0, {{"in", b.ref(gathered)}, {"out", b.ref(total)}},
              {{"rows", 1}, {"cols", double(tiles)}, {"axis", 1}});

  const ir::Id xIn = b.addStream("x", ir::StreamDirection::HostToDevice, DType::Float, n, 2);
  const ir::Id zOut = b.addStream("z", ir::StreamDirection::DeviceToHost, DType::Float, n, 2);
  const ir::Id totalOut = b.addStream("total", ir::StreamDirection::DeviceToHost, DType::Float, 1, 2);

  // z = y rotated by one tile's chunk: the chunk on tile i moves to tile i+1.
  const std::vector<ir::Id> rotate = {
      b.copy(b.ref(y, 0, n - chunk), b.ref(z, chunk, n), "rotate", {"pipeline", "rotate"}),
      b.copy(b.ref(y, n - chunk, n), b.ref(z, 0, chunk), "rotate_wrap", {"pipeline", "rotate"})};
  const ir::Id body = b.sequence(
      {b.streamCopy(xIn, b.ref(x)), b.execute(mul), b.execute(relu), b.sequence(rotate, "rotate", {"pipeline", "rotate"}),
       b.execute(partialSums), b.copy(b.ref(partials), b.ref(gathered), "gather", {"pipeline", "gather"}),
       b.execute(finalSum), b.sync(ir::SyncType::External, "sync", {"pipeline", "sync"}), b.streamCopy(zOut, b.ref(z)),
       b.streamCopy(totalOut, b.ref(total))},
      "iteration", {"pipeline", "iteration"});
  b.markStep(body);
  b.addEntryPoint("main", b.repeat(shape.repeats, body, "repeat", {"pipeline", "loop"}));
  return b.finish();
}

StreamPipelineOutput streamPipelineReference(const std::vector<double>& x, const StreamPipelineShape& shape) {
  const std::uint64_t n = std::uint64_t(shape.tiles) * shape.elementsPerTile;
  std::vector<float> y(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const float product = float(x[i]) * float(streamPipelineWeight(i));
    y[i] = std::max(product, 0.0f);
  }
  StreamPipelineOutput out;
  out.z.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) out.z[(i + shape.elementsPerTile) % n] = y[i];
  float total = 0;
  for (std::uint32_t tile = 0; tile < shape.tiles; ++tile) {
    float partial = 0;
    for (std::uint64_t j = 0; j < shape.elementsPerTile; ++j) partial += float(out.z[tile * shape.elementsPerTile + j]);
    total += partial;
  }
  out.total = total;
  return out;
}

}  // namespace ipusim::sim
