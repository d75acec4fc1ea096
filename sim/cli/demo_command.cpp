#include "sim/cli/child_process.hpp"
#include "sim/cli/commands.hpp"
#include "sim/host/interrupt.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ipusim::sim {

namespace fs = std::filesystem;

namespace {

// workloads/ next to the current directory, or in the repository the binary
// was built from (build/bin/ipusim -> ../../workloads).
fs::path findWorkloads() {
  if (fs::is_directory("workloads")) return "workloads";
  const fs::path beside = fs::path(selfExecutable()).parent_path() / ".." / ".." / "workloads";
  if (fs::is_directory(beside)) return fs::weakly_canonical(beside);
  throw std::runtime_error("demo: cannot find the workloads/ folder; run from the repository root");
}

bool haveCommand(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

struct DemoArgs {
  std::string out = "reports";
  std::uint64_t steps = 0;  // 0: the workloads' own (10,000)
  std::uint64_t capturedRuns = 10;
  bool synthetic = false;
  bool screenshots = true;
};

int runDemo(const DemoArgs& args) {
  // The runs write their reports through POPLAR_ENGINE_OPTIONS's
  // autoReport.directory, a JSON string: a name that is not UTF-8 failed
  // with the JSON library's "[json.exception.type_error.316] invalid UTF-8 byte".
  try {
    (void)nlohmann::json(args.out).dump();
  } catch (const nlohmann::json::type_error&) {
    throw std::invalid_argument(
        "--out " + nlohmann::json(args.out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        ": the runs write their reports into it through POPLAR_ENGINE_OPTIONS's autoReport.directory, a JSON "
        "string: expected a UTF-8 path (U+FFFD shows each byte that is not)");
  }
  const fs::path workloads = findWorkloads();
  const std::string self = selfExecutable();
  struct Case { const char* name; const char* file; };
  const Case cases[] = {{"with_feeds", "mnist_with_feeds.json"}, {"without_feeds", "mnist_without_feeds.json"}};
  // Each child handles its own interrupt (it is in our process group); we wait for it.
  const CooperativeInterrupts waitForChildren;
  for (const auto& c : cases) {
    const fs::path dir = fs::path(args.out) / c.name;
    std::cout << "== " << c.name << ": " << (workloads / c.file).string() << " -> " << dir.string() << "\n"
              << std::flush;
    std::vector<std::string> argv = {self, "run", (workloads / c.file).string()};
    if (args.steps) argv.insert(argv.end(), {"--steps", std::to_string(args.steps)});
    if (args.synthetic) argv.push_back("--synthetic-data");
    // Each simulation in its own process: SystemC elaborates once per process.
    const std::string options = nlohmann::json{{"autoReport.all", "true"},
                                               {"autoReport.directory", dir.string()},
                                               {"autoReport.executionProfileProgramRunCount",
                                                std::to_string(args.capturedRuns)}}
                                    .dump();
    const int status = runChild(argv, {{"POPLAR_ENGINE_OPTIONS", options}});
    if (status != 0 || interruptRequested()) {
      std::cerr << "demo: the " << c.name << " run " << (status == kInterruptedExitCode || interruptRequested() ? "was interrupted" : "failed") << "\n";
      return status ? status : kInterruptedExitCode;
    }
    std::cout << "\n";
  }
  // (As the children's arguments: "--out=-d" gave compare "-d/without_feeds", an option to it.)
  const std::string a = pathArgument((fs::path(args.out) / "with_feeds").string()),
                    b = pathArgument((fs::path(args.out) / "without_feeds").string());
  // The baseline first: "speedup" then reads as how much faster the feeds are.
  std::cout << "== comparison (A: without feeds, B: with feeds)\n" << std::flush;
  if (const int status = runChild({self, "compare", b, a}); status != 0) return status;

  const fs::path viewer = fs::path(self).parent_path() / "ipusim-view";
  if (args.screenshots && fs::exists(viewer)) {
    const bool headless = std::getenv("DISPLAY") == nullptr;
    if (!headless || haveCommand("xvfb-run")) {
      std::vector<std::pair<std::vector<std::string>, std::string>> shots = {
          {{a, "--view", "trace"}, pathArgument((fs::path(args.out) / "with_feeds.png").string())},
          {{b, "--view", "trace"}, pathArgument((fs::path(args.out) / "without_feeds.png").string())},
          {{a, b, "--view", "compare"}, pathArgument((fs::path(args.out) / "compare.png").string())},
          {{a, "--view", "memory"}, pathArgument((fs::path(args.out) / "memory.png").string())}};
      for (const auto& [viewArgs, png] : shots) {
        std::vector<std::string> argv;
        if (headless) argv = {"/usr/bin/env", "xvfb-run", "-a", "-s", "-screen 0 1600x900x24"};
        argv.push_back(viewer.string());
        argv.insert(argv.end(), viewArgs.begin(), viewArgs.end());
        // The demo owns its output directory: a rerun replaces its pictures.
        argv.insert(argv.end(), {"--screenshot", png, "--force", "--size", "1600x900"});
        if (runChild(argv) == 0) std::cout << "picture          " << png << "\n";
        else std::cerr << "demo: could not render " << png << " (the profiles are fine)\n";
      }
    }
  }
  std::cout << "\nOpen both in the viewer, stacked on one axis:\n  " << viewer.string() << " " << a << " "
            << b << "\nor export for Perfetto UI / chrome://tracing:\n  " << self << " export " << a
            << " -o with_feeds.json\n";
  return 0;
}

}  // namespace

void addDemoCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand(
      "demo", "The tutorial: train the MNIST MLP with and without infeed/outfeed queues, profile and compare both");
  auto args = std::make_shared<DemoArgs>();
  // (Empty, as a script's unset variable gives it, the runs wrote into the working directory.)
  cmd->add_option("-o,--out", args->out, "where the two report directories go")->check(nonEmptyFileName());
  cmd->add_option("--steps", args->steps, "training steps (default: the workloads' 10,000)")->check(wholeNumberAtLeastOne());
  // (At most the engine option's 18 digits: "-1" became 2^64 - 1, refused
  // as if POPLAR_ENGINE_OPTIONS held it.)
  cmd->add_option("--captured-runs", args->capturedRuns, "autoReport.executionProfileProgramRunCount")
      ->check(wholeNumberFrom(0, 999999999999999999ull));
  cmd->add_flag("--synthetic-data", args->synthetic, "timing only, no numerics");
  cmd->add_flag("!--no-screenshots", args->screenshots, "do not render PNG pictures with ipusim-view");
  cmd->callback([args, &exitCode] { exitCode = runDemo(*args); });
}

}  // namespace ipusim::sim
