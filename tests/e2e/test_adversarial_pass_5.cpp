// Found by the fifth adversarial pass of issue 33 (acceptance 2). Each case
// failed before its fix.
#include "hardening_helpers.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <map>

namespace ipusim::test {
namespace {

// A Masking layer whose mask_value is finite but beyond the compute type's
// range (1e39 in float32, 1e5 in float16) compiled, and the run failed on the
// vertex's parameter ("codelet IdMaskFromValues: param 'maskValue' = inf,
// expected a finite number"), naming no file, layer or key; `compile -o`
// wrote a graph that could not run. Refused where the graph is built.
TEST(AdversarialPass5, AMaskValueBeyondTheComputeTypeIsRefusedByKey) {
  ScratchDir dir("mask-value-range");
  const auto masked = [&](double maskValue, const char* dtype) {
    return workloadWith(dir.path(), [&](nlohmann::json& j) {
      j["name"] = "masked";
      j["dataset"] = {{"format", "synthetic"}, {"batch_size", 2}, {"examples", 8}, {"input_shape", {5, 3}}, {"classes", 3}};
      j["model"] = {{"dtype", dtype},
                    {"layers", {{{"type", "masking"}, {"mask_value", maskValue}, {"name", "mask"}},
                                {{"type", "lstm"}, {"units", 4}},
                                {{"type", "dense"}, {"units", 3}, {"activation", "softmax"}}}}};
      j["training"] = {{"steps", 2}, {"steps_per_execution", 1}};
      j["ipu"] = {{"tiles", 4}};
    });
  };
  std::string workload = masked(1e39, "float32");
  for (const char* command : {" run ", " compile "})
    expectRefusal(runCommand(ipusimBinary() + command + quote(workload)),
                  "ipusim: error: " + workload + ": masked: layer 'mask' (masking): mask_value: 1e+39 is "
                  "not finite once rounded to the model's compute type (float32: expected |mask_value| <= 3.4028235e+38");
  workload = masked(1e5, "float16");
  expectRefusal(runCommand(ipusimBinary() + " run " + quote(workload)),
                "layer 'mask' (masking): mask_value: 100000.0 is not finite once rounded to the model's compute type "
                "(float16: expected |mask_value| < 65520");
  workload = masked(65504, "mixed_float16");  // float16's largest: compared as it is
  const auto r = runCommand(ipusimBinary() + " run " + quote(workload));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}


}  // namespace
}  // namespace ipusim::test
