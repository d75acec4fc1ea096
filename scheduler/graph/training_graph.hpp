#pragma once
// TrainingGraphBuilder: what a layer's build() works with while the training
// step's op graph is built (buildTrainingGraph, op_graph.hpp): the graph, the
// workload, the dtype policy's types, the step counter, Glorot-uniform
// kernels, the activations Dense, Conv2D and Activation apply, and the tape.
//
// The tape: each forward op (or group of ops) whose gradient the backward
// pass needs records its inputs, its output and a function that, given the
// output's gradient, adds the backward ops and delivers each input its
// gradient. The backward pass runs the tape in reverse; a value read by
// several ops gets the sum of their gradients (an Add op "grad_sum" in the
// layer that produced it), and so does a weight read by several calls of a
// shared layer; only values that depend on a trainable weight get one.
#include "scheduler/graph/op_graph.hpp"
#include "scheduler/models/workload.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim::scheduler {

class TrainingGraphBuilder;

// TrainingGraphBuilder::maskOf of a value that carries no mask.
inline constexpr std::size_t kNoMask = ~std::size_t(0);

// Handed to a tape entry's backward function.
struct Backward {
  TrainingGraphBuilder& b;
  std::size_t grad;  // the gradient of the entry's output
  // Whether `input` needs a gradient (it depends on a trainable weight).
  bool wants(std::size_t input) const;
  // Adds `gradient` to `input`'s.
  void deliver(std::size_t input, std::size_t gradient) const;
  // The gradient of columns [offset, offset + width) of `input`, read as
  // [rows, columns] (rows 0: its first dimension; a Slice's): the parts of
  // one value are joined by one Concat when its own gradient is needed (a
  // trainable weight's: after the whole backward pass), not each padded to
  // its whole size (a recurrent layer reads one slice per step). Parts at the
  // same offset are summed; together they must cover every column
  // (std::logic_error otherwise: a builder's bug).
  void deliverColumns(std::size_t input, std::size_t gradient, std::uint64_t offset, std::uint64_t rows = 0) const;
  // Whether `weight` is a trainable weight (a frozen layer's is state): only
  // then does the backward pass compute its gradient.
  bool trains(std::size_t weight) const;
  // The gradient of trainable weight `weight` (for its update).
  void weightGradient(std::size_t weight, std::size_t gradient) const;
};
using BackwardFn = std::function<void(const Backward&)>;

// A regularizer's penalty on one value (a weight, or a layer's output),
// its factors already scaled (an activity penalty's by 1 / batch, as Keras).
struct Penalty {
  std::size_t value;
  double l1, l2;
  bool activity;  // a layer's output (its gradient joins the output's), else a weight
};

class TrainingGraphBuilder {
 public:
  explicit TrainingGraphBuilder(const Workload& w);

  OpGraph& graph() { return g_; }
  const Workload& workload() const { return w_; }
  // Whether the layers run as in training (Keras's training=True): in fit;
  // in evaluate and predict dropout and noise pass their input and batch
  // normalization reads its moving statistics.
  // (Fit's validation pass, built after the training step, runs as evaluate.)
  bool training() const { return training_; }
  void setTraining(bool training) { training_ = training; }
  std::uint64_t batch() const { return w_.dataset.batchSize; }
  ir::DType compute() const { return compute_; }      // every layer's compute type
  ir::DType variables() const { return variables_; }  // the weights' type

  std::size_t value(std::string name, std::vector<std::uint64_t> shape, ir::DType dtype, ValueKind kind,
                    std::string layer, std::optional<ir::DrawnInit> init = std::nullopt, double fill = 0);
  // `v` in dtype `to`: itself, or a Cast op's output named `name` ("layer/op").
  std::size_t cast(std::size_t v, ir::DType to, const std::string& name, const std::string& layer, ValueKind kind);
  // The trainable weight `name` of layer `l` ("<owner>/<name>", owner =
  // l.weightsOwner()), in the variables' type, drawn from init() when given
  // (else filled with `fill`). Created at the layer's first call (in
  // g.weights order: layer order, kernel before bias); a later call of a
  // shared layer gets the same value (its shape must agree, else
  // std::invalid_argument naming the layer). init() runs only on creation,
  // so a shared layer draws its kernel's seed once.
  using WeightInit = std::function<std::optional<ir::DrawnInit>()>;
  // `kerasShape`: the shape Keras stores the weight in, when ipusim stores
  // it otherwise (an embedding's table, by column blocks): the initializer's
  // fans are Keras's.
  std::size_t weight(const LayerSpec& l, const std::string& name, std::vector<std::uint64_t> shape,
                     const WeightInit& init = {}, double fill = 0, std::vector<std::uint64_t> kerasShape = {});
  // Non-trainable state of layer `l` (a batch normalization's moving
  // statistics, or its fixed gamma and beta): shared by its calls likewise.
  std::size_t state(const LayerSpec& l, const std::string& name, std::vector<std::uint64_t> shape, ir::DType dtype,
                    double fill);
  // Orders op `op`, which updates `state` in place, after the op that did
  // before it (the calls of a shared layer update its state in turn).
  void updatesInPlace(std::size_t state, std::size_t op);
  // Glorot uniform with Keras's fans, a seed per kernel (in kernel order).
  ir::DrawnInit glorotUniform(std::uint64_t fanIn, std::uint64_t fanOut);
  // The step count (created with its increment op on first use).
  std::size_t stepCounter();

  // `x` in `shape`: itself, or the same tensor in that shape (a Reshape op
  // named `name`, and its gradient's back).
  std::size_t reshape(std::size_t x, const std::vector<std::uint64_t>& shape, const std::string& layer,
                      const std::string& name);
  // `x` as [batch] + `perExample` (reshape).
  std::size_t shaped(std::size_t x, const std::vector<std::uint64_t>& perExample, const std::string& layer,
                     const std::string& name);
  // Activation `a` of layer `l` (its constants l.activationParams) over `x`:
  // layers/activation_functions.hpp addActivation (none for linear; the
  // output layer's softmax under a categorical cross-entropy, and its sigmoid
  // under a binary cross-entropy, are the loss's).
  std::size_t activation(const LayerSpec& l, Activation a, std::size_t x);
  // x + bias over the last dimension (a weight of that many values, stored
  // in Keras's shape `kerasShape` when it is another: an EinsumDense's bias
  // over several axes), when l.useBias; records the bias gradient's backward.
  std::size_t bias(const LayerSpec& l, std::size_t x, std::vector<std::uint64_t> kerasShape = {});

  // The penalties of the regularizers: the weights' (added by weight() as
  // each is created), the outputs' (penalizeActivity).
  void penalizeActivity(const LayerSpec& l, std::size_t output);
  const std::vector<Penalty>& penalties() const { return penalties_; }

  // Keras's mask of value `v` (an Embedding's mask_zero, carried by the
  // layers that carry masks): the token ids ([batch, steps], int) whose
  // non-zero entries mark the steps kept; kNoMask without one.
  std::size_t maskOf(std::size_t v) const;
  void setMask(std::size_t v, std::size_t ids) { masks_[v] = ids; }

  // Whether value `v` is a trainable weight (weight() of a layer not frozen).
  bool trains(std::size_t v) const { return g_.values[v].kind == ValueKind::Weight; }
  // Records a tape entry (weighted: the op reads a trainable weight: trains()).
  void record(std::vector<std::size_t> inputs, std::size_t output, bool weighted, BackwardFn backward);
  bool dependsOnWeights(std::size_t value) const { return value < depends_.size() && depends_[value]; }

  // Runs the tape backward from the gradients of the model's outputs
  // ({output, gradient} each) and of the activity penalties (each output's
  // penalty gradient joins the gradient its readers give it); returns each
  // trainable weight's gradient.
  std::map<std::size_t, std::size_t> backward(const std::vector<std::pair<std::size_t, std::size_t>>& outputGrads);

 private:
  friend struct Backward;
  struct Entry {
    std::vector<std::size_t> inputs;
    std::size_t output;
    BackwardFn backward;
  };
  void accumulate(std::size_t v, std::size_t gradient);
  // The column parts delivered to `v` (deliverColumns) joined into one
  // gradient of v's shape; kNone when none were.
  std::size_t joinColumnParts(std::size_t v);
  // The value `name` of layer `l`'s weights' owner, if its first call made it
  // (its shape checked); kNone before.
  std::size_t sharedValue(const LayerSpec& l, const std::string& name, const std::vector<std::uint64_t>& shape) const;
  // The trained values of layer `l`'s weight (or state) `name` from the
  // workload's weights file (model.weights), checked against the shape Keras
  // gives it; nullptr without a file (the values are drawn, or filled).
  const TrainedWeight* trainedValues(const LayerSpec& l, const std::string& name,
                                     const std::vector<std::uint64_t>& kerasShape) const;

  const Workload& w_;
  bool training_;
  OpGraph g_;
  ir::DType compute_, variables_;
  std::size_t kernels_ = 0;
  std::vector<Entry> tape_;
  std::vector<char> depends_;
  std::map<std::size_t, std::size_t> gradOf_, weightGrad_, masks_;
  struct ColumnParts {
    std::uint64_t rows = 0;                   // the value read as [rows, columns]
    std::map<std::uint64_t, std::size_t> at;  // first column -> gradient
  };
  std::map<std::size_t, ColumnParts> columnParts_;
  std::map<std::string, std::size_t> layerValues_;     // weights and state by "<owner>/<name>"
  std::map<std::size_t, std::size_t> lastUpdate_;      // state -> the last op updating it in place
  std::vector<Penalty> penalties_;
};

}  // namespace ipusim::scheduler
