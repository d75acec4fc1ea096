#pragma once
// The CPU reference's recurrent layers (SimpleRNN, LSTM, GRU) as Keras's cells
// compute them, written out step by step: forward from zero states, and
// backpropagation through time. Float values, double sums; activations from
// cpu_reference_activations.hpp (every derivative from the forward input).
#include "scheduler/models/layer_spec.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::testing {

struct RecurrentGeometry {
  std::uint64_t batch = 0, steps = 0, features = 0, units = 0;
  bool lstm = false, gru = false, resetAfter = true, returnSequences = false, goBackwards = false, bias = true;
  bool zeroOutputForMask = false;  // under a mask: a masked step outputs zeros (else the carried h)
  scheduler::Activation activation = scheduler::Activation::Tanh, recurrentActivation = scheduler::Activation::Sigmoid;
  scheduler::ActivationParams params{}, recurrentParams{};
  std::uint64_t gates() const { return lstm ? 4 : gru ? 3 : 1; }
};

// What the forward pass keeps for the backward: per row and step (in the
// order the steps ran) the gates' pre-activations z, the cell state c and h;
// GRU: z holds [z, r, h~]'s pre-activations and c the candidate's recurrent
// term (r_h with reset_after, else r h).
struct RecurrentCache {
  std::vector<float> z, c, h;  // [batch][steps][gates x units], [batch][steps][units] x 2
  std::vector<float> ids;      // Keras's mask (mask_zero): the token ids [batch][steps]; empty without
};

// Under a mask (cache.ids, set before the forward pass), a step whose id is 0
// keeps the states it read (Keras's rnn: where(mask, new, previous)) and
// outputs them, or zeros with zeroOutputForMask and return_sequences.

// x [batch, steps, features]; kernel [features, gates x units], recurrent
// [units, gates x units], bias [gates x units] (GRU with reset_after: [2,
// gates x units], the input's then the recurrent one; empty without one). Returns
// [batch, steps, units] (return_sequences, in the order run) or [batch, units].
std::vector<float> recurrentForward(const RecurrentGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                    const std::vector<float>& recurrent, const std::vector<float>& bias, RecurrentCache& cache);

struct RecurrentGrads {
  std::vector<float> kernel, recurrent, bias, input;
};
RecurrentGrads recurrentBackward(const RecurrentGeometry& g, const std::vector<float>& x, const std::vector<float>& kernel,
                                 const std::vector<float>& recurrent, const RecurrentCache& cache,
                                 const std::vector<float>& grad, bool wantInput);

}  // namespace ipusim::testing
