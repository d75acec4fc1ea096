#pragma once
// The trained weights' digest `run --json` gives (weights_digest): FNV-1a
// (64 bits) over the bytes of one replica's copy of every tensor of category
// "weights", in tensor order, as 16 hex digits. Equal digests say two runs
// ended with the same weights bit for bit (an instance of an mpirun run
// against the one process: tests/mpi_run/check).
#include "model/ipu_system.hpp"

#include <cstdint>
#include <string>

namespace ipusim::sim {

// `replica` of `replicas` (the tensors hold each replica's copy in turn).
std::string weightsDigest(const model::IpuSystem& system, std::uint32_t replica, std::uint32_t replicas);

}  // namespace ipusim::sim
