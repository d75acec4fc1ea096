// IDX reading (Fashion-MNIST from Debian's package) and batching.
#include "tests/test_build.hpp"
#include "sim/dataset/batch_source.hpp"
#include "sim/dataset/idx_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace ipusim::sim::dataset::dataset_test {
namespace {

std::string tempFile(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const std::string path = std::string(ipusim::test::binaryDir()) + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

void expectErrorMentions(const std::function<void()>& f, const std::vector<std::string>& fragments) {
  try {
    f();
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    for (const auto& s : fragments) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
}

TEST(Dataset, ReadsFashionMnistTrainingSet) {
  const auto images = readIdx(scheduler::kFashionMnistTrainImages);
  const auto labels = readIdx(scheduler::kFashionMnistTrainLabels);
  EXPECT_EQ(images.dims, (std::vector<std::uint32_t>{60000, 28, 28}));
  EXPECT_EQ(labels.dims, (std::vector<std::uint32_t>{60000}));
  EXPECT_EQ(labels.data[0], 9);  // the first Fashion-MNIST training label: ankle boot
}

TEST(Dataset, ReadsPlainIdx) {
  const auto p = tempFile("plain.idx", {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6});
  const auto a = readIdx(p);
  EXPECT_EQ(a.dims, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(a.data, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Dataset, ErrorsNameTheFile) {
  expectErrorMentions([] { readIdx("missing.idx"); }, {"missing.idx", "cannot open"});
  const auto bad = tempFile("badmagic.idx", {1, 2, 3, 4, 0, 0, 0, 1});
  expectErrorMentions([&] { readIdx(bad); }, {"badmagic.idx", "bad magic"});
  const auto shortFile = tempFile("short.idx", {0, 0, 8, 1, 0, 0, 0, 5, 1, 2});
  expectErrorMentions([&] { readIdx(shortFile); }, {"short.idx", "truncated", "5"});
  const auto img = tempFile("img3.idx", {0, 0, 8, 2, 0, 0, 0, 3, 0, 0, 0, 1, 1, 2, 3});
  const auto lab = tempFile("lab2.idx", {0, 0, 8, 1, 0, 0, 0, 2, 1, 2});
  expectErrorMentions([&] { loadIdxExamples(img, lab, 1, 10); }, {"img3.idx", "3 images", "lab2.idx", "2 labels"});
}

TEST(Dataset, BatchesAreDeterministicScaledAndReshuffledPerEpoch) {
  BatchSource a(syntheticExamples(10, 4, 3, 1), 4, 99), b(syntheticExamples(10, 4, 3, 1), 4, 99);
  EXPECT_EQ(a.batchesPerEpoch(), 2u);  // the remainder of 2 is dropped
  std::vector<std::int32_t> epoch0, epoch1;
  for (int i = 0; i < 4; ++i) {
    const Batch x = a.next(), y = b.next();
    EXPECT_EQ(x.images, y.images);
    EXPECT_EQ(x.labels, y.labels);
    ASSERT_EQ(x.images.size(), 16u);
    for (float v : x.images) EXPECT_TRUE(v >= 0.0f && v <= 1.0f);
    (i < 2 ? epoch0 : epoch1).insert((i < 2 ? epoch0 : epoch1).end(), x.labels.begin(), x.labels.end());
  }
  BatchSource c(syntheticExamples(10, 4, 3, 1), 4, 100);
  EXPECT_NE(c.next().images, BatchSource(syntheticExamples(10, 4, 3, 1), 4, 99).next().images);
}

TEST(Dataset, BatchesIntoTheCallersBuffersAreTheSameBatches) {
  // Over an epoch's end (the reshuffle), the buffers reused from batch to batch.
  BatchSource a(syntheticExamples(10, 4, 3, 1), 4, 99), b(syntheticExamples(10, 4, 3, 1), 4, 99);
  std::vector<float> images(16, -1.0f);
  std::vector<std::int32_t> labels(4, -1);
  for (int i = 0; i < 5; ++i) {
    const Batch x = a.next();
    b.nextInto(images.data(), labels.data());
    EXPECT_EQ(images, x.images) << "batch " << i;
    EXPECT_EQ(labels, x.labels) << "batch " << i;
  }
  EXPECT_EQ(b.batchesServed(), 5u);
}

}  // namespace
}  // namespace ipusim::sim::dataset::dataset_test
