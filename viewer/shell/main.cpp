// ipusim-view: the execution-trace viewer. Interactive by default; with
// --screenshot it renders one view headless and exits; with --bench it times
// opening and drawing a synthetic 10-million-slice profile.
#include "viewer/shell/viewer_bench.hpp"
#include "traces/interrupt_cleanup.hpp"
#include "traces/output_file.hpp"
#include "traces/profile_error.hpp"
#include "viewer/core/error_text.hpp"
#include "viewer/core/run_framing.hpp"
#include "viewer/shell/app.hpp"
#include "viewer/shell/gl_window.hpp"

#include <CLI/CLI.hpp>
#include <imgui.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>

namespace {

struct Options {
  std::vector<std::string> profiles;
  std::string screenshot;
  std::string view = "trace";
  std::string range;
  std::string select;
  bool flat = false;
  std::string size = "1600x900";
  bool force = false;
  bool bench = false;
  std::string benchDir;
  std::int64_t benchSlices = 10'000'000;
};

std::pair<int, int> parseSize(const std::string& text) {
  int w = 0, h = 0, used = 0;
  char x = 0;
  // The whole text, and the bounds said: '100000x100000' was "not
  // WIDTHxHEIGHT (at least 200x150)", naming neither the upper bound nor
  // why, and '1600x900junk' was read as 1600x900.
  if (std::sscanf(text.c_str(), "%6d%c%6d%n", &w, &x, &h, &used) != 3 || x != 'x' || used != int(text.size()) ||
      w < 200 || h < 150 || w > 16384 || h > 16384)
    throw std::invalid_argument("--size: '" + text +
                                "' is not WIDTHxHEIGHT from 200x150 to 16384x16384 (e.g. 1600x900)");
  return {w, h};
}

void applyRange(ipusim::viewer::ViewerApp& app, const ipusim::viewer::RangeSpec& range) {
  if (range.unit == ipusim::viewer::RangeSpec::Unit::Runs) app.setRunRange(range.from, range.to);
  else app.setRange(range.from, range.to);
}

std::optional<ipusim::viewer::RangeSpec> parseRangeOption(const Options& o) {
  if (o.range.empty()) return std::nullopt;
  return ipusim::viewer::parseRangeSpec(o.range);
}

int screenshot(const Options& o) {
  const auto [w, h] = parseSize(o.size);
  const auto range = parseRangeOption(o);
  const auto view = ipusim::viewer::viewKindFromString(o.view);
  // Checked before anything is opened: never an input, a device or an existing file without --force.
  ipusim::traces::OutputFile png(o.screenshot, {o.force, o.profiles});
  ipusim::viewer::ViewerApp app{ipusim::viewer::RecentProfiles(std::string("/dev/null"))};
  app.setOpenOnCapturedRuns(true);
  for (const auto& p : o.profiles) {
    if (!app.open(p, /*background=*/false)) {
      std::cerr << "ipusim-view: " << app.errors().back() << "\n";
      return 2;
    }
  }
  // A screenshot never shows a profile that fails the checks run after opening.
  if (!app.waitForChecks()) {
    std::cerr << "ipusim-view: " << app.errors().back() << "\n";
    return 2;
  }
  if (view == ipusim::viewer::ViewKind::Compare && o.profiles.size() < 2)
    throw std::invalid_argument("--view compare needs two profiles");
  if (range) applyRange(app, *range);  // a missing run is an error before any window opens
  for (std::size_t i = 0; i < app.openCount(); ++i) app.profile(i).trace->setFlat(o.flat);
  if (!o.select.empty() && !app.selectSliceNamed(o.select))
    throw std::invalid_argument("--select: no slice named like '" + o.select + "' in the profile(s)");
  ipusim::viewer::GlWindow window(w, h, "ipusim-view", false);
  app.show(view);
  // A few frames: ImGui lays out tables, tabs and child windows over two.
  for (int i = 0; i < 4; ++i) {
    window.beginFrame();
    app.frame();
    window.render();
    if (i < 3) window.swap();
  }
  // A screenshot never shows a lane that failed to load (a damaged packed
  // copy of the slices) as if it were empty.
  for (std::size_t i = 0; i < app.openCount(); ++i)
    for (const auto& lane : app.profile(i).session->lanes()) {
      const std::string failure = lane->failure();
      if (failure.empty()) continue;
      std::cerr << "ipusim-view: lane '" << lane->title << "': " << failure << "\n";
      return 2;
    }
  int fw = 0, fh = 0;
  auto pixels = window.readBackBuffer(fw, fh);
  ipusim::viewer::writePng(png.stream(), pixels, fw, fh);
  png.commit();
  std::cout << "ipusim-view: wrote " << o.screenshot << " (" << fw << "x" << fh << ")\n";
  return 0;
}

int interactive(const Options& o) {
  const auto [w, h] = parseSize(o.size);
  ipusim::viewer::ViewerApp app{ipusim::viewer::RecentProfiles()};
  app.setOpenOnCapturedRuns(true);
  const auto range = parseRangeOption(o);
  for (const auto& p : o.profiles) app.open(p);
  if (range && app.openCount() > 0) applyRange(app, *range);
  for (std::size_t i = 0; i < app.openCount(); ++i) app.profile(i).trace->setFlat(o.flat);
  if (!o.select.empty() && app.openCount() > 0) app.selectSliceNamed(o.select);
  if (!app.errors().empty() || o.profiles.empty()) app.show(ipusim::viewer::ViewKind::Start);
  else app.show(ipusim::viewer::viewKindFromString(o.view));
  ipusim::viewer::GlWindow window(w, h, "ipusim-view", true);
  while (!window.shouldClose()) {
    // Redraw on input, else every 1/30 s while lanes stream in (the frame
    // budget) and every 1/20 s when idle (held keys, tooltips settling) —
    // not as fast as the driver allows: without vsync (Xvfb, llvmpipe) a
    // spinning loop takes the core the loader needs.
    window.beginFrame(app.loading() ? 1.0 / 30 : 1.0 / 20);
    app.frame();
    window.render();
    window.swap();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A SIGINT or SIGTERM leaves no half-written screenshot (OutputFile registers its temporary file).
  ipusim::traces::removeRegisteredFilesOnInterrupt("\nipusim-view: interrupted; nothing written\n", 3);
  Options o;
  CLI::App cli{"ipusim-view: execution traces of ipusim profiles (profile.pop), like PopVision"};
  cli.add_option("profiles", o.profiles, "PROFILE_OR_DIR [SECOND]: one profile, or two to compare")
      ->expected(0, 2);
  cli.add_option("--screenshot", o.screenshot, "render one view to this PNG and exit (needs a display, e.g. xvfb-run)")
      // Empty, it would open the window instead (a script's unset variable);
      // "-" is standard output to `ipusim export`, and ipusim's other outputs
      // refuse it (sim/cli/commands.hpp): it was written as a file named "-".
      ->check([](const std::string& path) {
        if (path.empty()) return std::string("an empty file name");
        if (path == "-")
          return std::string("'-' (standard output carries this command's summary): expected a file name");
        return std::string();
      });
  cli.add_flag("--force", o.force, "with --screenshot: replace the PNG if it exists (never an input, a device or a FIFO)");
  cli.add_option("--view", o.view, "view to show: trace, summary, operations, liveness, insights, memory, compare, start")
      ->check(CLI::IsMember({"trace", "summary", "operations", "liveness", "insights", "memory", "compare", "start"}));
  cli.add_option("--range", o.range, "FROM:TO in cycles, or runs:A-B in Engine::run indices: zoom to and select this range "
                 "(default: the first two captured runs)");
  cli.add_option("--select", o.select,
                 "select (and centre) the first slice whose name contains this text, as the trace's search does, and the "
                 "first operations row whose layer/op contains it");
  cli.add_flag("--flat", o.flat, "open the trace in the flat view (each program lane on one row) instead of the flame view");
  cli.add_option("--size", o.size, "window size WIDTHxHEIGHT");
  cli.add_flag("--bench", o.bench, "time opening and drawing a synthetic profile, then exit");
  cli.add_option("--bench-dir", o.benchDir, "where --bench writes its profile (default: a temporary directory)");
  cli.add_option("--bench-slices", o.benchSlices, "slices in the --bench profile")->check(CLI::Range(1000, 200'000'000));
  CLI11_PARSE(cli, argc, argv);
  try {
    if (o.bench) return ipusim::bench::runViewerBench(o.benchDir, o.benchSlices, parseSize(o.size));
    if (!o.screenshot.empty()) return screenshot(o);
    return interactive(o);
  } catch (const ipusim::traces::ProfileError& e) {
    std::cerr << "ipusim-view: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ipusim-view: " << ipusim::viewer::errorText(e) << "\n";
    return 1;
  }
}
