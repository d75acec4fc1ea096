#include "model/sanitizer_stack.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define IPUSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IPUSIM_ASAN 1
#endif
#endif

#ifdef IPUSIM_ASAN
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace ipusim::model {

void noteBackOnMainStack() noexcept {
#ifdef IPUSIM_ASAN
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const bool known = pthread_attr_getstack(&attributes, &bottom, &size) == 0;
  pthread_attr_destroy(&attributes);
  if (!known) return;
  // A switch "to" the stack we are on, completed at once: ASan's bounds are right again.
  void* fakeStack = nullptr;
  __sanitizer_start_switch_fiber(&fakeStack, bottom, size);
  __sanitizer_finish_switch_fiber(fakeStack, nullptr, nullptr);
#endif
}

}  // namespace ipusim::model
