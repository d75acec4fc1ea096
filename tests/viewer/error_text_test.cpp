// What the viewer says when an exception reaches the user: out of memory in
// words (as `ipusim` says it), anything else as its own message.
#include "viewer/core/error_text.hpp"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

namespace ipusim::viewer::error_text_test {
namespace {

TEST(ErrorText, OutOfMemoryIsSaidInWords) {
  const std::string text = errorText(std::bad_alloc());
  EXPECT_EQ(text.find("out of memory: "), 0u) << text;
  EXPECT_EQ(text.find("bad_alloc"), std::string::npos) << text;
  EXPECT_EQ(errorText(std::bad_array_new_length()), text);
}

TEST(ErrorText, OtherErrorsKeepTheirMessage) {
  EXPECT_EQ(errorText(std::invalid_argument("p.pop: damaged profile")), "p.pop: damaged profile");
}

}  // namespace
}  // namespace ipusim::viewer::error_text_test
