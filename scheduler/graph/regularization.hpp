#pragma once
// The regularizers' penalties in the training step (models/regularizer.hpp),
// as Keras adds them to the loss it minimizes (Trainer.compute_loss: the
// data loss plus the sum of model.losses):
//   addRegularization: one Regularization op sums every penalty
//     (l1 sum|x| + l2 sum x^2 per penalized value, an activity penalty's
//     factors already divided by the batch size) into a new element of the
//     loss value, outfed as "regularization"; an AddLossTerm op then adds it
//     to element 0, so the loss outfed and reported is Keras's total loss;
//   addPenaltyGradient: the penalty's gradient l1 sign(x) + 2 l2 x (sign(0)
//     = 0, as TF's abs gradient), a RegularizerGrad op;
//   addWeightPenaltyGradients: each penalized weight's gradient plus its
//     penalty's (an Add), before the optimizer reads it. (An activity
//     penalty's gradient joins its output's gradient in the backward pass:
//     TrainingGraphBuilder::backward.)
#include "scheduler/graph/training_graph.hpp"

#include <map>
#include <vector>

namespace ipusim::scheduler {

void addRegularization(OpGraph& g, const std::vector<Penalty>& penalties);
// The gradient of penalty `p` w.r.t. its value, in `dtype` (the value's).
std::size_t addPenaltyGradient(OpGraph& g, const Penalty& p, ir::DType dtype);
void addWeightPenaltyGradients(OpGraph& g, const std::vector<Penalty>& penalties,
                               std::map<std::size_t, std::size_t>& weightGrad);

}  // namespace ipusim::scheduler
