#pragma once
// Codelet: a vertex type, the pair of a functional model and a timing model,
// kept apart (as gem5 keeps accessFunctional apart from accessTiming):
//   compute() — pure: reads its input fields, writes its output fields;
//   cycles()  — PopLibs-style estimate from the vertex's shape alone, so it
//               can be computed (and memoized) without running compute().
// Codelets are registered once by name in the CodeletRegistry.
#include "model/ir/compute_set.hpp"
#include "model/target.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ipusim::model {

enum class FieldAccess : std::uint8_t { In, Out, InOut };

// What a codelet declares about one field.
struct FieldSpec {
  std::string name;
  ir::DType dtype;
  FieldAccess access;
};

// A vertex's field resolved to tile memory: the model fills these in field
// order of Codelet::fields() before calling compute().
struct FieldData {
  void* data = nullptr;
  std::uint64_t size = 0;  // elements
  template <class T> T* as() const { return static_cast<T*>(data); }
};

// Everything about a vertex that timing may depend on: field sizes (in
// Codelet::fields() order) and the parameters. Never the data.
struct VertexShape {
  std::vector<std::uint64_t> fieldSizes;
  std::vector<double> params;  // in Codelet::params() order
};

// A parameter a vertex may omit, and the value it then takes.
struct ParamDefault {
  std::string name;
  double value;
};

class Codelet {
 public:
  virtual ~Codelet() = default;
  virtual std::string name() const = 0;
  virtual std::vector<FieldSpec> fields() const = 0;
  virtual std::vector<std::string> params() const { return {}; }
  // The params of params() that a vertex may omit (e.g. "accumulate" = 0).
  virtual std::vector<ParamDefault> paramDefaults() const { return {}; }
  // Throws std::invalid_argument if the sizes/params are inconsistent
  // (message names the codelet, field or param, and what was expected).
  virtual void validate(const VertexShape& shape) const {}
  // Worker codelets run on one of the tile's worker contexts; a supervisor
  // codelet (the AMP matrix product) occupies the whole tile.
  virtual bool isSupervisor() const { return false; }
  // Worker codelet: cycles of one worker context (the tile spends 6x that
  // when all contexts are busy, since each context issues every 6th cycle).
  // Supervisor codelet: tile cycles.
  virtual ir::Cycles cycles(const VertexShape& shape, const Target& target) const = 0;
  // Worker codelets: appends the cycles of each worker context's share of
  // the vertex, which the tile balances over its contexts
  // (model::hardware::tileComputeCycles). A worker vertex is one share,
  // cycles(); a per-worker vertex (per_worker.hpp) one a worker vertex it
  // stands for. Appending to the caller's vector allocates nothing per vertex.
  virtual void addWorkerCycles(const VertexShape& shape, const Target& target,
                               std::vector<ir::Cycles>& workers) const {
    workers.push_back(cycles(shape, target));
  }
  // The vertices Poplar's graph holds for this one (code memory counts
  // their state): 1, or a per-worker vertex's worker vertices.
  virtual std::uint64_t workerVertices(const VertexShape& shape, const TileParams& tile) const { return 1; }
  virtual void compute(const std::vector<FieldData>& fields, const std::vector<double>& params) const = 0;
  // compute() of `count` vertices of this codelet stored flat: vertex i's
  // fields are fields[i * numFields, (i + 1) * numFields), its params
  // params[i * numParams, (i + 1) * numParams). The model runs compute sets
  // through this (one call per run of same-codelet vertices) to avoid a
  // virtual call and two vector indirections per vertex. Must have exactly
  // the effect of compute() on each vertex in order. The default does that.
  virtual void computeBatch(const FieldData* fields, std::size_t numFields, const double* params,
                            std::size_t numParams, std::size_t count) const;

  // params() as Names, each with its default (paramDefaults()) or none,
  // worked out once: orderedParams reads them for every vertex a compile
  // makes, millions of times.
  struct ParamLayout {
    std::vector<ir::Name> names;
    std::vector<std::optional<double>> defaults;
  };
  const ParamLayout& paramLayout() const;

 private:
  mutable std::once_flag paramLayoutOnce_;
  mutable ParamLayout paramLayout_;
};

// A vertex's named params in codelet.params() order, defaults filled in.
// Throws std::invalid_argument naming the codelet and a missing param, or an
// unknown one (with the nearest valid name).
std::vector<double> orderedParams(const Codelet& codelet, const ir::VertexParams& params);

class CodeletRegistry {
 public:
  static const CodeletRegistry& instance();  // every built-in codelet
  // Throws std::invalid_argument naming the unknown codelet (and the nearest known one).
  const Codelet& get(const std::string& name) const;
  bool has(const std::string& name) const;
  std::vector<std::string> names() const;
  void add(std::unique_ptr<Codelet> codelet);

 private:
  std::vector<std::unique_ptr<Codelet>> codelets_;
  // By name: compiling a model looks a codelet up once per vertex, millions of times.
  std::unordered_map<std::string, const Codelet*> byName_;
};

}  // namespace ipusim::model
