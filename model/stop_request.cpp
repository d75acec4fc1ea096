#include "model/stop_request.hpp"

#include <atomic>

namespace ipusim::model {
namespace {
std::atomic<bool> stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "requestStop() runs in a signal handler");
}  // namespace

void requestStop() noexcept { stop.store(true, std::memory_order_relaxed); }
bool stopRequested() noexcept { return stop.load(std::memory_order_relaxed); }
void clearStopRequest() noexcept { stop.store(false, std::memory_order_relaxed); }

}  // namespace ipusim::model
