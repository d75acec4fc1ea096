#pragma once
// A sweep: the points of a what-if study and the `ipusim run` command line
// of each. `--vary NAME=V1,V2,...` (repeatable) gives the values; the points
// are every combination (the first --vary changes slowest).
//
// What NAME may be, tried in this order:
// - a flag of `ipusim run`, written with its dashes: `--tiles`, `--arch`,
//   `--steps-per-execution` (passed as `--flag V`);
// - `arch`, `tiles`, `ipus`: the target flags `--arch`, `--tiles`, `--ipus`;
// - a target or host parameter (`ipusim params`: `exchange.bytesPerCycle`,
//   `host.batchPrepareSeconds`): passed as `--set NAME=V`;
// - a workload key path (`training.outfeed.mode`): `--workload-set NAME=V`;
// - a bare workload key (`steps_per_execution`) found exactly once in the
//   workload file: `--workload-set <its path>=V`;
// - a top-level workload key the file leaves out (`task`, `seed`):
//   `--workload-set NAME=V`.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ipusim::sim {

struct SweepAxis {
  std::string name;                  // as given
  std::string resolved;              // what it became: "--tiles", "--set", "--workload-set training.x"
  std::vector<std::string> values;
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::string> values;   // one per axis
  std::vector<std::string> runArgs;  // the arguments after `ipusim run WORKLOAD`
  // "10" or "steps_per_execution=10, tiles=64", as the console shows them
  // (a value holding a control character as a JSON string: "a\nb").
  std::string label() const;
  std::vector<std::string> axisNames;
  // The --vary values given as --workload-set assignments ("--vary steps=3",
  // several joined by " and "), as the point's errors name them; empty if none.
  std::string workloadSetsFrom;
};

struct SweepPlan {
  std::string workload;
  std::vector<SweepAxis> axes;
  std::vector<std::string> commonArgs;  // --set, --synthetic-data, ... passed to every point
  std::vector<SweepPoint> points;
};

// The points of one sweep: at most 10,000 (design choice: a day of points of
// ten seconds at two at a time), checked before any is built: the product of
// a few --vary lists grows fast (three of 100 values are a million points),
// and building or running them would only end in lost memory or time.
inline constexpr std::uint64_t kMaxSweepPoints = 10'000;

// `workloadJson` is the workload file's content (for bare key names).
// Throws std::invalid_argument naming the --vary spec and what was expected
// (no '=', an empty value, a bare name not in the workload or found twice),
// or the points' count when it is over kMaxSweepPoints.
SweepAxis parseSweepAxis(const std::string& spec, const nlohmann::json& workloadJson);
SweepPlan planSweep(const std::string& workload, const nlohmann::json& workloadJson,
                    const std::vector<std::string>& varySpecs, const std::vector<std::string>& commonArgs);

}  // namespace ipusim::sim
