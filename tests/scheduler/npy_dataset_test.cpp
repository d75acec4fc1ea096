// Token ids and labels from NumPy .npy files (dataset.format "npy"): the
// format as numpy.save writes it, every integer type, the shapes a sequence
// classifier and a language model need, and every bad file refused by name
// (the file, the example, the position and the value); a language model
// trained from such files computes what the CPU reference computes.
#include "training_harness.hpp"

#include "scheduler/models/workload.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/dataset/npy_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace ipusim::testing::npy_dataset_test {
namespace {

// A .npy file as numpy.save writes it (version 1.0, the header padded to 64 bytes).
std::string npyBytes(const std::string& descr, const std::string& shape, const std::vector<std::uint8_t>& data,
                     const std::string& fortran = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(1) + char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

template <class T>
std::vector<std::uint8_t> little(const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Under a folder of the test's own: ctest runs tests in parallel, and two
// tests writing lm_ids.npy of their own into one folder read each other's.
std::string writeFile(const std::string& name, const std::string& bytes) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "/npy_" + test->test_suite_name() + "_" + test->name();
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NpyFile, ReadsEveryIntegerTypeAsNumpySavesIt) {
  const auto i4 = sim::dataset::readNpyIntegers(
      writeFile("i4.npy", npyBytes("<i4", "(2, 3)", little<std::int32_t>({0, 1, -2, 3, 40000, -70000}))), "ids");
  EXPECT_EQ(i4.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(i4.values, (std::vector<std::int64_t>{0, 1, -2, 3, 40000, -70000}));
  const auto u1 = sim::dataset::readNpyIntegers(writeFile("u1.npy", npyBytes("|u1", "(3,)", {0, 200, 255})), "ids");
  EXPECT_EQ(u1.shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(u1.values, (std::vector<std::int64_t>{0, 200, 255}));
  const auto i2 = sim::dataset::readNpyIntegers(writeFile("i2.npy", npyBytes("<i2", "(2,)", little<std::int16_t>({-1, 30000}))), "ids");
  EXPECT_EQ(i2.values, (std::vector<std::int64_t>{-1, 30000}));
  const auto i8 = sim::dataset::readNpyIntegers(
      writeFile("i8.npy", npyBytes("<i8", "(1, 2)", little<std::int64_t>({5000000000ll, -3}))), "ids");
  EXPECT_EQ(i8.values, (std::vector<std::int64_t>{5000000000ll, -3}));
}

TEST(NpyFile, WhatIsNotReadIsRefusedNamingTheFile) {
  auto error = [](const std::string& name, const std::string& bytes) {
    const std::string path = writeFile(name, bytes);
    return errorOf([&] { sim::dataset::readNpyIntegers(path, "token ids"); });
  };
  const std::vector<std::uint8_t> four = little<std::int32_t>({1, 2, 3, 4});
  EXPECT_NE(error("magic.npy", "PK\x03\x04 not numpy").find("magic.npy: bad magic"), std::string::npos);
  EXPECT_NE(error("f4.npy", npyBytes("<f4", "(4,)", four)).find("descr '<f4'"), std::string::npos);
  EXPECT_NE(error("big.npy", npyBytes(">i4", "(4,)", four)).find("descr '>i4'"), std::string::npos);
  EXPECT_NE(error("fortran.npy", npyBytes("<i4", "(2, 2)", four, "True")).find("fortran_order True"), std::string::npos);
  EXPECT_NE(error("short.npy", npyBytes("<i4", "(5,)", four)).find("truncated"), std::string::npos);
  EXPECT_NE(error("long.npy", npyBytes("<i4", "(3,)", four)).find("data after"), std::string::npos);
  EXPECT_NE(error("huge.npy", npyBytes("<i4", "(100000, 100000)", four)).find("more than"), std::string::npos);
  EXPECT_NE(error("shape.npy", npyBytes("<i4", "[4]", four)).find("not a tuple"), std::string::npos);
  const std::string missing = errorOf([] { sim::dataset::readNpyIntegers(::testing::TempDir() + "/none.npy", "token ids"); });
  EXPECT_NE(missing.find("none.npy"), std::string::npos) << missing;
}

// Found by the third adversarial pass of issue 33: headers numpy itself would
// not read were read by a guess, and a file announcing gigabytes it does not
// hold was allocated before it was found truncated.
TEST(NpyFile, AHeaderNumpyWouldNotReadIsRefusedNotGuessed) {
  auto error = [](const std::string& name, const std::string& bytes) {
    const std::string path = writeFile(name, bytes);
    return errorOf([&] { sim::dataset::readNpyIntegers(path, "token ids"); });
  };
  const std::vector<std::uint8_t> four = little<std::int32_t>({1, 2, 3, 4});
  // Read as (2, 2) before.
  for (const char* shape : {"(2,, 2)", "(2, 02)", "(,2, 2)", "(2 2)"})
    EXPECT_NE(error("shape.npy", npyBytes("<i4", shape, four)).find("shape.npy: the .npy header's shape '" +
                                                                   std::string(shape) + "' is not a tuple of sizes"),
              std::string::npos)
        << shape;
  // A string, not the boolean False (numpy refuses it): read as C order before.
  EXPECT_NE(error("quoted.npy", npyBytes("<i4", "(2, 2)", four, "'False'")).find("quoted.npy: fortran_order 'False'"),
            std::string::npos);
  // What numpy.load reads beyond what numpy.save writes (Python's integer
  // literals): a '+' and underscores between digits; not a '-' or "2__0".
  EXPECT_EQ(sim::dataset::readNpyIntegers(writeFile("plus.npy", npyBytes("<i4", "(+2, + 2)", four)), "ids").shape,
            (std::vector<std::uint64_t>{2, 2}));
  const std::vector<std::uint8_t> twentyTwo = little<std::int32_t>(std::vector<std::int32_t>(22, 1));
  EXPECT_EQ(sim::dataset::readNpyIntegers(writeFile("underscore.npy", npyBytes("<i4", "(1_1, 2)", twentyTwo)), "ids")
                .shape,
            (std::vector<std::uint64_t>{11, 2}));
  // ("0_4" is Python's SyntaxError: a leading zero.)
  for (const char* shape : {"(-4,)", "(4_,)", "(_4,)", "(2__2,)", "(+,4)", "(++4,)", "(0_4,)"})
    EXPECT_NE(error("sign.npy", npyBytes("<i4", shape, four)).find("is not a tuple of sizes"), std::string::npos)
        << shape;
  // What numpy.save writes is still read.
  EXPECT_EQ(sim::dataset::readNpyIntegers(writeFile("trailing.npy", npyBytes("<i4", "(2, 2,)", four)), "ids").shape,
            (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(sim::dataset::readNpyIntegers(writeFile("scalar.npy", npyBytes("<i4", "()", little<std::int32_t>({7}))), "ids")
                .values,
            (std::vector<std::int64_t>{7}));
}

TEST(NpyFile, SizesAreCheckedAgainstTheBoundAndTheFileBeforeReading) {
  auto error = [](const std::string& name, const std::string& bytes) {
    const std::string path = writeFile(name, bytes);
    return errorOf([&] { sim::dataset::readNpyIntegers(path, "token ids"); });
  };
  // 2^29 + 1 one-byte values: within 4 GiB of data, but 4 GiB of 64-bit values in memory (accepted before).
  EXPECT_NE(error("many.npy", npyBytes("|u1", "(536870913,)", {1, 2})).find("many.npy: the .npy header announces more than "
                                                                            "536870912 values"),
            std::string::npos);
  // Half a billion ids announced, 16 bytes there: refused from the file's size.
  EXPECT_NE(error("claim.npy", npyBytes("<i4", "(500000000,)", little<std::int32_t>({1, 2, 3, 4})))
                .find("claim.npy: truncated: the header announces 2000000000 bytes of data, the file has 16"),
            std::string::npos);
}

// A language model's ids (8 examples of 5 steps, vocabulary 12) and labels (a class per step).
nlohmann::json npyLanguageModel(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& labels,
                                const std::string& labelShape, const std::string& idsShape = "(8, 5)") {
  const std::string idsPath = writeFile("lm_ids.npy", npyBytes("<i4", idsShape, little(ids)));
  const std::string labelsPath = writeFile("lm_labels.npy", npyBytes("<i4", labelShape, little(labels)));
  nlohmann::json j = smallJob(R"([
    {"type": "embedding", "input_dim": 12, "output_dim": 6, "name": "tokens"},
    {"type": "multi_head_attention", "num_heads": 2, "key_dim": 3, "use_causal_mask": true, "inputs": ["tokens", "tokens"],
     "name": "attention"},
    {"type": "dense", "units": 12, "activation": "softmax", "name": "next_token"}])", {5},
                              {{"type", "sgd"}, {"learning_rate", 0.1}}, 3);
  j["dataset"] = {{"format", "npy"}, {"images", idsPath}, {"labels", labelsPath}, {"batch_size", 4}, {"classes", 12},
                  {"shuffle_seed", 7}, {"input_shape", {5}}};
  return j;
}

std::vector<std::int32_t> counting(std::size_t n, std::int32_t modulo) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::int32_t((i * 7 + 3) % std::size_t(modulo));
  return v;
}

TEST(NpyDataset, ALanguageModelTrainsFromNpyFilesAsTheReference) {
  const nlohmann::json j = npyLanguageModel(counting(40, 12), counting(40, 11), "(8, 5)");
  const scheduler::Workload w = scheduler::parseWorkload(j, "npy.json");
  const sim::dataset::Examples e = sim::dataset::loadExamples(w.dataset);
  EXPECT_EQ(e.count, 8u);
  EXPECT_EQ(e.tokens, counting(40, 12));
  expectSameTraining(j, "npy.json", 20);
}

TEST(NpyDataset, AnIdBeyondTheVocabularyOrAMisshapenFileIsNamed) {
  auto error = [](const nlohmann::json& j) {
    return errorOf([&] { sim::dataset::loadExamples(scheduler::parseWorkload(j, "npy.json").dataset); });
  };
  std::vector<std::int32_t> ids = counting(40, 12);
  ids[17] = 12;  // example 3, position 2
  const std::string beyond = error(npyLanguageModel(ids, counting(40, 11), "(8, 5)"));
  EXPECT_NE(beyond.find("lm_ids.npy: example 3, position 2: token id 12 is outside [0, 12)"), std::string::npos) << beyond;
  std::vector<std::int32_t> labels = counting(40, 11);
  labels[9] = -1;  // example 1, step 4
  const std::string label = error(npyLanguageModel(counting(40, 12), labels, "(8, 5)"));
  EXPECT_NE(label.find("lm_labels.npy: example 1, step 4: label -1 is outside [0, 12)"), std::string::npos) << label;
  const std::string shape = error(npyLanguageModel(counting(40, 12), counting(40, 11), "(40,)"));
  EXPECT_NE(shape.find("lm_labels.npy: shape (40,): expected (8, 5), a label per step"), std::string::npos) << shape;
}

TEST(NpyDataset, IdsOfTheRightSizeButAnotherShapeAreRefused) {
  // (8, 5, 1) and (8, 1, 5) hold 5 ids an example too: read as (8, 5) before.
  for (const char* shape : {"(8, 5, 1)", "(8, 1, 5)"}) {
    const nlohmann::json j = npyLanguageModel(counting(40, 12), counting(40, 11), "(8, 5)", shape);
    const std::string e = errorOf([&] { sim::dataset::loadExamples(scheduler::parseWorkload(j, "npy.json").dataset); });
    EXPECT_NE(e.find("lm_ids.npy: shape " + std::string(shape) + ": expected token ids of shape (8, 5), examples of the "
                     "model's input"),
              std::string::npos)
        << e;
  }
}

TEST(NpyDataset, TheWorkloadSaysWhatNpyReads) {
  nlohmann::json j = npyLanguageModel(counting(40, 12), counting(40, 11), "(8, 5)");
  j["dataset"].erase("labels");
  EXPECT_NE(errorOf([&] { scheduler::parseWorkload(j, "npy.json"); }).find("dataset.labels: missing"), std::string::npos);
  nlohmann::json pixels = npyLanguageModel(counting(40, 12), counting(40, 11), "(8, 5)");
  pixels["model"]["layers"] = {{{"type", "dense"}, {"units", 12}, {"activation", "softmax"}}};
  const std::string e = errorOf([&] { scheduler::parseWorkload(pixels, "npy.json"); });
  EXPECT_NE(e.find("dataset.format: 'npy' reads token ids"), std::string::npos) << e;
}

}  // namespace
}  // namespace ipusim::testing::npy_dataset_test
