#pragma once
// HostParams: the host side of the system — the training-loop process, the
// dataset pipeline and the stream service — in seconds of host time. In the
// Graphcore tutorial the host decides the result, so these are named,
// documented and listed by `ipusim params` like the target's; each default
// says where it comes from, and the ones fitted to the tutorial's two
// published times (14.62 s with feeds, 23.77 s without) say so.
#include <string>
#include <vector>

namespace ipusim::sim {

struct HostParams {
  double runDispatchSeconds = 0;     // host time per Engine::run call before the device starts
  double streamStartupSeconds = 0;   // per run: until the host stream service answers the first copy
  double streamServiceSeconds = 0;   // per stream copy: host-side service time (part of Mid)
  double batchPrepareSeconds = 0;    // dataset pipeline time per batch
  double outfeedDequeueSeconds = 0;  // host time to take one element off the outfeed

  static HostParams defaults();
  // Sets one parameter by name ("host.runDispatchSeconds"); errors name it and the nearest valid name.
  void set(const std::string& name, const std::string& value);
  static bool isHostParam(const std::string& name);  // "host." prefix
};

struct HostParamInfo {
  std::string name, unit, value, description;
};
std::vector<HostParamInfo> listHostParams(const HostParams& params);
// Names of the parameters fitted to the tutorial's published times: the
// absolute times a run reports rest on them (bench/TUTORIAL_FIT.md).
std::vector<std::string> fittedHostParams();

}  // namespace ipusim::sim
