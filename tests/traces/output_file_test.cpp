// OutputFile's temporary file (traces/output_file.hpp) is created anew: found
// by the third adversarial pass of issue 33, a symlink at "<path>.tmp-<pid>"
// had the output written over the file it names.
#include "scratch_directory.hpp"
#include "traces/output_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <unistd.h>

namespace ipusim::traces::testing::output_file_test {
namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(OutputFile, ALinkAtTheTemporaryNameIsNotWrittenThrough) {
  ScratchDirectory dir;
  const std::string precious = dir.file("precious.txt"), out = dir.file("out.json");
  std::ofstream(precious) << "precious\n";
  std::filesystem::create_symlink(precious, out + ".tmp-" + std::to_string(::getpid()));
  OutputFile file(out, {});
  file.stream() << "{}\n";
  file.commit();
  EXPECT_EQ(contents(precious), "precious\n");
  EXPECT_EQ(contents(out), "{}\n");
  EXPECT_FALSE(std::filesystem::is_symlink(out));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"out.json", "precious.txt"}));
}

}  // namespace
}  // namespace ipusim::traces::testing::output_file_test
