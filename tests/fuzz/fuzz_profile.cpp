// Fuzzes the profile readers: any bytes as profile.pop, opened with the
// ProfileReader (verification on open) and, when accepted, summarised by
// `report` and exported by `export`, as the commands do.
#include "fuzz_common.hpp"
#include "profiler/analysis/chrome_trace.hpp"
#include "profiler/analysis/perfetto_trace.hpp"
#include "profiler/analysis/report.hpp"
#include "traces/profile_reader.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <unistd.h>


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("ipusim-fuzz-profile-" + std::to_string(::getpid()) + ".pop")).string();
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const ipusim::traces::ProfileReader reader(path);
    const auto report = ipusim::profiler::analysis::buildReport(reader, {});
    std::ostringstream text;
    ipusim::profiler::analysis::printReport(report, text);
    std::ostringstream trace;
    ipusim::profiler::analysis::writeChromeTrace(reader, trace);
    std::ostringstream perfetto;
    ipusim::profiler::analysis::writePerfettoTrace(reader, perfetto);
  } catch (const std::bad_alloc&) {
    std::abort();  // unbounded allocation from file contents: a finding
  } catch (const std::exception&) {
    // Every refusal is an exception with a message: ProfileError, or a range
    // error naming what does not fit. Crashes and sanitizer reports are findings.
  }
  std::remove(path.c_str());
  return 0;
}
