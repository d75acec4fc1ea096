#pragma once
// What differs between the builds one test object may be linked into:
// .ci/sanitize links the release build's test objects against the sanitized
// libraries instead of compiling them again (tests/CMakeLists.txt,
// IPUSIM_TEST_OBJECTS_FROM), so a test asks at run time where its build's
// binaries are and whether they are sanitized. Defined by test_main.cpp,
// which each build compiles with its own flags.
namespace ipusim::test {

const char* binaryDir();  // the build directory: bin/ipusim, bin/ipusim-view
bool sanitizedBuild();    // the libraries and binaries run under a sanitizer

}  // namespace ipusim::test
