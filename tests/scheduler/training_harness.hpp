#pragma once
// Test harness: compiles a workload, runs `steps` training steps of it in the
// SystemC model through the Engine (from an SC_THREAD, fed by the dataset's
// BatchSource), and the same steps on the CPU reference. One simulation per
// process: call runTraining once per test.
#include "scheduler/compiler.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <map>
#include <vector>

namespace ipusim::testing {

struct TrainingLosses {
  std::vector<float> simulated, reference;                  // losses per step
  std::vector<float> simulatedAccuracy, referenceAccuracy;  // the accuracy beside each loss
  std::vector<double> simulatedLearningRate, referenceLearningRate;  // a schedule's, outfed beside each loss
  std::vector<float> simulatedRegularization, referenceRegularization;  // the regularizers' term of each loss
  std::map<std::string, std::vector<float>> simulatedMetrics, referenceMetrics;  // LossSpec::metrics, per step
  scheduler::CompiledWorkload compiled;
  std::uint64_t cycles = 0;
  // After the last step: every replica's copy of each weight tensor (kernel,
  // bias per layer), and the reference's weights.
  std::vector<std::vector<std::vector<float>>> simulatedWeights;  // [replica][tensor]
  std::vector<std::vector<float>> referenceWeights;
  // Per batch normalization layer (layer order): its moving mean, then its
  // moving variance, on the device (replica 0) and in the reference.
  std::vector<std::vector<float>> simulatedMoving, referenceMoving;
};

// With ipu.num_ipus = R the device takes global batches of R x batch_size
// and the reference is one IPU trained on those global batches; with
// training.gradient_accumulation_count N the reference takes N global batches
// per step (one reference loss per N simulated ones). Without
// `withReference` only the simulated losses are collected (for runs too long
// for the CPU reference's plain loops).
TrainingLosses runTraining(const scheduler::Workload& w, std::uint64_t steps, bool withReference = true);

// gtest expectations: `steps` finite simulated losses, each within 1e-4
// relative of the reference's.
void expectSameLosses(const TrainingLosses& r, std::uint64_t steps);

// gtest expectations: the weights after the last step (replica 0's) each
// within 1e-5 + 1e-4 relative of the reference's.
void expectSameWeights(const TrainingLosses& r);

// gtest expectations for a half run (float16, mixed_float16) against the
// float32 reference: `steps` finite losses, the worst within 1% relative,
// and not every one equal (else half arithmetic is not happening). `label`
// names the run in a failure.
void expectHalfTracksFloat32(const TrainingLosses& r, std::uint64_t steps, const std::string& label);

// A small synthetic training job for the layers' acceptance tests: batches
// of 4 of 32 examples, 10 classes, 20 steps of 4 per run on 16 tiles of an
// ipu2, `layers` (a JSON list) over inputs of `inputShape`, `optimizer`, the
// workload's `seed`.
nlohmann::json smallJob(const char* layers, const nlohmann::json& inputShape, const nlohmann::json& optimizer,
                        std::uint64_t seed);
// Trains workload `j` (read as file `source`) `steps` steps: the reference's
// losses and final weights (expectSameLosses, expectSameWeights).
void expectSameTraining(const nlohmann::json& j, const std::string& source, std::uint64_t steps);
// Trains `j` in `dtype` (float16, mixed_float16): expectHalfTracksFloat32.
void expectHalfTracksFloat32(nlohmann::json j, const std::string& dtype, const std::string& source, std::uint64_t steps);

// gtest expectations for a run that updates once per `accumulation`
// mini-batches (gradient accumulation, pipelining): `steps` simulated losses,
// the mean of each update's mini-batches within 1e-4 relative of the
// reference's loss for that update, and the final weights within
// 1e-5 + 1e-4 relative of the reference's.
void expectTrainsAsAccumulation(const TrainingLosses& r, std::uint32_t accumulation, std::uint64_t steps);

std::string sourcePath(const std::string& relative);  // under IPUSIM_SOURCE_DIR

// The message parseWorkload(j, "w.json") refuses `j` with, or "accepted".
std::string workloadRefusal(const nlohmann::json& j);

// Per IPU, the highest not-always-live part of its tiles' peaks (the figure
// the report gives per IPU from a profile).
std::vector<std::uint64_t> notAlwaysLivePeakPerIpu(const scheduler::CompiledWorkload& c);

}  // namespace ipusim::testing
