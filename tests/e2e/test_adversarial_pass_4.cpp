// Found by the fourth adversarial pass of issue 33 (acceptance 2), and the
// defects the third saw but left. Each case failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>

namespace ipusim::test {
namespace {

// The out-of-memory errors named the layers but not the workload file, which
// every other workload error names: the up-front estimate's (a layer far too
// wide for the chip) and the memory plan's (a model that passes the estimate
// but not the plan), from `run` and `compile`, and a Keras file's.
TEST(AdversarialPass4, OutOfMemoryNamesTheWorkloadFile) {
  ScratchDir dir("oom-file");
  const std::string wide = workloadWith(dir.path(), [](nlohmann::json& j) {
    j["model"]["layers"][1]["units"] = 200000;  // a 627 MB kernel: the estimate refuses it
    j["dataset"]["format"] = "synthetic";
  });
  for (const char* command : {" run --steps 10 ", " compile "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(wide));
    expectRefusal(r, "ipusim: error: " + wide + ": out of memory: the model cannot fit 1472 tiles");
  }
  fs::create_directory(dir.path() / "plan");
  const std::string planned = workloadWith(dir.path() / "plan", [](nlohmann::json& j) {
    j["model"]["layers"][1]["units"] = 64;  // passes the estimate, not the plan, on one tile
    j["ipu"]["tiles"] = 1;
    j["dataset"]["format"] = "synthetic";
  });
  for (const char* command : {" run --steps 10 ", " compile "}) {
    const auto r = runCommand(ipusimBinary() + command + quote(planned));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_EQ(r.output.rfind("ipusim: error: " + planned + ": Out of memory in the compiled workload", 0), 0u) << r.output;
  }
  const std::string keras = sourcePath("workloads/keras/mnist_convnet_tf2.json");
  const auto r = runCommand(ipusimBinary() + " run --keras " + quote(keras) + " --tiles 2 --synthetic-data");
  expectRefusal(r, "ipusim: error: " + keras + ": out of memory: the model cannot fit 2 tiles");
}

}  // namespace
}  // namespace ipusim::test
