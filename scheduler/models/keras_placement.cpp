#include "scheduler/models/keras_placement.hpp"
#include "scheduler/models/workload_limits.hpp"

#include "model/util/nearest_name.hpp"

namespace ipusim::scheduler {

void placeKerasLayers(const WorkloadReader& model, bool pipelined, Workload& w) {
  const bool shards = model.has("shards"), stages = model.has("stages");
  if (!shards && !stages) return;
  if (shards && stages)
    model.fail(model.key("stages"), "give model.shards (a sharded model) or model.stages (a pipelined one), not both");
  const char* key = shards ? "shards" : "stages";
  if (stages && !pipelined)
    model.fail(model.key(key), "needs the workload's \"pipeline\" key (schedule, gradient_accumulation_count, "
                               "device_mapping)");
  if (shards && pipelined)
    model.fail(model.key(key), "give model.stages and pipeline.device_mapping in a pipelined model, not model.shards");
  const std::vector<std::string> firsts = model.strings(key);
  if (stages && firsts.size() < 2)
    model.fail(model.key(key), "one stage: a pipeline requires at least two (the first layer of each, in order)");

  std::vector<std::string> names;
  for (const LayerSpec& l : w.layers) names.push_back(l.name);
  std::size_t previous = 0;
  for (std::size_t k = 0; k < firsts.size(); ++k) {
    const std::string entry = model.key(key) + "[" + std::to_string(k) + "]";
    std::size_t at = 0;
    while (at < names.size() && names[at] != firsts[k]) ++at;
    if (at == names.size()) {
      if (const std::string overlong = overlongReference(firsts[k]); !overlong.empty()) model.fail(entry, overlong);
      const std::string nearest = util::nearestName(firsts[k], names);
      model.fail(entry, "'" + firsts[k] + "' names no layer of the Keras file" +
                            (nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)"));
    }
    if (k == 0 && at != 0)
      model.fail(entry, "'" + firsts[k] + "': the first " + (shards ? "shard" : "stage") +
                            " starts at the model's first layer, '" + names[0] + "'");
    if (k > 0 && at <= previous)
      model.fail(entry, "'" + firsts[k] + "' comes before or at '" + firsts[k - 1] +
                            "' in the file's layer order: each entry names the first layer of the next " +
                            (shards ? "shard" : "stage"));
    previous = at;
  }
  for (std::size_t i = 0, k = 0; i < w.layers.size(); ++i) {
    while (k + 1 < firsts.size() && names[i] == firsts[k + 1]) ++k;
    if (shards) w.layers[i].shard = std::uint32_t(k);
    else w.layers[i].stage = std::uint32_t(k);
  }
}

}  // namespace ipusim::scheduler
