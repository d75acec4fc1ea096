#pragma once
// The steps of a recurrent layer (simple_rnn, lstm, gru: recurrent.cpp),
// shared with the Bidirectional wrapper (bidirectional.cpp).
#include "scheduler/graph/training_graph.hpp"

#include <vector>

namespace ipusim::scheduler {

// Layer `l`'s weights (under its name) and every step's ops over `input`
// ([batch] + l.inputShape, steps x features); returns each step's output h,
// in the order the steps ran (go_backwards: the last step's first).
std::vector<std::size_t> runRecurrent(TrainingGraphBuilder& b, const LayerSpec& l, std::size_t input);

}  // namespace ipusim::scheduler
