// Target presets, overrides, validation, JSON and the parameter listing.
#include "model/target.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

namespace test_target {

using ipusim::model::listParams;
using ipusim::model::Target;

namespace {

// The message of the std::invalid_argument thrown by f (fails the test if none is).
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument";
  return "";
}

}  // namespace

TEST(TargetPreset, Ipu2IsMk2Gc200) {
  const Target t = Target::preset("ipu2");
  EXPECT_EQ(t.arch, "ipu2");
  EXPECT_EQ(t.tile.tilesPerIpu, 1472u);
  EXPECT_EQ(t.tile.memoryBytes, 624u * 1024u);
  EXPECT_DOUBLE_EQ(t.clockHz, 1.33e9);
  EXPECT_EQ(t.tile.workerContexts, 6u);
  EXPECT_EQ(t.tile.ampFloatMacsPerCycle, 16u);
  EXPECT_EQ(t.tile.ampHalfMacsPerCycle, 64u);
  EXPECT_EQ(t.exchange.bytesPerCycle, 4u);
  EXPECT_EQ(t.exchange.pairedReceiveFactor, 2u);
  EXPECT_DOUBLE_EQ(t.hostLink.bytesPerSecond, 100e9 / 8);  // the IPU-M2000's 100 GbE host link
  EXPECT_EQ(t.sync.internalCycles, 126u);                  // Target getMaxIPUSyncDelay
  EXPECT_EQ(t.sync.externalCycles, 600u);                  // Target getGlobalSyncCycles
  EXPECT_EQ(t.tile.supervisorOverheadCycles, 11u);         // popops basicOpSupervisorOverhead
  EXPECT_EQ(t.totalTiles(), 1472u);
}

TEST(TargetPreset, Ipu1IsMk1Gc2) {
  const Target t = Target::preset("ipu1");
  EXPECT_EQ(t.tile.tilesPerIpu, 1216u);
  EXPECT_EQ(t.tile.memoryBytes, 256u * 1024u);
  EXPECT_DOUBLE_EQ(t.clockHz, 1.6e9);
  EXPECT_EQ(t.tile.ampFloatMacsPerCycle, 8u);
  EXPECT_EQ(t.tile.ampHalfMacsPerCycle, 32u);
}

TEST(TargetPreset, UnknownArchNamesItAndTheValidOnes) {
  const std::string message = errorOf([] { Target::preset("ipu3"); });
  EXPECT_NE(message.find("'ipu3'"), std::string::npos) << message;
  EXPECT_NE(message.find("ipu1, ipu2"), std::string::npos) << message;
}

TEST(TargetSet, OverridesFieldsByDottedName) {
  Target t = Target::preset("ipu2");
  t.set("exchange.bytesPerCycle", "8");
  t.set("tile.tilesPerIpu", "64");
  t.set("ipuLink.numIpus", "2");
  t.set("clockHz", "1e9");
  t.set("hostLink.latencySeconds", "2.5e-6");
  EXPECT_EQ(t.exchange.bytesPerCycle, 8u);
  EXPECT_EQ(t.totalTiles(), 128u);
  EXPECT_EQ(t.ipuOf(64), 1u);
  EXPECT_DOUBLE_EQ(t.clockHz, 1e9);
  EXPECT_DOUBLE_EQ(t.hostLink.latencySeconds, 2.5e-6);
  EXPECT_NO_THROW(t.validate());
}

TEST(TargetSet, UnknownNameSuggestsTheNearest) {
  Target t = Target::preset("ipu2");
  const std::string message = errorOf([&] { t.set("exchange.bytesPerCycel", "8"); });
  EXPECT_NE(message.find("'exchange.bytesPerCycel'"), std::string::npos) << message;
  EXPECT_NE(message.find("'exchange.bytesPerCycle'"), std::string::npos) << message;
}

TEST(TargetSet, BadValuesNameTheParameterAndWhatItAccepts) {
  Target t = Target::preset("ipu2");
  for (const char* bad : {"", "abc", "-4", "4.5", "0", "99999999999", " 4", "4x"}) {
    const std::string message = errorOf([&] { t.set("tile.tilesPerIpu", bad); });
    EXPECT_NE(message.find("'tile.tilesPerIpu'"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("integer in [1, 4294967295]"), std::string::npos) << bad << ": " << message;
  }
  for (const char* bad : {"fast", "0", "-1e9", "inf", "nan", "1e999"}) {
    const std::string message = errorOf([&] { t.set("clockHz", bad); });
    EXPECT_NE(message.find("'clockHz'"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("finite number > 0"), std::string::npos) << bad << ": " << message;
  }
  // Latencies may be zero but not negative.
  EXPECT_NO_THROW(t.set("exchange.latencyCycles", "0"));
  EXPECT_NE(errorOf([&] { t.set("hostLink.latencySeconds", "-1"); }).find("number >= 0"), std::string::npos);
  // A rejected value leaves the field as it was.
  EXPECT_EQ(t.tile.tilesPerIpu, 1472u);
}

TEST(TargetValidate, RejectsZeroAndNonFiniteFields) {
  Target t = Target::preset("ipu2");
  t.tile.tilesPerIpu = 0;
  EXPECT_NE(errorOf([&] { t.validate(); }).find("tile.tilesPerIpu"), std::string::npos);
  t = Target::preset("ipu2");
  t.clockHz = -1;
  EXPECT_NE(errorOf([&] { t.validate(); }).find("clockHz"), std::string::npos);
  t = Target::preset("ipu2");
  t.tile.tilesPerIpu = 1u << 20;
  t.ipuLink.numIpus = 1u << 13;
  EXPECT_NE(errorOf([&] { t.validate(); }).find("ipuLink.numIpus' = 8192 is over the limit"), std::string::npos);
  t = Target::preset("ipu2");
  t.tile.tilesPerIpu = 8193;
  EXPECT_NE(errorOf([&] { t.validate(); }).find("tile.tilesPerIpu' = 8193 is over the limit"), std::string::npos);
  t = Target::preset("ipu2");
  t.hostLink.latencySeconds = 1e11;
  EXPECT_NE(errorOf([&] { t.validate(); }).find("hostLink.latencySeconds"), std::string::npos);
  t = Target::preset("ipu2");
  t.arch = "gpu";
  EXPECT_NE(errorOf([&] { t.validate(); }).find("'gpu'"), std::string::npos);
}

TEST(TargetTime, SecondsToCyclesRoundsUpButNotOnFloatingPointNoise) {
  const Target t = Target::preset("ipu2");  // 1.33 GHz
  EXPECT_EQ(t.secondsToCycles(0), 0u);
  EXPECT_EQ(t.secondsToCycles(1e-6), 1330u);   // 1e-6 * 1.33e9 = 1330.0000000000002 in doubles
  EXPECT_EQ(t.secondsToCycles(1.5e-9), 2u);    // 1.995 cycles
  EXPECT_EQ(t.secondsToCycles(1.0 / 1.33e9 * 0.5), 1u);
  EXPECT_EQ(t.secondsToCycles(14.62), 19444600000u);
  EXPECT_DOUBLE_EQ(t.cyclesToSeconds(1330), 1e-6);
  EXPECT_THROW(t.secondsToCycles(-1), std::invalid_argument);
}

TEST(TargetJson, RoundTripsPresetPlusOverrides) {
  Target t = Target::preset("ipu1");
  t.set("exchange.bytesPerCycle", "8");
  t.set("hostLink.bytesPerSecond", "16e9");
  const nlohmann::json j = t.toJson();
  EXPECT_EQ(j["arch"], "ipu1");
  EXPECT_EQ(j["overrides"].size(), 2u);
  EXPECT_EQ(j["overrides"]["exchange.bytesPerCycle"], 8);
  const Target back = Target::fromJson(j);
  EXPECT_EQ(back.toJson(), j);
  EXPECT_EQ(back.exchange.bytesPerCycle, 8u);
  EXPECT_DOUBLE_EQ(back.hostLink.bytesPerSecond, 16e9);
  EXPECT_EQ(Target::preset("ipu2").toJson(), (nlohmann::json{{"arch", "ipu2"}, {"overrides", nlohmann::json::object()}}));
}

TEST(TargetJson, AcceptsStringValuesAndRejectsBadDocuments) {
  const Target t = Target::fromJson({{"arch", "ipu2"}, {"overrides", {{"tile.tilesPerIpu", "4"}}}});
  EXPECT_EQ(t.tile.tilesPerIpu, 4u);
  EXPECT_NE(errorOf([] { Target::fromJson({{"arch", "ipu2"}, {"override", {}}}); }).find("'override'"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::fromJson({{"overrides", {}}}); }).find("target.arch"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::fromJson({{"arch", "ipu2"}, {"overrides", {{"clockHz", true}}}}); })
                .find("target.overrides.clockHz"),
            std::string::npos);
  EXPECT_NE(errorOf([] { Target::fromJson({{"arch", "ipu2"}, {"overrides", {{"tile.tiles", 4}}}}); })
                .find("'tile.tilesPerIpu'"),
            std::string::npos);
}

TEST(TargetParams, ListCoversEveryFieldOnceWithOneLineSourcedDescriptions) {
  Target t = Target::preset("ipu2");
  const auto rows = listParams(t);
  // Every numeric field of Target is listed: 1 clock + 7 tile + 4 exchange + 2 sync + 6 ipuLink + 6 gwLink
  // + 2 hostLink + 3 streamingMemory.
  ASSERT_EQ(rows.size(), 31u);
  std::set<std::string> names;
  for (const auto& row : rows) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_FALSE(row.unit.empty()) << row.name;
    EXPECT_FALSE(row.component.empty()) << row.name;
    EXPECT_EQ(row.description.find('\n'), std::string::npos) << row.name;
    EXPECT_LE(row.description.size(), 120u) << row.name;
    // Each description names a source or says it is an estimate.
    const bool sourced = row.description.find("estimate") != std::string::npos ||
                         row.description.find('(') != std::string::npos;
    EXPECT_TRUE(sourced) << row.name << ": " << row.description;
    // Every listed name is settable with its listed value, which round-trips.
    Target copy = t;
    EXPECT_NO_THROW(copy.set(row.name, row.value)) << row.name;
    EXPECT_EQ(copy.toJson(), t.toJson()) << row.name;
  }
  // Changing each field through set() shows up in the listing: the table's accessors are all distinct.
  for (const auto& row : rows) {
    Target changed = t;
    changed.set(row.name, "3");
    const auto after = listParams(changed);
    int differing = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) differing += after[i].value != rows[i].value;
    EXPECT_EQ(differing, row.value == "3" ? 0 : 1) << row.name;
  }
  EXPECT_EQ(rows[0].value, "1.33e+09");
}

}  // namespace test_target
