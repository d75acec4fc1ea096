#pragma once
// A small, hand-checked profile for the viewer tests, written with the
// ProfileWriter into a scratch directory removed when the test ends.
//
// Clock 1 GHz, one IPU of 4 tiles, one Engine::run [0, 1000) of two steps:
//   host "dataset":   prepare batch [0,300), [450,720)
//   stream "infeed":  StreamCopy [0,400) = Begin [0,300) Mid [300,380) 4096 B End [380,400)
//                     StreamCopy [600,700) = Begin [600,640) Mid [640,690) 1024 B End [690,700)
//   bsp IPU 0:        compute [400,500) phase 1, exchange [500,550), sync [550,560),
//                     compute [700,900) phase 1, sync [900,910)
//   program IPU 0:    Repeat [400,910) > Execute matmul [400,500), [700,900)
//   phase 1 tiles:    100, 50, 0, 25 cycles
//   loss counter:     2.3 at 500, 1.9 at 900
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ipusim::viewer::testing {

class ScratchDirectory {
 public:
  ScratchDirectory();
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Writes the profile described above to `path`.
void writeSampleProfile(const std::string& path);

// Four Engine::run calls of 1,000 cycles, 200 apart: #0 [100,1100),
// #1 [1300,2300), #2 [2500,3500) captured, #3 [3700,4700) not. Each captured
// run at s: StreamCopy [s, s+650) = Begin [s, s+400) Mid [s+400, s+600) End
// [s+600, s+650), then compute [s+650, s+1000) on the BSP lane.
void writeMultiRunProfile(const std::string& path);

}  // namespace ipusim::viewer::testing
