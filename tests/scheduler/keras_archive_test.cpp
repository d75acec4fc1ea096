// Keras 3 .keras archives (zip files of config.json, metadata.json and
// model.weights.h5; tests/data/keras/make_keras_archives.py): told by their
// content, read through config.json only, and every damaged one refused
// with its file named, within the 16 MiB a Keras model's JSON may have.
#include "scheduler/models/keras_archive.hpp"
#include "scheduler/models/keras_model.hpp"
#include "scheduler/models/workload.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace ipusim::scheduler::keras_archive_test {
namespace {

std::string src(const std::string& rel) { return std::string(IPUSIM_SOURCE_DIR) + "/" + rel; }
std::string archive(const std::string& name) { return src("tests/data/keras/archives/" + name); }

std::string errorOf(const std::string& path) {
  try {
    loadKerasModel(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KerasArchive, ReadsAsItsConfigJson) {
  const KerasModel a = loadKerasModel(archive("mlp_adam.keras"));
  const KerasModel j = loadKerasModel(src("tests/data/keras/optimizers_keras3.json"));
  EXPECT_EQ(a.format, "keras3");
  ASSERT_EQ(a.layers.size(), 3u);
  ASSERT_EQ(a.layers.size(), j.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    EXPECT_EQ(a.layers[i].name, j.layers[i].name);
    EXPECT_EQ(a.layers[i].kind, j.layers[i].kind);
    EXPECT_EQ(a.layers[i].units, j.layers[i].units);
    EXPECT_EQ(a.layers[i].outputShape, j.layers[i].outputShape);
  }
  EXPECT_EQ(a.inputShape, (std::vector<std::uint64_t>{64}));
  ASSERT_TRUE(a.optimizer && j.optimizer);
  EXPECT_EQ(a.optimizer->type, "adam");
  EXPECT_DOUBLE_EQ(a.optimizer->learningRate, j.optimizer->learningRate);
  ASSERT_TRUE(a.loss);
  EXPECT_EQ(a.loss->type, j.loss->type);
  EXPECT_EQ(a.stepsPerExecution, j.stepsPerExecution);
}

TEST(KerasArchive, WorkloadNamesAnArchive) {
  nlohmann::json w = {{"model", {{"keras", "archives/mlp_adam.keras"}}}, {"dataset", {{"format", "synthetic"}}}};
  const Workload fromArchive = parseWorkload(w, "w.json", src("tests/data/keras"));
  w["model"]["keras"] = "optimizers_keras3.json";
  const Workload fromJson = parseWorkload(w, "w.json", src("tests/data/keras"));
  EXPECT_EQ(fromArchive.optimizer.type, "adam");
  EXPECT_EQ(fromArchive.dataset.features, fromJson.dataset.features);
  EXPECT_EQ(fromArchive.layers.size(), fromJson.layers.size());
}

TEST(KerasArchive, ToldByItsContentNotItsName) {
  EXPECT_TRUE(looksLikeZip("PK\x03\x04rest"));
  EXPECT_TRUE(looksLikeZip(std::string("PK\x05\x06", 4)));
  EXPECT_FALSE(looksLikeZip("{\"class_name\""));
  EXPECT_FALSE(looksLikeZip("PK"));
  // The archive copied under a .json name reads the same.
  const std::string copy = (std::filesystem::temp_directory_path() / ("ipusim_archive_" + std::to_string(::getpid()) + ".json")).string();
  std::filesystem::copy_file(archive("mlp_adam.keras"), copy, std::filesystem::copy_options::overwrite_existing);
  const KerasModel m = loadKerasModel(copy);
  std::filesystem::remove(copy);
  EXPECT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.optimizer->type, "adam");
}

TEST(KerasArchiveErrors, EachDamageNamesTheFile) {
  const std::string noConfig = archive("no_config.keras");
  EXPECT_EQ(errorOf(noConfig), noConfig + ": a zip archive without config.json: not a .keras file (Keras 3's "
                                          "model.save() writes config.json, metadata.json and model.weights.h5)");
  const std::string oversized = archive("oversized.keras");
  EXPECT_EQ(errorOf(oversized), oversized + ": config.json: 17825792 bytes; a Keras model's JSON may have at most 16777216");
  // Its headers claim 2 bytes: the read stops one byte past the limit.
  const std::string lying = archive("lying_size.keras");
  EXPECT_EQ(errorOf(lying), lying + ": config.json: inflates to more than 16777216 bytes, the most a Keras model's JSON may have");
  const std::string truncated = archive("truncated.keras");
  EXPECT_EQ(errorOf(truncated).rfind(truncated + ": starts as a zip archive (a .keras file) but libzip cannot read it: ", 0), 0u)
      << errorOf(truncated);
  const std::string text = archive("not_a_zip.keras");
  EXPECT_EQ(errorOf(text).rfind(text + ": not valid JSON and not a .keras archive (a zip file): ", 0), 0u) << errorOf(text);
}

TEST(KerasArchiveErrors, InMemoryArchivesAreBoundedToo) {
  std::ifstream in(archive("lying_size.keras"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    kerasArchiveConfig(bytes, "m.keras", 1 << 20);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "m.keras: config.json: inflates to more than 1048576 bytes, the most a Keras model's JSON may have");
  }
  std::ifstream good(archive("mlp_adam.keras"), std::ios::binary);
  const std::string model((std::istreambuf_iterator<char>(good)), std::istreambuf_iterator<char>());
  EXPECT_EQ(nlohmann::json::parse(kerasArchiveConfig(model, "m.keras", 1 << 20)),
            nlohmann::json::parse(std::ifstream(src("tests/data/keras/optimizers_keras3.json"))));
}

TEST(KerasArchiveErrors, ADamagedHdf5FileIsNamed) {
  // An HDF5 signature and nothing an HDF5 library can read after it.
  const std::string path = (std::filesystem::temp_directory_path() / ("ipusim_h5_" + std::to_string(::getpid()) + ".h5")).string();
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string("\x89HDF\r\n\x1a\n", 8) << std::string(64, '\0');
  }
  const std::string e = errorOf(path);
  std::filesystem::remove(path);
  EXPECT_EQ(e, path + ": the HDF5 file cannot be read: a damaged or truncated file");
}

}  // namespace
}  // namespace ipusim::scheduler::keras_archive_test
