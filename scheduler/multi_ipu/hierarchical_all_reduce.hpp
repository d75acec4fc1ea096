#pragma once
// The all-reduce of replicas spread over several IPU-PODs joined by GW-Links
// (model/target.hpp, GwLinkParams), staged as Graphcore's GCL stages a
// collective over IPU-Link domains joined by gateway links: each stage's
// traffic stays on one kind of link. (GCL's options name the two kinds of
// stage: useSynclessCollectives "hybrid: syncful over IPU-Links and syncless
// over gw links", Poplar API reference 2.4, gcl/Collectives. The pages found
// do not spell the stages out; these are the hierarchical ring's three, with
// only 1/P of the data crossing the slower GW-Links.)
//
// Q PODs of P replicas each (replica r in POD r / P, at local index r % P);
// within each POD a ring over its ladder (ladderRing(P) offset to the POD's
// first replica), every POD's ring in the same local order.
//   1. pod_reduce_scatter/0 .. P-2: in every POD at once, the ring
//      reduce-scatter over `chunks` (P chunks of a copy): the replica at local
//      ring position p holds its POD's sum of chunk (p + 1) mod P.
//   2. gw_reduce_scatter/0 .. Q-2: for every local position p at once, a ring
//      over the Q PODs (POD order 0, 1, ..., Q-1: the loop of GW-Links) of the
//      replicas at p, over chunk (p + 1) mod P cut into Q sub-chunks (every
//      range of the chunk cut into Q pieces, sub-chunk j the j-th piece of
//      each); the replica of POD q then holds the whole system's sum of
//      sub-chunk (q + 1) mod Q.
//   3. mean (when `meanScale` is not 0): each replica scales the sub-chunk it
//      owns by meanScale (GCL's MEAN, as collectives.hpp's scaleOwnedChunks).
//   4. gw_all_gather/0 .. Q-2: the summed sub-chunks passed on around the
//      PODs' rings, so every replica at p holds the sum of chunk (p + 1) mod P.
//   5. pod_all_gather/0 .. P-2: each POD's ring all-gather of the chunks.
// Each element is summed once (at its sub-chunk's owner) and copied: every
// replica ends with the same bits. A replica sends 2 (P - 1) / P of its copy
// over IPU-Links and 2 (Q - 1) / (P Q) over the GW-Links.
#include "scheduler/multi_ipu/collectives.hpp"

#include <cstdint>
#include <vector>

namespace ipusim::scheduler {

// `chunks` cut into `parts` sub-chunks: every range of it cut into `parts`
// pieces (piece j of [b, e): [b + (e - b) j / parts, b + (e - b) (j + 1) / parts)),
// sub-chunk j the j-th piece of each range.
Chunks subChunks(const std::vector<ElementRange>& chunk, std::uint32_t parts);

// The steps above over `data` (R = its replicas, a multiple of `pods`),
// `received` a buffer mapped as `data`. `chunks`: R / pods chunks of one copy.
// With one POD, the flat ring all-reduce over ladderRing(R) (and the mean,
// when asked, between its halves). Throws std::invalid_argument when R is not
// a multiple of `pods` (naming both) or when the chunks are not R / pods.
std::vector<CollectiveStep> podAllReduce(const ir::Tensor& data, const ir::Tensor& received, std::uint32_t replicas,
                                         std::uint32_t pods, std::uint32_t workerContexts, const Chunks& chunks,
                                         double meanScale = 0);

}  // namespace ipusim::scheduler
