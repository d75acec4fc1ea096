#pragma once
// Ctrl-C handling for long simulations: the first SIGINT/SIGTERM sets a flag
// that host programs check between runs (they stop promptly and the profile
// is abandoned); a second one exits at once.
namespace ipusim::sim {

void installInterruptHandler();
bool interruptRequested();

}  // namespace ipusim::sim
