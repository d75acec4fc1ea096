// frame_gate: background work waits while a frame is drawn, and no longer.
#include "viewer/core/frame_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ipusim::viewer::frame_gate_test {
namespace {

TEST(FrameGate, BackgroundWorkWaitsForTheFrameToEnd) {
  frame_gate::waitWhileDrawing();  // no frame: returns at once
  frame_gate::frameBegins();
  std::atomic<bool> waited{false};
  std::thread worker([&] {
    frame_gate::waitWhileDrawing();
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited.load()) << "the background work ran during the frame";
  frame_gate::frameEnds();
  worker.join();
  EXPECT_TRUE(waited.load());
  EXPECT_FALSE(frame_gate::drawing());
}

TEST(FrameGate, TheUiWaitingForTheWorkLetsItRunMidFrame) {
  // A frame that needs a background figure now (a comparison's host wait)
  // waits for the checks, and so does closing a profile mid-frame: they must
  // not wait for that frame in turn.
  frame_gate::frameBegins();
  {
    const frame_gate::UiWaits uiWaits;
    std::thread worker([] { frame_gate::waitWhileDrawing(); });
    worker.join();
  }
  EXPECT_TRUE(frame_gate::drawing());
  frame_gate::frameEnds();
}

}  // namespace
}  // namespace ipusim::viewer::frame_gate_test
