#include "sim/cli/commands.hpp"
#include "sim/cli/target_flags.hpp"
#include "sim/examples/stream_pipeline.hpp"
#include "traces/output_file.hpp"

#include <iostream>

namespace ipusim::sim {

void addExampleGraphCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("example-graph",
                                 "Write the bundled example graph (workloads/graphs/stream_pipeline.json)");
  auto output = std::make_shared<std::string>("workloads/graphs/stream_pipeline.json");
  auto shape = std::make_shared<StreamPipelineShape>();
  auto force = std::make_shared<bool>(false);
  auto flags = std::make_shared<TargetFlags>();
  flags->arch = "ipu2";
  cmd->add_option("-o,--output", *output, "where to write the serialized graph")->check(outputFileName());
  cmd->add_flag("--force", *force, "replace the output file if it exists (never a directory, a device or a FIFO)");
  cmd->add_option("--graph-tiles", shape->tiles, "tiles the graph computes on")
      ->check(wholeNumberAtLeastOne(std::numeric_limits<std::uint32_t>::max()));
  cmd->add_option("--elements-per-tile", shape->elementsPerTile, "elements of x per tile")->check(wholeNumberAtLeastOne());
  cmd->add_option("--repeats", shape->repeats, "iterations of the Repeat")->check(wholeNumberAtLeastOne());
  flags->addTo(*cmd);
  cmd->callback([=, &exitCode] {
    const model::Target target = flags->apply(model::Target::preset(flags->arch));
    if (shape->tiles > target.totalTiles())
      throw std::invalid_argument("--graph-tiles " + std::to_string(shape->tiles) + " exceeds the target's " +
                                  std::to_string(target.totalTiles()) + " tiles");
    // Checked before anything is built: x alone (floats) must fit a tile's
    // memory (--elements-per-tile 1e12 ended as "out of memory" on the host).
    const std::uint64_t maxElements = target.tile.memoryBytes / sizeof(float);
    if (shape->elementsPerTile > maxElements)
      throw std::invalid_argument("--elements-per-tile " + std::to_string(shape->elementsPerTile) +
                                  ": x alone needs more than a tile's " + std::to_string(target.tile.memoryBytes) +
                                  " bytes of memory (at most " + std::to_string(maxElements) + " floats a tile)");
    traces::OutputFile file(*output, {*force, {}});  // as `export` writes: see traces/output_file.hpp
    file.stream() << ir::toJson(buildStreamPipeline(target, *shape)).dump(1) << '\n';
    file.commit();
    std::cout << "wrote " << *output << "\n";
    exitCode = 0;
  });
}

}  // namespace ipusim::sim
