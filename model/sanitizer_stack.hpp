#pragma once
// AddressSanitizer and SystemC's coroutines. libsystemc annotates its
// QuickThreads stack switches for ASan (weak __sanitizer_*_switch_fiber
// references), but when sc_start() hands control back to sc_main, ASan is
// left believing the thread's stack is the last coroutine's. An exception
// thrown afterwards on the real stack (a full disk at Engine::finish) then
// makes ASan skip its clean-up of the unwound frames ("ignoring requested
// __asan_handle_no_return"), and their stale redzones are reported as a
// stack-buffer-overflow in whatever function next uses that stack
// (ProfileWriter::Impl::closeStatements). Call this after sc_start()
// returns: it tells ASan the thread is back on its own stack. A no-op in
// builds without ASan.
namespace ipusim::model {

void noteBackOnMainStack() noexcept;

}  // namespace ipusim::model
