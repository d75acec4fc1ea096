// Functional results are right: the bundled example graph, run in the
// simulator, streams out what a host-side computation of the same thing gives.
#include "cli_helpers.hpp"

#include "model/ir/executable.hpp"
#include "sim/engine/engine.hpp"
#include "sim/examples/stream_pipeline.hpp"
#include "sim/host/graph_runner.hpp"

#include <gtest/gtest.h>

namespace ipusim::test::test_graph_results {
namespace {

TEST(GraphResults, StreamPipelineOutputsEqualTheHostComputation) {
  const ir::Executable exe = ir::loadExecutable(sourcePath("workloads/graphs/stream_pipeline.json"));
  const model::Target target = model::Target::fromJson(exe.target);
  sim::Engine engine(exe, target, sim::EngineOptions{});
  const std::uint64_t runs = 2;
  sim::GraphRunner host("host", engine, 0, runs);
  sc_core::sc_start();
  host.rethrowFailure();

  const sim::StreamPipelineShape shape;  // the bundled graph is built with the defaults
  const ir::Id xStream = engine.stream("x").spec().id;
  const std::uint64_t n = std::uint64_t(shape.tiles) * shape.elementsPerTile;
  const auto& z = host.outputs().at("z");
  const auto& total = host.outputs().at("total");
  ASSERT_EQ(z.size(), runs * shape.repeats);
  ASSERT_EQ(total.size(), runs * shape.repeats);
  for (std::uint64_t copy = 0; copy < z.size(); ++copy) {
    std::vector<double> x(n);
    for (std::uint64_t i = 0; i < n; ++i) x[i] = float(sim::inputValue(xStream, copy, i));
    const auto expected = sim::streamPipelineReference(x, shape);
    ASSERT_EQ(z[copy].size(), n);
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(z[copy][i], expected.z[i]) << "copy " << copy << " element " << i;
    EXPECT_NEAR(total[copy][0], expected.total, 1e-4 * std::max(1.0, std::abs(expected.total))) << "copy " << copy;
  }
}

TEST(GraphResults, TheBundledGraphIsWhatTheBuilderMakes) {
  // workloads/graphs/stream_pipeline.json is generated (`ipusim example-graph`): it must not drift.
  const ir::Executable bundled = ir::loadExecutable(sourcePath("workloads/graphs/stream_pipeline.json"));
  const ir::Executable built = sim::buildStreamPipeline(model::Target::fromJson(bundled.target));
  EXPECT_EQ(ir::toJson(bundled), ir::toJson(built));
}

}  // namespace
}  // namespace ipusim::test::test_graph_results
