// frame_gate: background work waits while a frame is drawn, and no longer.
#include "viewer/core/frame_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ipusim::viewer {
namespace {

TEST(FrameGate, BackgroundWorkWaitsForTheFrameToEnd) {
  std::atomic<bool> cancel{false};
  frame_gate::waitWhileDrawing(cancel);  // no frame: returns at once
  frame_gate::frameBegins();
  std::atomic<bool> waited{false};
  std::thread worker([&] {
    frame_gate::waitWhileDrawing(cancel);
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited.load()) << "the background work ran during the frame";
  frame_gate::frameEnds();
  worker.join();
  EXPECT_TRUE(waited.load());
  EXPECT_FALSE(frame_gate::drawing());
}

TEST(FrameGate, CancellingEndsTheWait) {
  // Closing a profile mid-frame must not wait for the frame: its checks stop.
  std::atomic<bool> cancel{false};
  frame_gate::frameBegins();
  std::thread worker([&] { frame_gate::waitWhileDrawing(cancel); });
  cancel = true;
  worker.join();
  frame_gate::frameEnds();
}

TEST(FrameGate, TheUiWaitingForTheWorkLetsItRunMidFrame) {
  // A frame that needs a background figure now (a comparison's host wait)
  // waits for the checks: they must not wait for that frame in turn.
  std::atomic<bool> cancel{false};
  frame_gate::frameBegins();
  {
    const frame_gate::UiWaits uiWaits;
    std::thread worker([&] { frame_gate::waitWhileDrawing(cancel); });
    worker.join();
  }
  EXPECT_TRUE(frame_gate::drawing());
  frame_gate::frameEnds();
}

}  // namespace
}  // namespace ipusim::viewer
