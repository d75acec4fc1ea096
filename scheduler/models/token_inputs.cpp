#include "scheduler/models/token_inputs.hpp"

#include "scheduler/models/layer_spec.hpp"

#include <algorithm>

namespace ipusim::scheduler {

void resolveTokenInputs(Workload& w, const std::function<void(std::size_t, const std::string&, const std::string&)>& fail) {
  constexpr std::size_t kDataset = ~std::size_t(0);
  std::vector<std::size_t> readers, embeddings;  // of a model input
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const LayerSpec& l = w.layers[i];
    bool readsInput = i == 0 && l.inputs.empty();
    for (std::size_t j : l.inputs) readsInput = readsInput || isModelInput(j);
    const bool embedding = l.kind == layer_kind::kEmbedding;
    if (readsInput) readers.push_back(i);
    if (embedding && !readsInput)
      fail(i, "", "an embedding reads another layer's output; only the model's input (token ids) is looked up "
                  "(not modelled: ids computed by a layer)");
    if (embedding) embeddings.push_back(i);
  }
  w.dataset.vocabulary = 0;
  if (embeddings.empty() && w.dataset.format == "npy")
    fail(kDataset, "format", "'npy' reads token ids, but no embedding reads the model's input (pixels come from IDX "
                             "files or are generated)");
  if (embeddings.empty()) return;
  for (std::size_t i : readers)
    if (w.layers[i].kind != layer_kind::kEmbedding)
      fail(i, "", "reads the model's input, which holds token ids (it feeds layer '" + w.layers[embeddings[0]].name +
                      "', an embedding); only embeddings read ids (not modelled: ids read as numbers)");
  if (w.inputs.size() > 1)
    fail(embeddings[0], "", "token ids in a model with several inputs are not modelled yet (one input of ids)");
  if (w.dataset.format == "idx")
    fail(kDataset, "format", "'" + w.dataset.format + "' with token ids (layer '" + w.layers[embeddings[0]].name +
                                 "' is an embedding): IDX files hold pixels; token ids come from .npy files (format "
                                 "\"npy\") or are generated (\"synthetic\")");
  std::uint64_t vocabulary = w.layers[embeddings[0]].inputDim;
  for (std::size_t i : embeddings) vocabulary = std::min(vocabulary, w.layers[i].inputDim);
  w.dataset.vocabulary = vocabulary;
}

}  // namespace ipusim::scheduler
