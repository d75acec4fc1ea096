#pragma once
// OpGraph: the training step as a dataflow graph of ops over values, held in
// a Boost.Graph (an edge u -> v: v must run after u — it reads a value u
// writes, or, for an SGD update, it overwrites a weight u reads).
// buildTrainingGraph() adds the forward ops of the layers, autodiff adds the
// gradient of every op on the path from the weights to the loss, and SGD adds
// one update per weight and bias.
#include "model/ir/tensor.hpp"
#include "model/ir/types.hpp"
#include "scheduler/layers/window.hpp"
#include "scheduler/models/workload.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <array>
#include <string>
#include <vector>

namespace ipusim::scheduler {

// OptimizerState: an optimizer's slot variable (momentum, Adam's m and v,
// RMSprop's velocity ...), a device tensor that lives as long as its weight.
// StepCounter: the step count (1 on the first step), which Adam's bias
// correction and dropout's masks read; the lowering keeps one copy per tile.
// NonTrainable: device state no optimizer updates (batch normalization's
// moving mean and variance, a fixed gamma or beta), as Keras's non-trainable
// weights.
// PerTile: a small value every tile keeps its own copy of, as the step
// counter (the step's learning rate, Nadam's momentum product, a schedule's
// tables): computed or updated on each tile, read where it lies, never
// exchanged; always live. `shape` is one copy's.
enum class ValueKind { Input, Weight, Activation, Gradient, Loss, OptimizerState, StepCounter, NonTrainable, PerTile };

struct Value {
  std::string name;
  std::vector<std::uint64_t> shape;  // row-major
  ir::DType dtype = ir::DType::Float;  // Int for labels, Half for float16 compute
  ValueKind kind = ValueKind::Activation;
  std::string layer;
  std::optional<ir::DrawnInit> drawnInit{};  // kernels: drawn at load (Glorot uniform); others start at zero
  double initialFill = 0;  // without drawnInit: every element's initial value (Keras's Ones: 1)
  std::vector<double> initialValues{};  // else, when not empty: each element's (a layer's constants)
  // An OptimizerState value kept in Streaming Memory between its updates
  // (training.offload_optimizer_state): on the tiles only while its update
  // runs, loaded before it and stored after it, so not always live there.
  bool inStreamingMemory = false;
  std::uint64_t numElements() const {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  std::uint64_t numBytes() const { return numElements() * ir::sizeOf(dtype); }
  bool alwaysLive() const {
    return kind == ValueKind::Weight || kind == ValueKind::Input || kind == ValueKind::Loss ||
           (kind == ValueKind::OptimizerState && !inStreamingMemory) || kind == ValueKind::StepCounter ||
           kind == ValueKind::NonTrainable || kind == ValueKind::PerTile;
  }
};

enum class OpKind {
  MatMul,                 // out = op(a) . op(b); attrs transposeA/B (stored layouts as MatMulPartial)
  BatchMatMul,            // out[g] = op(a[g]) . op(b[g]) for each g of a's first dimension (a [G, m, k],
                          //   b [G, k, n], out [G, m, n]; transposeA/B as MatMul's, per group)
  AddBias,                // out = in + bias (broadcast over rows)
  Relu,                   // out = max(in, 0)
  ReluGrad,               // out = activation > 0 ? grad : 0
  SoftmaxCrossEntropy,    // (logits, labels) -> (probs, lossPerRow)
  SoftmaxCrossEntropyGrad,// (probs, labels[, weights]) -> grad; attr scale (weights: a masked loss's per row)
  ReduceRows,             // out[c] = scale * sum_r in[r][c] (bias gradient)
  MeanLoss,               // out[index] = scale * sum in (index 0 defines out; index 1 writes into it, out an input)
  Accuracy,               // (probs, labels) -> correct per row (1 when the row's first largest probability is its label's)
  RowLoss,                // (x, targets) -> [probs,] per row: attr codelet (SoftmaxCrossEntropyDense, SigmoidCrossEntropy,
                          //   SquaredError; CategoricalAccuracy, BinaryAccuracy -> correct per row)
  TargetDifference,       // (pred, targets) -> grad = scale * (pred - targets); attr codelet: TargetSign (sign of it), TargetClip (clipped to +-delta)
  SgdUpdate,              // weight += -learningRate * grad (in place)
  Cast,                   // out = in converted to out's dtype (float <-> half)
  NonLinearity,           // out = f(in), f = attr activation (sigmoid, tanh, gelu)
  NonLinearityGrad,       // (out or in, grad) -> grad * f'(.) (sigmoid, tanh: from the output; gelu: from the input)
  IncrementStep,          // the step counter += 1 (first op of a step)
  Dropout,                // (in, step) -> out: in * mask / (1 - rate), mask drawn from (seed, step, element)
  DropoutGrad,            // (grad, step) -> grad * mask / (1 - rate), the same mask
  GaussianNoise,          // (in, step) -> out: attr codelet GaussianNoise (in + rate n) or GaussianNoiseScale
                          //   (in (1 + rate n)), n standard normal from (seed, step, element)
  MomentumUpdate,         // (weight, grad, velocity): Keras SGD with momentum (and nesterov)
  AdamUpdate,             // (weight, grad, m, v, step): Keras Adam
  RmspropUpdate,          // (weight, grad, velocity[, average][, momentum]): Keras RMSprop
  // The other optimizers and what Keras does before an update
  // (scheduler/graph/optimizer_updates.hpp, gradient_clipping.hpp build these).
  GradientDescentUpdate,  // (weight, grad): Keras SGD without momentum, with weight decay or a schedule
  AdagradUpdate,          // (weight, grad, accumulator): Keras Adagrad
  AdamaxUpdate,           // (weight, grad, m, u, step): Keras Adamax
  NadamUpdate,            // (weight, grad, m, v, step, momentum product): Keras Nadam
                          //   Every update above also reads, after its own inputs, the step's learning rate
                          //   (a PerTile value) when the optimizer has a schedule (Op::optimizer says which)
  LearningRate,           // (step[, boundaries, values]) -> the step's learning rate (PerTile values), the
                          //   schedule of Op::optimizer at iteration step - 1
  NadamMomentumProduct,   // (step, product): Nadam's product of momentum factors *= its factor at step (PerTile)
  SumOfSquares,           // (in0, in1, ...) -> out[0] = sum of every input's elements squared
  ClipByNorm,             // (in0, ..., inN-1, normSquared) -> (out0, ..., outN-1): each input scaled to an L2
                          //   norm of at most attr scale, the norm sqrt(normSquared); attr index 1: Keras's
                          //   global-norm formula (clip_by_global_norm), 0: its per-tensor one (_clip_by_norm)
  ClipByValue,            // in -> out = min(max(in, -scale), scale)
  // NHWC activations, HWIO kernels (as Keras stores them); attrs `window`,
  // `groups` (scheduler/layers/conv_layers.hpp builds these).
  Conv2D,                 // (input, kernel) -> output
  Conv2DInputGrad,        // (outputGrad, kernel) -> inputGrad (its shape: the forward input's); also a
                          //   Conv2DTranspose layer's forward op
  Conv2DWeightGrad,       // (input, outputGrad) -> kernelGrad
  MaxPool2D,              // input -> output
  MaxPool2DGrad,          // (input, outputGrad) -> inputGrad (to each window's first maximum, as TF)
  AvgPool2D,              // input -> output (padding not counted in the mean)
  AvgPool2DGrad,          // outputGrad -> inputGrad (its shape: the forward input's)
  // Batch normalization over the last axis (scheduler/layers/batch_norm_layer.hpp builds these).
  Square,                 // out = in * in
  Mul,                    // out = in0 * in1
  BatchNormStatistics,    // (mean, meanSquare, movingMean, movingVariance) -> invStdDev; the moving
                          //   statistics updated in place; attrs epsilon, momentum
  BatchNormInvStdDev,     // movingVariance -> invStdDev (inference: training=False); attr epsilon
  BatchNormalise,         // (in, mean, invStdDev, gamma, beta) -> (whitened, out)
  BatchNormInputGrad,     // (grad, whitened, gammaDelta, betaDelta, gamma, invStdDev) -> inputGrad; attr scale = 1 / M
  // Merges and the sums of gradients (scheduler/layers/merge_layers.hpp builds these).
  Add,                    // out = in0 + in1
  Sub,                    // out = in0 - in1
  Neg,                    // out = -in
  Maximum,                // out = max(in0, in1)
  Minimum,                // out = min(in0, in1)
  ExtremumGrad,           // (in0, in1, grad) -> grad where operand `index` (0: in0, 1: in1) was the max/min,
                          //   else 0 (a tie goes to in0); attr codelet MaximumGrad | MinimumGrad
  Concat,                 // (in0, in1, ...) -> out: attr rows; out's rows are the inputs' rows (attr blocks:
                          //   each input's row length) side by side
  Slice,                  // in -> out: attr rows; of each row of in (blocks[2] long), blocks[1] elements from blocks[0]
  // Zero padding and cropping of [batch, rows, columns, channels] or [batch, steps, channels]
  // (scheduler/layers/padding_layers.hpp builds these); attr pads: rows before, after, columns before, after.
  Pad2D,                  // in -> out: zeros around a copy of in
  Crop2D,                 // in -> out: the inside of in
  Reshape,                // in -> out: the same elements in out's shape (the same tensor; no program)
  CopyView,               // in -> out: out's elements, row-major, are in's at attr view (a size and a stride per
                          //   dimension, outermost first; stride 0 repeats): a permutation or a broadcast of
                          //   in materialised by one Copy, as Poplar copies a dimShuffled or broadcast view
                          //   (scheduler/layers/view_ops.hpp builds these)
  // Activation-like layers (scheduler/layers/activation_functions.hpp, prelu.cpp, normalization.cpp,
  // rescaling.cpp). The per-column vectors (alpha, mean, ...) apply to the input's last elements, as a bias.
  Softmax,                // in -> out along an axis: attr blocks {n, inner}: blocks of n x inner normalised over n
  SoftmaxGrad,            // (out, grad) -> inputGrad, attr blocks as Softmax
  PRelu,                  // (in, alpha) -> out: in > 0 ? in : alpha in
  PReluGrad,              // (in, grad, alpha) -> inputGrad
  PReluAlphaGrad,         // (in, grad) -> in < 0 ? in grad : 0 (summed into alpha's gradient by a ReduceRows)
  Normalize,              // (in, mean, stdDev) -> (in - mean) / stdDev
  ScaleShift,             // (in, scale, shift) -> in scale + shift
  // Layer normalization over rows of n values ([rows, n] values; scheduler/layers/layer_normalization.cpp).
  LayerNormalise,         // in -> (whitened, invStdDev per row, float); attr epsilon
  LayerNormInputGrad,     // (whitenedGrad, whitened, invStdDev) -> inputGrad
  // Embedding (scheduler/layers/embedding.cpp): int ids into a table of rows of n values (stored by
  // column blocks, planning/embedding_plan.hpp).
  EmbeddingLookup,        // (ids, table) -> out [ids, n]: out[i] = table[ids[i]]
  EmbeddingGrad,          // (ids, rowsGrad) -> tableGrad (as the table): zero, then tableGrad[ids[i]] += rowsGrad[i]
  IdMask,                 // ids [rows] -> out [rows, cols]: out[r][c] = ids[r] != 0 (attr index 1: == 0), a Keras
                          //   mask_zero mask as a recurrent step's gate (scheduler/layers/recurrent.cpp); attr
                          //   index 2: ids [examples, steps] -> out [examples, steps, cols], a masked mean's
                          //   weights (ids != 0) x steps / the example's kept steps (layers/pooling.cpp); attr
                          //   index 3: (scores [examples x heads x Tq, Tv], ids [examples, steps]) -> scores + scale
                          //   where Keras's attention mask hides a key (attr blocks {heads, query, value, causal}:
                          //   which masks apply; layers/multi_head_attention.cpp); attr index 4: ids [rows] ->
                          //   a masked loss's row weights (ids != 0) x rows / (kept + 1e-7) (Keras's apply_mask);
                          //   attr index 5: values [rows, cols] -> ids [rows] int: 1 where a value of the row is
                          //   not attr scale, else 0 (Keras's Masking, layers/masking.cpp)
  // Regularizers (scheduler/graph/regularization.hpp builds these).
  Regularization,         // (in0, ..., inN-1, loss) -> loss[index] = sum_i l1_i sum|in_i| + l2_i sum in_i^2
                          //   (attr coefficients: each input's l1 and l2); writes into loss, as MeanLoss index > 0
  RegularizerGrad,        // in -> out = l1 sign(in) + 2 l2 in (attr coefficients[0]): the penalty's gradient
  AddLossTerm,            // (loss) -> loss[0] += loss[index] in place (the regularization into the total loss)
};
const char* toString(OpKind kind);

// One dimension of a strided view of a tensor: `size` elements `stride`
// elements apart in it (0: one element repeated).
struct ViewDim {
  std::uint64_t size = 1, stride = 0;
  bool operator==(const ViewDim& o) const { return size == o.size && stride == o.stride; }
};

struct Op {
  OpKind kind;
  std::string name;   // the op name within its layer: "matmul", "relu_grad", ...
  std::string layer;  // workload layer ("dense", "dense_1", "loss", ...)
  std::vector<std::size_t> inputs, outputs;  // value indices
  bool transposeA = false, transposeB = false;
  double scale = 1.0;                          // also ClipByNorm's norm, ClipByValue's bound
  Activation activation = Activation::Linear;  // NonLinearity(Grad)
  ActivationParams activationParams{};         // NonLinearity(Grad)
  double rate = 0;                             // Dropout(Grad)
  std::uint64_t seed = 0;                      // Dropout(Grad)
  OptimizerSpec optimizer{};                   // *Update
  std::uint64_t index = 0;                     // MeanLoss: the element written; ExtremumGrad: the operand
  std::string codelet{};                       // RowLoss, TargetDifference (TargetSign, TargetClip), ExtremumGrad
  double delta = 0;                            // RowLoss (HuberError), TargetDifference (TargetClip)
  Window window{};  // Conv2D* and *Pool2D*
  std::uint64_t groups = 1;  // Conv2D*: conv groups (grouped and depthwise convolutions)
  double epsilon = 0, momentum = 0;  // BatchNormStatistics
  std::uint64_t rows = 0;                  // Concat, Slice
  std::vector<std::uint64_t> blocks{};     // Concat, Slice
  std::array<std::uint64_t, 4> pads{};     // Pad2D, Crop2D
  std::vector<ViewDim> view{};             // CopyView
  std::vector<std::array<double, 2>> coefficients{};  // Regularization (per input), RegularizerGrad: {l1, l2}
  // A forward op run again for the backward pass (graph/recomputation.hpp;
  // its name "recompute/<the original's>").
  bool recomputed = false;
};

using OpDigraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

// The ops updating a weight in place (plain SGD's ScaledAdd and the fused rules).
inline bool isWeightUpdate(OpKind k) {
  switch (k) {
    case OpKind::SgdUpdate:
    case OpKind::MomentumUpdate:
    case OpKind::AdamUpdate:
    case OpKind::RmspropUpdate:
    case OpKind::GradientDescentUpdate:
    case OpKind::AdagradUpdate:
    case OpKind::AdamaxUpdate:
    case OpKind::NadamUpdate: return true;
    default: return false;
  }
}

struct OpGraph {
  std::vector<Value> values;
  std::vector<Op> ops;  // vertex i of `graph` is ops[i]
  OpDigraph graph;
  // value indices; `loss` holds the step's loss (element 0) and accuracy
  // (element 1), the outfeed's values; in predict (Workload::task) it is the
  // predictions [rows, outputs] and `labels` is kNone
  std::size_t images = 0, labels = 0, loss = 0;
  std::size_t stepCounter = ~std::size_t(0);     // when an op reads the step count
  std::vector<std::size_t> weights;              // kernel, bias, kernel, bias, ... in layer order
  // Every layer's weights in the order they were made, a frozen layer's
  // (LayerSpec::trainable: non-trainable state) among them: Keras's
  // model.weights but for the moving statistics. `weights` is its trainable part.
  std::vector<std::size_t> modelWeights;
  // training.replicated_optimizer_state_sharding: the replicas (R > 1) the
  // fused optimizer updates and their state are sharded over (the lowering
  // plans each slot at 1/R of its tiles' bytes); 1: not sharded.
  std::uint32_t optimizerStateShards = 1;
  std::vector<std::string> warnings;             // what the user should know about the model built (the compile reports them)
  // What each element of `loss` is, in order (the outfeed's values: loss,
  // accuracy, metrics, regularization, learning_rate); empty: the loss, then
  // the accuracy when `loss` has two elements.
  std::vector<std::string> outfeed;
  // Fit with validation (ValidationSpec): the ops from this index on are the
  // validation pass (evaluate's forward, loss and metrics, run by its own
  // entry point), after every op of the training step; it reads the same
  // weights, state and input values. `validationLoss` and
  // `validationOutfeed` are its `loss` and `outfeed`. npos: none.
  std::size_t firstValidationOp = ~std::size_t(0);
  std::size_t validationLoss = ~std::size_t(0);
  std::vector<std::string> validationOutfeed;
  bool isValidationOp(std::size_t op) const { return op >= firstValidationOp; }

  std::size_t addValue(Value v);
  std::size_t addOp(Op op);  // adds edges from the producers of its inputs
  void addOrderEdge(std::size_t before, std::size_t after);
  std::vector<std::size_t> producerOf;  // per value: op index, or npos for inputs/weights
  // Throws std::logic_error if `order` is not a topological order of every op.
  void checkTopological(const std::vector<std::size_t>& order) const;
};

// The step of the workload's task (Workload::task): fit's training step
// (forward, loss, backward, updates); evaluate's forward and loss; predict's
// forward, its outputs into `loss` (see OpGraph::loss).
// Glorot-uniform kernels (like Keras, from `seed`), zero biases; batch
// normalization's gamma and moving variance start at one (its beta and moving
// mean at zero). The layers are a graph (LayerSpec::inputs, in topological
// order, the output last): a value read by several ops gets the sum of their
// gradients. With
// model.dtype float16 every float value is half; with mixed_float16 the
// weights stay float and each step casts them to half for the layer's
// compute (Keras's mixed policy), their gradients coming back in float.
OpGraph buildTrainingGraph(const Workload& w);

// The seed of the dropout masks of w.layers[layer] (its own seed, else one
// mixed from the workload seed and its position), < 2^53: CPU references
// draw the same masks with numeric::dropoutKeeps.
std::uint64_t dropoutSeed(const Workload& w, std::size_t layer);

}  // namespace ipusim::scheduler
