#pragma once
// Token ids as a model's input: a model whose input is read by Embedding
// layers takes integer ids, as Keras's Embedding casts its input to int32.
// The input is then streamed as int32 ids in [0, vocabulary), the
// vocabulary being the smallest input_dim of the embeddings reading it (an id
// must be valid for each). Every reader of such an input must be an
// embedding (a float layer cannot read ids), the model has one input, and
// the ids are synthetic (no dataset file of ids is read yet).
#include "scheduler/models/workload.hpp"

#include <functional>
#include <string>

namespace ipusim::scheduler {

// Sets w.dataset.vocabulary (0 when no embedding reads the input). `fail`
// names the layer (its index) or, with npos, the dataset; `key` is the key at fault.
void resolveTokenInputs(Workload& w, const std::function<void(std::size_t layer, const std::string& key,
                                                              const std::string& what)>& fail);

}  // namespace ipusim::scheduler
