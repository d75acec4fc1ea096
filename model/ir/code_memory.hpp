#pragma once
// Code memory: what a compiled program needs on each tile besides its
// variables — the codelets' machine code, each vertex's state, the control
// program and the exchange programs — as Poplar's memory report lists them
// (the always-live variables vertexCode, vertexInstanceState, controlCode
// and internalExchangeCode of PopVision's liveness report).
//
// Contract:
// - countCodeOnTiles(exe, numTiles) reads the executable's compute sets and
//   programs (not their execution: code is laid out once, however often a
//   Repeat runs it) and counts, per tile: the distinct codelets of its
//   vertices, its vertices with their fields and scalar parameters, the
//   program steps it takes part in (an Execute with a vertex on the tile, a
//   Copy, StreamCopy or RemoteCopy with data there), and the messages it
//   sends or receives in them: a Copy's distinct (source tile, destination
//   tile) pairs, whatever the number of regions between them (a 2-D region's
//   rows go as one strided message), counted on both tiles; a stream or
//   remote copy, one a tile holding part of the tensor.
// - codeBytes(counts, params) turns the counts into bytes by the constants
//   below (their sources beside them), each category a whole number of
//   4-byte words (instructions and vertex state words are 32 bits);
//   codeBytesPerTile does both for every tile.
// - addCodeMemoryTensors(exe, perTile) appends one always-live UInt tensor
//   per category, mapped on the tiles holding any, so that the one per-tile
//   figure (tile_memory_usage.hpp), the out-of-memory check, the profile,
//   `ipusim report` and the viewer count code as Poplar does. The compiler
//   calls it before planning memory; a serialized graph carries the tensors
//   its writer put in (a hand-written graph has none). It returns the ids
//   it appended (none when no tile holds code).
// - Tiles >= numTiles in a vertex or mapping are std::invalid_argument
//   naming the compute set or tensor.
#include "model/ir/executable.hpp"
#include "model/target.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::ir {

struct CodeCounts {
  std::uint64_t codelets = 0;   // distinct codelets among the tile's vertices
  std::uint64_t vertices = 0;
  std::uint64_t fields = 0;     // the vertices' tensor fields (edges)
  std::uint64_t params = 0;     // the vertices' scalar parameters
  std::uint64_t steps = 0;      // program steps the tile takes part in
  std::uint64_t messages = 0;   // messages the tile sends or receives
};

// The constants turning counts into bytes (code_memory.cpp: their sources,
// and the arithmetic of the fits). Fits are to one published measurement:
// a Dense layer (4096 -> 1024, batch 16, float) compiled by Poplar 3.0 for
// one IPU, as Graphcore's auto-pipelining tests record its memory report.
struct CodeMemoryParams {
  double codeletBytes = 0;          // fit: machine code per distinct codelet on a tile
  double fieldBytes = 0;            // estimate: vertex state per tensor field
  double paramBytes = 0;            // estimate: vertex state per scalar parameter
  double tileVertexStateBytes = 0;  // sourced: state every tile running anything holds
  double stepControlBytes = 0;      // fit: control code per program step a tile takes part in
  double messageExchangeBytes = 0;  // fit: exchange code per message a tile sends or receives
};
CodeMemoryParams defaultCodeMemoryParams();

struct CodeBytes {
  std::uint64_t vertexCode = 0;
  std::uint64_t vertexState = 0;
  std::uint64_t controlCode = 0;
  std::uint64_t exchangeCode = 0;
  std::uint64_t total() const { return vertexCode + vertexState + controlCode + exchangeCode; }
  CodeBytes& operator+=(const CodeBytes& o);
};

// Per tile, [0, numTiles). `tile`: the target's (its workers and vectors),
// which a per-worker vertex's count of worker vertices depends on.
std::vector<CodeCounts> countCodeOnTiles(const Executable& exe, std::uint32_t numTiles, const model::TileParams& tile);
CodeBytes codeBytes(const CodeCounts& counts, const CodeMemoryParams& params = defaultCodeMemoryParams());
std::vector<CodeBytes> codeBytesPerTile(const Executable& exe, std::uint32_t numTiles, const model::TileParams& tile,
                                        const CodeMemoryParams& params = defaultCodeMemoryParams());
// `perTile[t]`: tile t's bytes (codeBytesPerTile's, read before adding).
std::vector<Id> addCodeMemoryTensors(Executable& exe, const std::vector<CodeBytes>& perTile);

// The categories of the tensors addCodeMemoryTensors appends.
inline constexpr const char* kVertexCodeCategory = "vertex_code";
inline constexpr const char* kVertexStateCategory = "vertex_state";
inline constexpr const char* kControlCodeCategory = "control_code";
inline constexpr const char* kExchangeCodeCategory = "exchange_code";

}  // namespace ipusim::ir
