// Replays inputs through the libFuzzer targets' entry points, without
// libFuzzer: `ipusim_fuzz_replay TARGET PATH...` feeds every file named (a
// folder: each regular file in it) to TARGET's LLVMFuzzerTestOneInput, as a
// fuzzer replays its corpus. ctest runs it over each target's seeds and the
// inputs that once found a problem (tests/fuzz/regressions), in the release
// build and under ASan+UBSan (.ci/sanitize); mutation fuzzing itself runs on
// demand (.ci/fuzz, clang). Each target's entry point is compiled under a
// name of its own (tests/CMakeLists.txt), so that all five link here.
// A finding ends the process as it ends a fuzzer's: an exception escaping the
// entry point, an abort, a sanitizer report. Exit 1 when no input was read.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

extern "C" int ipusimFuzz_workload(const std::uint8_t* data, std::size_t size);
extern "C" int ipusimFuzz_keras(const std::uint8_t* data, std::size_t size);
extern "C" int ipusimFuzz_graph(const std::uint8_t* data, std::size_t size);
extern "C" int ipusimFuzz_engine_options(const std::uint8_t* data, std::size_t size);
extern "C" int ipusimFuzz_profile(const std::uint8_t* data, std::size_t size);

namespace {

using Entry = int (*)(const std::uint8_t*, std::size_t);

const std::map<std::string, Entry>& targets() {
  static const std::map<std::string, Entry> all{{"workload", ipusimFuzz_workload},
                                                {"keras", ipusimFuzz_keras},
                                                {"graph", ipusimFuzz_graph},
                                                {"engine_options", ipusimFuzz_engine_options},
                                                {"profile", ipusimFuzz_profile}};
  return all;
}

std::vector<std::filesystem::path> inputsOf(const std::filesystem::path& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(path))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

}  // namespace

// Never called: SystemC's library (which the engine options' layer links)
// refers to it (C linkage, as its sc_externs.h declares it); this main()
// replaces the library's (tests/test_main.cpp).
extern "C" int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  const auto target = argc >= 3 ? targets().find(argv[1]) : targets().end();
  if (target == targets().end()) {
    std::cerr << "usage: ipusim_fuzz_replay TARGET PATH... (TARGET: workload, keras, graph, engine_options, "
                 "profile; a PATH that is a folder: each regular file in it)\n";
    return 2;
  }
  std::size_t replayed = 0;
  for (int i = 2; i < argc; ++i) {
    if (!std::filesystem::exists(argv[i])) {
      std::cerr << "ipusim_fuzz_replay: " << argv[i] << " does not exist\n";
      return 2;
    }
    for (const std::filesystem::path& file : inputsOf(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << "ipusim_fuzz_replay: cannot read " << file.string() << "\n";
        return 2;
      }
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      target->second(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::cout << "fuzz_" << target->first << ": " << replayed << " inputs replayed\n";
  if (replayed == 0) {
    std::cerr << "ipusim_fuzz_replay: no input to replay\n";
    return 1;
  }
  return 0;
}
