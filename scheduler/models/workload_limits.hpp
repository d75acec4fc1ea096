#pragma once
// Up-front limits on a workload's sizes, checked by parseWorkload() before
// anything is compiled or allocated: every size the file can give is held
// against what the simulator can hold, and a value over its limit is an
// error naming the file, the key, the value and the limit, e.g.
//   "w.json: model.layers[1].units: 1000000 needs 3136000000 bytes of float
//    weights (fan-in 784); the limit for one tensor is 1073741824 bytes: at most 342392".
// Only sizes are checked here; whether a model fits the IPU's tiles is the
// compiler's decision (its message names the tile), and with
// debug.allowOutOfMemory a model larger than the IPU may still be simulated.
#include "scheduler/models/workload.hpp"

#include <cstdint>

#include <string>

namespace ipusim::scheduler {

// Host memory for the dataset held in memory (examples x features bytes) and
// for the batches buffered by the feeds (design choice: 4 GiB, so that a
// mistyped size fails at once rather than after minutes of allocation).
inline constexpr std::uint64_t kMaxHostDatasetBytes = 4ull << 30;
// One tensor (a layer's weights or activations, a batch of input): at most
// 1 GiB, the whole memory of the largest IPU (Mk2: 1472 x 624 KiB = 897 MiB,
// M2000 datasheet) rounded up. Even out of memory (debug.allowOutOfMemory)
// the simulator holds every byte on the host, so this bounds host memory.
inline constexpr std::uint64_t kMaxTensorBytes = 1ull << 30;
// Labels are stored as 16-bit class indices on the host (IDX label files
// hold bytes, so at most 256 classes there): at most 65,536 classes, beyond
// ImageNet-21k's 21,841.
inline constexpr std::uint32_t kMaxClasses = 65536;
// Steps per run and in total (design choice: 2^40, far beyond a training job,
// while step counters and cycle totals stay exact).
inline constexpr std::uint64_t kMaxSteps = 1ull << 40;
// Losses the outfeed buffers (design choice: the tutorial uses 10).
inline constexpr std::uint32_t kMaxOutfeedDepth = 65536;
// Layer calls in one model (nested models inlined): 8,192 (design choice:
// about 8x the deepest Keras application models, NASNetLarge's 1,041 and
// EfficientNetV2L's ~1,000 layers), because the compile's time grows faster
// than the layer count (measured: 2,000 one-layer-wide dense layers 1.9 s,
// 4,000 6.3 s, 20,000 more than 60 s).
inline constexpr std::uint64_t kMaxLayers = 8192;
// A convolution's kernel taps (kernel rows x columns): 4,096, a 64x64
// kernel (design choice: far beyond published kernels, 11x11 in AlexNet,
// 1-D kernels of a few hundred taps), because the simulator's memory grows
// with the taps whatever the input (measured on a 28x28 input: 55x55 taps
// 0.18 GB, 100x100 0.5 GB, 200x200 beyond 2.3 GB).
inline constexpr std::uint64_t kMaxKernelTaps = 4096;
// Names (the workload's, each layer's): at most 1,024 bytes (design choice:
// far beyond Keras's names, nested models' "outer/inner/dense_3" included),
// because a layer's name is copied into each of its tensors, compute sets,
// programs and profile slices (measured: a 1 MB layer name made the compile
// take 180 MB and a 20-step profile of a 3-layer model 465 MB).
inline constexpr std::size_t kMaxNameBytes = 1024;
// Vertices of the laid-out executable, once the replicas have their own
// copies of the step's compute sets (a pipeline's mini-batches in flight run
// its stages' compute sets on their own tensors, ir::Program::renames: no copy):
// 2^24, 16.8 M (design choice: 2.6x ResNet-50's 6.4 M on one IPU; measured
// 330-400 bytes of host memory a vertex during the compile, peak RSS over
// vertices of BERT-Large stopped at the limit and of ResNet-50 at
// micro-batch 18, so about 5.5-6.7 GB).
// Checked as the step is lowered (lowerStep: a long unrolled sequence at a
// large batch can pass it on one IPU), and by the compiler before it clones
// anything (checkLayoutVertices).
inline constexpr std::uint64_t kMaxLaidOutVertices = 1ull << 24;

// What a pipeline's mini-batches in flight after the first lay out again
// (pipelineItemsPerMiniBatch: their tensors' tile intervals and their
// passes' renames of them, and the tensors and programs themselves at
// kPipelineItemsPerObject each): 2^26 items, 67 M (design choice: about 6 GB
// of host memory beyond the graph. Measured: BERT-Large's 8 mini-batches,
// 8.5 M items each, took its compile from 4.6 GB before the pipeline to a
// peak of 10.2 GB, about 93 bytes an item; the tutorial's 2-IPU pipeline
// lays out 33 k a mini-batch, so up to 1,990 mini-batches).
inline constexpr std::uint64_t kMaxPipelineCopyItems = 1ull << 26;
// A tensor or program a mini-batch lays out (its name, shape, debug
// context, renames' vector), in items of about 93 bytes. Measured: a
// 3-layer MLP's mini-batch of 91 intervals, 133 renames, 66 tensors and 65
// programs took 77 KB of the compile's peak (16,000 mini-batches: 1.24 GB),
// about 430 bytes a tensor or program beyond its intervals and renames.
// Counting intervals and renames alone let it have 299,594 mini-batches, 23
// GB; the small models are those whose tensors and programs outweigh them.
inline constexpr std::uint64_t kPipelineItemsPerObject = 5;

// Throws std::invalid_argument("<key>: <N> mini-batches in flight, each
// after the first laying out <intervals> tensor intervals, <renames> tensor
// renames, <tensors> tensors and <programs> programs of its own ...") when
// (N - 1) x their weighted sum passes kMaxPipelineCopyItems.
void checkPipelineCopies(const std::string& key, std::uint64_t miniBatches, std::uint64_t tensorIntervals,
                         std::uint64_t tensorRenames, std::uint64_t tensors, std::uint64_t programs);

// A functional run (the numbers computed) of a pipeline: functional mode
// plans each mini-batch's renamed work on its own tensors, bounded by
// model::hardware::kMaxRenamedPlanItems when the executable is loaded. The
// compiler checks it before it lays the mini-batches out (1,024 mini-batches
// of the tutorial's 2-IPU pipeline compiled for 70-90 s before the load
// refused them): throws std::invalid_argument("<key>: <N> mini-batches in
// flight, each after the first planning <work> vertices and copy regions
// ... at most M mini-batches per weight update, or run timing only") when
// (N - 1) x `renamedWork` x `replicas` (every replica laid out in full)
// passes the bound.
void checkFunctionalPipeline(const std::string& key, std::uint64_t miniBatches, std::uint64_t renamedWork,
                             std::uint32_t replicas);

// Throws std::invalid_argument("<key>: <value> <what> of <vertices> vertices
// each lay out N vertices, over the limit of kMaxLaidOutVertices: at most M")
// when `copies` copies of `vertices` vertices pass the limit. `hint` ends the
// message (what else keeps the copies down).
void checkLayoutVertices(const std::string& key, std::uint64_t copies, const std::string& what,
                         std::uint64_t vertices, const std::string& hint);

// Throws std::invalid_argument("<source>: <key>: ...") for the first size over its limit.
void checkWorkloadLimits(const Workload& w, const std::string& source);
// The layer count alone (kMaxLayers), checked as soon as the layers are read.
void checkLayerCount(const Workload& w, const std::string& source);
// The workload's and the layers' names (kMaxNameBytes; no control
// character, util::holdsControlCharacter), checked as soon as the layers are
// read; the message quotes a name's first 40 bytes.
void checkNames(const Workload& w, const std::string& source);
// For a key that refers to a layer by name (training.recompute_checkpoints,
// model.shards and model.stages, a layer's inputs): no layer's name is over
// kMaxNameBytes, so a longer reference names none. The refusal, quoting its
// first 40 bytes as checkNames does ("'aaa...' is N bytes long: ..."), or ""
// within the bound; checked before a "did you mean" search, whose edit
// distance grows with the name (a 5 MB name took 2 s, then was echoed whole).
std::string overlongReference(const std::string& name);

// For the layers' own checks (Layer::checkLimits): products of three sizes
// may pass 64 bits, so they are computed in 128; their decimal text; and
// "the limit for one tensor is N bytes".
using WideCount = unsigned __int128;
std::string wideText(WideCount v);
std::string tensorLimitText();

}  // namespace ipusim::scheduler
