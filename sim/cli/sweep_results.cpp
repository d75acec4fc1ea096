#include "sim/cli/sweep_results.hpp"

#include "profiler/analysis/json_number.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace ipusim::sim {

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(std::string("run summary has no '") + key + "'");
  return j.at(key);
}

double number(const nlohmann::json& j, const char* key) {
  const auto& v = field(j, key);
  if (!v.is_number()) throw std::invalid_argument(std::string("run summary '") + key + "' is not a number");
  return v.get<double>();
}

std::string csvQuoted(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return quoted + "\"";
}

// A label in the plot's data file (its xtic column): double quotes, on one
// line (a value holding a newline, a layer name's, split its row in two and
// gnuplot drew the points at the wrong places), as csvQuoted keeps it.
std::string gnuplotQuoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c == '\n' || c == '\r' ? ' ' : c;
  }
  return quoted + "\"";
}

// A string in the plot's script: single quotes, where gnuplot substitutes
// nothing (a ' doubled). In double quotes it runs `...` as a command: a
// workload named w`touch X`.json ran `touch X` through gnuplot.
std::string gnuplotScriptString(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

// A figure as the CSV holds it: 10 significant digits, or an empty cell.
std::string optionalText(const std::optional<double>& v) {
  if (!v) return "";
  std::ostringstream out;
  out << std::setprecision(10) << *v;
  return out.str();
}

}  // namespace

void readRunSummary(const nlohmann::json& s, SweepResult& r) {
  r.simulatedSeconds = number(s, "simulated_seconds");
  r.cycles = static_cast<std::uint64_t>(number(s, "cycles"));
  r.steps = static_cast<std::uint64_t>(number(s, "steps"));
  r.engineRuns = static_cast<std::uint64_t>(number(s, "engine_runs"));
  r.throughput = r.simulatedSeconds > 0 ? double(r.steps) / r.simulatedSeconds : 0.0;
  // (Both absent from summaries written before they were measured.)
  if (s.contains("examples_per_second")) r.examplesPerSecond = number(s, "examples_per_second");
  if (s.contains("batch_latency_seconds") && !s.at("batch_latency_seconds").is_null()) {
    const auto& latency = s.at("batch_latency_seconds");
    r.latencyP50 = number(latency, "p50");
    r.latencyP99 = number(latency, "p99");
  }
  const auto& loss = field(s, "final_loss");
  if (!loss.is_null()) r.finalLoss = profiler::analysis::numberFromJson(loss, "final_loss");
  const auto& step = field(s, "step_cycles");
  const double total = double(r.cycles);
  if (total > 0) {
    const double steps = double(r.steps);
    r.shares.compute = steps * number(step, "compute") / total;
    r.shares.exchange = steps * number(step, "exchange") / total;
    r.shares.sync = steps * number(step, "sync") / total;
    r.shares.streamCopy = steps * number(step, "stream_copy") / total;
    // (Absent from summaries written before they were measured: 0.)
    auto shareIfGiven = [&](const char* key) { return step.contains(key) ? steps * number(step, key) / total : 0.0; };
    r.shares.ipuLink = shareIfGiven("ipu_link");
    r.shares.collective = shareIfGiven("collective");
    r.shares.streamingMemory = shareIfGiven("streaming_memory");
    r.shares.hostAndIdle = std::max(0.0, 1.0 - r.shares.compute - r.shares.exchange - r.shares.sync -
                                             r.shares.streamCopy - r.shares.ipuLink - r.shares.collective -
                                             r.shares.streamingMemory);
  }
}

nlohmann::json sweepToJson(const SweepPlan& plan, const std::vector<SweepResult>& results) {
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& a : plan.axes) axes.push_back({{"name", a.name}, {"passed_as", a.resolved}, {"values", a.values}});
  nlohmann::json points = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t i = 0; i < plan.axes.size(); ++i) values[plan.axes[i].name] = r.point.values[i];
    nlohmann::json p = {{"index", r.point.index}, {"values", values}, {"ok", r.ok}, {"run_args", r.point.runArgs}};
    if (r.ok) {
      p["simulated_seconds"] = r.simulatedSeconds;
      p["cycles"] = r.cycles;
      p["steps"] = r.steps;
      p["engine_runs"] = r.engineRuns;
      p["throughput_steps_per_second"] = r.throughput;
      p["examples_per_second"] = r.examplesPerSecond;
      p["batch_latency_seconds"] = r.latencyP50 ? nlohmann::json{{"p50", *r.latencyP50}, {"p99", *r.latencyP99}}
                                                : nlohmann::json(nullptr);
      p["final_loss"] = r.finalLoss ? profiler::analysis::jsonNumber(*r.finalLoss) : nlohmann::json(nullptr);
      p["shares"] = {{"compute", r.shares.compute},       {"exchange", r.shares.exchange},
                     {"sync", r.shares.sync},             {"stream_copy", r.shares.streamCopy},
                     {"ipu_link", r.shares.ipuLink},      {"collective", r.shares.collective},
                     {"streaming_memory", r.shares.streamingMemory},
                     {"host_and_idle", r.shares.hostAndIdle}};
    } else {
      p["exit_code"] = r.exitCode;
      p["error"] = r.error;
    }
    points.push_back(std::move(p));
  }
  return {{"workload", plan.workload}, {"axes", axes}, {"common_args", plan.commonArgs}, {"points", points}};
}

std::string sweepToCsv(const SweepPlan& plan, const std::vector<SweepResult>& results) {
  std::ostringstream out;
  out << std::setprecision(10);
  out << "point";
  for (const auto& a : plan.axes) out << "," << csvQuoted(a.name);
  out << ",status,simulated_seconds,cycles,steps,engine_runs,throughput_steps_per_second,examples_per_second,"
         "batch_latency_p50_seconds,batch_latency_p99_seconds,final_loss,"
         "compute_share,exchange_share,sync_share,stream_copy_share,ipu_link_share,collective_share,"
         "streaming_memory_share,host_and_idle_share,error\n";
  for (const auto& r : results) {
    out << r.point.index;
    for (const auto& v : r.point.values) out << "," << csvQuoted(v);
    if (!r.ok) {
      out << ",failed,,,,,,,,,,,,,,,,,," << csvQuoted(r.error) << "\n";
      continue;
    }
    out << ",ok," << r.simulatedSeconds << "," << r.cycles << "," << r.steps << "," << r.engineRuns << ","
        << r.throughput << "," << r.examplesPerSecond << "," << optionalText(r.latencyP50) << ","
        << optionalText(r.latencyP99) << "," << (!r.finalLoss                     ? std::string()
                                         : std::isfinite(*r.finalLoss) ? std::to_string(*r.finalLoss)
                                                                       : profiler::analysis::numberText(*r.finalLoss)) << ","
        << r.shares.compute << "," << r.shares.exchange << "," << r.shares.sync << "," << r.shares.streamCopy << ","
        << r.shares.ipuLink << "," << r.shares.collective << "," << r.shares.streamingMemory << ","
        << r.shares.hostAndIdle << ",\n";
  }
  return out.str();
}

std::string plotData(const std::vector<SweepResult>& results) {
  std::ostringstream out;
  out << std::setprecision(10);
  out << "# label seconds throughput compute exchange sync stream_copy host_and_idle latency_p50_ms latency_p99_ms "
         "ipu_link collective streaming_memory\n";
  for (const auto& r : results) {
    if (!r.ok) continue;
    std::string label;  // the values only; the x axis title names the axes
    for (const auto& v : r.point.values) label += (label.empty() ? "" : " / ") + v;
    // Throughput in examples/s: steps/s would fall as a varied batch size grows.
    out << gnuplotQuoted(label) << " " << r.simulatedSeconds << " " << r.examplesPerSecond << " "
        << 100 * r.shares.compute << " " << 100 * r.shares.exchange << " " << 100 * r.shares.sync << " "
        << 100 * r.shares.streamCopy << " " << 100 * r.shares.hostAndIdle << " "
        << (r.latencyP50 ? 1e3 * *r.latencyP50 : 0.0) << " " << (r.latencyP99 ? 1e3 * *r.latencyP99 : 0.0) << " "
        << 100 * r.shares.ipuLink << " " << 100 * r.shares.collective << " " << 100 * r.shares.streamingMemory << "\n";
  }
  return out.str();
}

std::string plotScript(const SweepPlan& plan, const std::vector<SweepResult>& results, const std::string& dataFile,
                       const std::string& pngPath) {
  std::size_t points = 0;
  bool latency = false;  // a panel of batch latencies when the runs measured them
  for (const auto& r : results) points += r.ok ? 1 : 0, latency = latency || (r.ok && r.latencyP50);
  std::string varied, title;
  for (const auto& a : plan.axes) {
    varied += (varied.empty() ? "" : " / ") + a.name;
    title += (title.empty() ? "" : ", ") + a.name;
  }
  // Labels that would not fit side by side are slanted.
  std::size_t labelChars = 0;
  for (const auto& r : results) {
    if (!r.ok) continue;
    for (const auto& v : r.point.values) labelChars += v.size() + 3;
  }
  std::string workload = plan.workload.substr(plan.workload.find_last_of('/') + 1);
  std::ostringstream g;
  g << "set terminal pngcairo size 1400," << (latency ? 1300 : 1000) << " noenhanced font 'DejaVu Sans,12'\n"
    << "set output " << gnuplotScriptString(pngPath) << "\n"
    << "set datafile separator whitespace\n"
    << "set multiplot layout " << (latency ? 4 : 3) << ",1 title "
    << gnuplotScriptString("ipusim sweep: " + workload + ", varying " + title)
    << " font 'DejaVu Sans,15'\n"
    // The same margins on every panel, so the points line up over the bars.
    << "set lmargin 12\nset rmargin 24\n"
    << "set grid ytics\n"
    << "set key off\n"
    << "set xlabel " << gnuplotScriptString(varied) << "\n"
    << (labelChars > 90 ? "set xtics rotate by -20\n" : "")
    << "set xrange [-0.5:" << (points > 0 ? points - 1 : 0) << ".5]\n"
    << "set style data linespoints\n"
    << "set offsets 0, 0, graph 0.18, 0\n"
    << "set yrange [0:*]\n"
    // Values are labels: evenly spaced, whatever they are (numbers, ALL/LAST, ipu1/ipu2).
    << "set ylabel 'simulated time (s)'\n"
    << "plot " << gnuplotScriptString(dataFile)
    << " using 0:2:xtic(1) lw 2 pt 7 ps 1.2 lc rgb '#1f77b4', '' using 0:2:(sprintf('%.3g s', $2)) with labels "
       "offset 0,1.1 notitle\n"
    << "set ylabel 'throughput (examples/s)'\n"
    << "plot " << gnuplotScriptString(dataFile)
    << " using 0:3:xtic(1) lw 2 pt 7 ps 1.2 lc rgb '#2ca02c', '' using 0:3:(sprintf('%.0f', $3)) with labels "
       "offset 0,1.1 notitle\n"
    << (latency ? "set ylabel 'batch latency (ms)'\nset key inside left top\nplot " + gnuplotScriptString(dataFile) +
                      " using 0:9:xtic(1) title 'p50' lw 2 pt 7 ps 1.2 lc rgb '#9467bd', '' using 0:10 title 'p99' "
                      "lw 2 pt 5 ps 1.2 lc rgb '#8c564b'\nset key off\n"
                : std::string())
    << "set ylabel 'share of simulated time (%)'\n"
    << "set offsets 0, 0, 0, 0\n"
    << "set yrange [0:100]\n"
    << "set key outside right top vertical\n"
    << "set style data histograms\n"
    << "set style histogram rowstacked\n"
    << "set style fill solid 0.85 border -1\n"
    << "set boxwidth 0.6\n"
    << "plot " << gnuplotScriptString(dataFile) << " using 4:xtic(1) title 'compute' lc rgb '#d62728', "
    << "'' using 5 title 'exchange' lc rgb '#1f77b4', '' using 6 title 'sync' lc rgb '#7f7f7f', "
    << "'' using 7 title 'stream copy' lc rgb '#ff7f0e', '' using 11 title 'IPU-Link' lc rgb '#17becf', "
    << "'' using 12 title 'collective' lc rgb '#e377c2', '' using 13 title 'Streaming Memory' lc rgb '#8c564b', "
    << "'' using 8 title 'host & idle' lc rgb '#bcbd22'\n"
    << "unset multiplot\n";
  return g.str();
}

}  // namespace ipusim::sim
