// ipusim export to .pftrace: the protobuf decoded back by a small wire-format
// reader written here (independent of the encoder), and compared with the
// profile's slices and the Chrome export's times.
#include "profiler/analysis/chrome_trace.hpp"
#include "profiler/analysis/chrome_trace_time.hpp"
#include "profiler/analysis/perfetto_trace.hpp"
#include "profiler/analysis/protobuf_wire.hpp"
#include "tests/profiler/test_analysis_profile.hpp"
#include "traces/profile_reader.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace test_analysis_perfetto_trace {

using namespace ipusim;
using namespace ipusim::profiler::analysis;

namespace {

// A decoded field: its number, and its varint, fixed64 or bytes.
struct Field {
  std::uint32_t number = 0;
  std::uint64_t value = 0;
  std::string bytes;
};

std::vector<Field> decode(const std::string& data) {
  std::vector<Field> fields;
  std::size_t at = 0;
  auto varint = [&] {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= data.size() || shift > 63) throw std::runtime_error("truncated varint");
      const auto byte = static_cast<unsigned char>(data[at++]);
      v |= std::uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
  };
  while (at < data.size()) {
    const std::uint64_t key = varint();
    Field f;
    f.number = std::uint32_t(key >> 3);
    switch (key & 7) {
      case 0: f.value = varint(); break;
      case 1:
        if (at + 8 > data.size()) throw std::runtime_error("truncated fixed64");
        for (int i = 0; i < 8; ++i) f.value |= std::uint64_t(static_cast<unsigned char>(data[at + i])) << (8 * i);
        at += 8;
        break;
      case 2: {
        const std::uint64_t n = varint();
        if (at + n > data.size()) throw std::runtime_error("truncated bytes");
        f.bytes = data.substr(at, n);
        at += n;
        break;
      }
      default: throw std::runtime_error("unexpected wire type " + std::to_string(key & 7));
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

const Field* find(const std::vector<Field>& fields, std::uint32_t number) {
  for (const auto& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

struct DecodedSlice {
  std::uint64_t track;
  std::string name;
  std::int64_t begin, end;
  std::map<std::string, std::int64_t> ints;
};

struct Decoded {
  std::map<std::uint64_t, std::string> trackNames;
  std::vector<DecodedSlice> slices;   // closed slices and instants (end == begin)
  std::vector<std::pair<std::int64_t, double>> counter;
  int unbalanced = 0;
};

Decoded decodeTrace(const std::string& bytes) {
  Decoded d;
  std::map<std::uint64_t, std::vector<DecodedSlice>> open;
  for (const auto& packetField : decode(bytes)) {
    EXPECT_EQ(packetField.number, 1u);  // Trace.packet
    const auto packet = decode(packetField.bytes);
    if (const Field* descriptor = find(packet, 60)) {
      const auto fields = decode(descriptor->bytes);
      if (const Field* name = find(fields, 2)) d.trackNames[find(fields, 1)->value] = name->bytes;
      continue;
    }
    const Field* trackEvent = find(packet, 11);
    if (!trackEvent) continue;
    const auto ts = static_cast<std::int64_t>(find(packet, 8)->value);
    const auto ev = decode(trackEvent->bytes);
    const std::uint64_t type = find(ev, 9)->value, track = find(ev, 11)->value;
    if (type == 4) {
      double value;
      const std::uint64_t bits = find(ev, 44)->value;
      std::memcpy(&value, &bits, sizeof value);
      d.counter.push_back({ts, value});
      continue;
    }
    if (type == 2) {
      if (open[track].empty()) { ++d.unbalanced; continue; }
      DecodedSlice s = open[track].back();
      open[track].pop_back();
      s.end = ts;
      d.slices.push_back(s);
      continue;
    }
    DecodedSlice s{track, find(ev, 23)->bytes, ts, ts, {}};
    for (const auto& f : ev)
      if (f.number == 4) {
        const auto a = decode(f.bytes);
        if (const Field* v = find(a, 4)) s.ints[find(a, 10)->bytes] = static_cast<std::int64_t>(v->value);
      }
    if (type == 1) open[track].push_back(s); else d.slices.push_back(s);
  }
  for (const auto& [track, stack] : open) d.unbalanced += static_cast<int>(stack.size());
  return d;
}

std::string exportPerfetto(const std::string& path, PerfettoTraceStats* stats = nullptr) {
  const traces::ProfileReader reader(path);
  std::ostringstream out;
  const auto s = writePerfettoTrace(reader, out);
  if (stats) *stats = s;
  return out.str();
}

}  // namespace

TEST(ProtobufWire, VarintsFixedAndLengthDelimitedAreTheWireFormat) {
  EXPECT_EQ(ProtoMessage().varint(1, 150).data(), std::string("\x08\x96\x01", 3));  // the protobuf docs' example
  EXPECT_EQ(ProtoMessage().bytes(2, "testing").data(), std::string("\x12\x07testing", 9));
  EXPECT_EQ(ProtoMessage().int64(4, -1).data().size(), 11u);  // key + 10-byte varint
  const auto fields = decode(ProtoMessage().float64(44, 2.5).varint(60, 1ULL << 63).data());
  ASSERT_EQ(fields.size(), 2u);
  double value;
  std::memcpy(&value, &fields[0].value, sizeof value);
  EXPECT_EQ(value, 2.5);
  EXPECT_EQ(fields[1].number, 60u);
  EXPECT_EQ(fields[1].value, 1ULL << 63);
}

// The same slices as the profile, at the export's nanoseconds, with the exact
// cycles in debug annotations; begin/end balanced on every track.
TEST(AnalysisPerfettoTrace, CarriesEverySliceWithExactCyclesAndTheRulesNanoseconds) {
  const std::string path = testing_profiles::temporaryPath("perfetto.pop");
  testing_profiles::writeKnownProfile(path, 1.33e9);
  PerfettoTraceStats stats;
  const Decoded d = decodeTrace(exportPerfetto(path, &stats));
  EXPECT_EQ(d.unbalanced, 0);
  const traces::ProfileReader reader(path);
  EXPECT_EQ(static_cast<std::int64_t>(d.slices.size()), reader.sliceCount());
  EXPECT_EQ(stats.slices + stats.instants, reader.sliceCount());
  std::multiset<std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t>> want, got;
  for (const auto& t : reader.tracks())
    reader.forEachSlice(t.id, [&](const traces::SliceRow& s) {
      want.insert({t.name, s.name, cyclesToNanoseconds(s.ts, 1.33e9), cyclesToNanoseconds(s.ts + s.dur, 1.33e9), s.ts, s.dur});
    });
  for (const auto& s : d.slices)
    got.insert({d.trackNames.at(s.track), s.name, s.begin, s.end, s.ints.at("ts_cycles"), s.ints.at("dur_cycles")});
  EXPECT_EQ(got, want);
  // Counters: the loss, at its samples' nanoseconds.
  ASSERT_EQ(d.counter.size(), 4u);
  EXPECT_EQ(d.counter[0], (std::pair<std::int64_t, double>{cyclesToNanoseconds(100, 1.33e9), 2.5}));
}

// The Chrome JSON and the Perfetto trace show the same slices: names,
// threads and cycles (read back from the JSON's times).
TEST(AnalysisPerfettoTrace, ShowsTheSameSlicesAsTheChromeExport) {
  const std::string path = testing_profiles::temporaryPath("both.pop");
  testing_profiles::writeKnownProfile(path, 1.33e9);
  const Decoded d = decodeTrace(exportPerfetto(path));
  std::ostringstream json;
  writeChromeTrace(traces::ProfileReader(path), json);
  const auto trace = nlohmann::json::parse(json.str());
  std::map<std::int64_t, std::string> threadNames;
  for (const auto& ev : trace["traceEvents"])
    if (ev["ph"] == "M" && ev["name"] == "thread_name") threadNames[ev["tid"]] = ev["args"]["name"];
  auto cycles = [](double micros) { return std::llround(micros * 1.33e9 / 1e6); };
  std::multiset<std::tuple<std::string, std::string, std::int64_t, std::int64_t>> fromJson, fromPerfetto;
  for (const auto& ev : trace["traceEvents"]) {
    if (ev["ph"] != "X" && ev["ph"] != "I") continue;
    const std::int64_t dur = ev["ph"] == "X" ? cycles(ev["dur"].get<double>()) : 0;
    fromJson.insert({threadNames.at(ev["tid"]), ev["name"], cycles(ev["ts"].get<double>() - 1.0), dur});
  }
  for (const auto& s : d.slices)
    fromPerfetto.insert({d.trackNames.at(s.track), s.name, s.ints.at("ts_cycles"), s.ints.at("dur_cycles")});
  EXPECT_EQ(fromPerfetto, fromJson);
  EXPECT_EQ(fromJson.size(), 25u);
}

TEST(AnalysisPerfettoTrace, ASliceOfZeroCyclesIsAnInstant) {
  const std::string path = testing_profiles::temporaryPath("instant.pop");
  testing_profiles::writeShortSlicesProfile(path);  // Begin of 0 cycles, End of 1
  PerfettoTraceStats stats;
  const Decoded d = decodeTrace(exportPerfetto(path, &stats));
  EXPECT_EQ(stats.slices, 3);
  EXPECT_EQ(stats.instants, 1);
  EXPECT_EQ(d.unbalanced, 0);
  for (const auto& s : d.slices)
    if (s.name == "End") {
      EXPECT_EQ(s.ints.at("dur_cycles"), 1);
      EXPECT_EQ(s.end - s.begin, cyclesToNanoseconds(103, 1.33e9) - cyclesToNanoseconds(102, 1.33e9));
    }
}

}  // namespace test_analysis_perfetto_trace
