#pragma once
// Opening an input file the user named (a workload, a serialized graph, a
// dataset) without surprises: a FIFO with no writer does not block, a
// directory or a device is refused by name, and a file larger than the
// reader's limit is refused before it is read. Errors are
// std::invalid_argument("<path>: <what> ...").
#include <cstdint>
#include <string>

namespace ipusim::util {

// Opens `path` read-only and checks that it is a regular file of at most
// `maxBytes`; returns the descriptor (the caller closes it). `what` names the
// file's role in messages ("workload file").
int openRegularInputFile(const std::string& path, const std::string& what, std::uint64_t maxBytes);

// The whole file, after the checks above.
std::string readInputFile(const std::string& path, const std::string& what, std::uint64_t maxBytes);

}  // namespace ipusim::util
