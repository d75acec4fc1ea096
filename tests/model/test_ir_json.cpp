// JSON form of the executable: round trip, strict reading, files.
#include "tests/test_build.hpp"
#include "model/ir/types.hpp"
#include "test_ir_graphs.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace test_ir_json {

using namespace ipusim::ir;
using namespace ipusim::ir::testing;
using nlohmann::json;

namespace {

std::string tempPath(const std::string& name) {
  return std::string(ipusim::test::binaryDir()) + "/test_ir_json_" + name;
}

}  // namespace

TEST(IrJson, RoundTripOfABuilderMadeExecutableIsExact) {
  const Executable exe = everyKindGraph();
  const json j = toJson(exe);
  const Executable back = fromJson(j);
  EXPECT_EQ(toJson(back), j);
  EXPECT_NO_THROW(back.validate(4));
  // Spot checks that the data, not just the shape, survived.
  EXPECT_EQ(back.tensors[1].initialValue[11], 1.0 / 3);
  EXPECT_EQ(back.tensors[1].debug.layer, "dense_1");
  EXPECT_FALSE(back.tensors[2].alwaysLive);
  EXPECT_EQ(back.tensors[5].mapping[1].address, exe.tensors[5].mapping[1].address);
  EXPECT_EQ(back.computeSets[0].vertices[0].params.at("scale"), 0.1);
  EXPECT_EQ(back.streams[0].bufferDepth, 4u);
  EXPECT_EQ(back.streams[1].direction, StreamDirection::DeviceToHost);
  EXPECT_EQ(back.programs[7].syncType, SyncType::External);
  EXPECT_EQ(back.programs[6].count, 10u);
  EXPECT_EQ(back.options["debug.instrument"], "true");
  EXPECT_EQ(back.target["arch"], "ipu2");
}

TEST(IrJson, AnExecutesRenamesRoundTripAndAreReadAsPairs) {
  Executable exe = everyKindGraph();
  exe.programs[3].renames = {{1, 2}, {2, 3}};
  const json j = toJson(exe);
  EXPECT_EQ(j["programs"][3]["renames"], json::parse("[[1, 2], [2, 3]]"));
  EXPECT_EQ(fromJson(j).programs[3].renames, exe.programs[3].renames);
  json bad = j;
  bad["programs"][3]["renames"][1] = {2};
  const std::string message = errorOf([&] { fromJson(bad); });
  EXPECT_NE(message.find("programs[3].renames[1]: expected [from, to] (two tensor ids), got 1 items"),
            std::string::npos)
      << message;
}

TEST(IrJson, ACopyOfAnotherCopysRegionsRoundTripsWithItsRenames) {
  Executable exe = everyKindGraph();
  Program p;
  p.kind = ProgramKind::Copy;
  p.name = "again";
  p.copyOf = 1;
  p.renames = {{3, 2}};
  exe.addProgram(p);
  const json j = toJson(exe);
  EXPECT_EQ(j["programs"].back()["copyOf"], 1);
  EXPECT_FALSE(j["programs"].back().contains("src"));
  const Executable back = fromJson(j);
  EXPECT_EQ(back.programs.back().copyOf, 1u);
  EXPECT_EQ(back.programs.back().renames, p.renames);
  json both = j;
  both["programs"].back()["src"] = j["programs"][1]["src"];
  EXPECT_NE(errorOf([&] { fromJson(both); }).find("has both \"copyOf\" and its own regions"), std::string::npos);
  json orphan = j;
  orphan["programs"][1]["renames"] = json::parse("[[3, 2]]");
  EXPECT_NE(errorOf([&] { fromJson(orphan); }).find("has \"renames\" but no \"copyOf\""), std::string::npos);
}

TEST(IrJson, HalfTensorsRoundTripWithTheirValuesAndTwoBytesPerElement) {
  Executable exe = everyKindGraph();
  Tensor h;
  h.id = Id(exe.tensors.size());
  h.name = "h";
  h.shape = {3};
  h.dtype = DType::Half;
  h.mapping = {{0, 0, 3, 1024}};
  h.initialValue = {0.5, -2.0, 65504.0};
  exe.tensors.push_back(h);
  const json j = toJson(exe);
  EXPECT_EQ(j["tensors"].back()["dtype"], "half");
  const Executable back = fromJson(j);
  EXPECT_EQ(back.tensors.back().dtype, DType::Half);
  EXPECT_EQ(back.tensors.back().numBytes(), 6u);
  EXPECT_EQ(back.tensors.back().initialValue, h.initialValue);
  EXPECT_EQ(toJson(back), j);
}

// Weights drawn at load are stored as their seed and limit, and every reader
// draws the same values (ir::drawnValues is the one definition).
TEST(IrJson, DrawnInitialValuesRoundTripAsSeedAndLimit) {
  Executable exe = everyKindGraph();
  Tensor k;
  k.id = Id(exe.tensors.size());
  k.name = "kernel";
  k.shape = {4, 8};
  k.mapping = {{0, 0, 32, 2048}};
  k.drawnInit = DrawnInit{42, 0.25};
  exe.tensors.push_back(k);
  const json j = toJson(exe);
  EXPECT_EQ(j["tensors"].back()["initialUniform"]["seed"], 42);
  EXPECT_FALSE(j["tensors"].back().contains("initialValue"));
  const Executable back = fromJson(j);
  ASSERT_TRUE(back.tensors.back().drawnInit.has_value());
  EXPECT_EQ(*back.tensors.back().drawnInit, *k.drawnInit);
  const std::vector<double> v = initialValues(back.tensors.back());
  ASSERT_EQ(v.size(), 32u);
  EXPECT_EQ(v, drawnValues({42, 0.25}, 32));
  for (double x : v) EXPECT_LE(std::fabs(x), 0.25);
  EXPECT_NE(v, drawnValues({43, 0.25}, 32));
  k.initialValue = std::vector<double>(32, 0.0);
  exe.tensors.back() = k;
  EXPECT_THROW(exe.validate(1), std::invalid_argument);  // both forms at once
}

TEST(IrJson, ErrorsNameTheKeyPathAndTheExpectedType) {
  const json good = toJson(everyKindGraph());
  struct Case {
    std::function<void(json&)> damage;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["computeSets"][0]["vertices"][0]["tile"] = "one"; },
       "computeSets[0].vertices[0].tile: expected an unsigned integer, got string"},
      {[](json& j) { j["computeSets"][0]["vertices"][0]["tile"] = -1; },
       "computeSets[0].vertices[0].tile: expected an unsigned integer, got -1"},
      {[](json& j) { j["tensors"][1]["mapping"][0]["tiel"] = 0; },
       "tensors[1].mapping[0].tiel: unknown key (did you mean 'tile'?)"},
      {[](json& j) { j["tensors"][0].erase("dtype"); }, "tensors[0].dtype: missing (expected float, half, int, uint or bool)"},
      {[](json& j) { j["tensors"][0]["dtype"] = "double"; }, "tensors[0].dtype: unknown dtype 'double'"},
      {[](json& j) { j["tensors"][0]["id"] = 3; }, "tensors[0].id: expected 0 (its index), got 3"},
      {[](json& j) { j["programs"][0]["kind"] = "Loop"; }, "programs[0].kind: unknown program kind 'Loop'"},
      {[](json& j) { j["programs"][6]["computeSet"] = 0; }, "programs[6].computeSet: unknown key"},
      {[](json& j) { j["programs"][7]["syncType"] = "global"; },
       "programs[7].syncType: expected internal or external, got 'global'"},
      {[](json& j) { j["streams"][0]["direction"] = "Up"; }, "streams[0].direction: expected HostToDevice or DeviceToHost"},
      {[](json& j) { j["tensors"] = json::object(); }, "tensors: expected an array, got object"},
      {[](json& j) { j["extra"] = 1; }, "extra: unknown key"},
      {[](json& j) { j["version"] = 2; }, "version: this ipusim reads version 1, got 2"},
      {[](json& j) { j["computeSets"][0]["vertices"][0]["params"]["m"] = "2"; },
       "computeSets[0].vertices[0].params.m: expected a number, got string"},
  };
  for (const auto& c : cases) {
    json damaged = good;
    c.damage(damaged);
    const std::string message = errorOf([&] { fromJson(damaged); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << "got: " << message << "\nexpected: " << c.expected;
  }
}

TEST(IrJson, SaveAndLoadAFile) {
  const Executable exe = everyKindGraph();
  const std::string path = tempPath("roundtrip.json");
  saveExecutable(exe, path);
  EXPECT_EQ(toJson(loadExecutable(path)), toJson(exe));
  std::remove(path.c_str());
}

TEST(IrJson, LoadErrorsNameTheFile) {
  const std::string missing = tempPath("missing.json");
  std::remove(missing.c_str());
  EXPECT_NE(errorOf([&] { loadExecutable(missing); }).find(missing + ": cannot open serialized graph"), std::string::npos);

  const std::string malformed = tempPath("malformed.json");
  std::ofstream(malformed) << "{\"name\": \"x\",\n \"tensors\": [}";
  const std::string message = errorOf([&] { loadExecutable(malformed); });
  EXPECT_NE(message.find("executable '" + malformed + "' is not valid JSON at byte 28"), std::string::npos) << message;
  std::remove(malformed.c_str());

  const std::string wrong = tempPath("wrong.json");
  std::ofstream(wrong) << R"({"tensors": [{"id": 0}]})";
  const std::string wrongMessage = errorOf([&] { loadExecutable(wrong); });
  EXPECT_NE(wrongMessage.find("executable '" + wrong + "': tensors[0].name: missing"), std::string::npos) << wrongMessage;
  std::remove(wrong.c_str());

  EXPECT_NE(errorOf([&] { saveExecutable(everyKindGraph(), tempPath("no/such/dir.json")); }).find("cannot write executable"),
            std::string::npos);
}

TEST(IrJson, NamesOfEnumsRoundTrip) {
  for (DType t : {DType::Float, DType::Int, DType::UInt, DType::Bool, DType::Half})
    EXPECT_EQ(dtypeFromString(toString(t)), t);
  EXPECT_EQ(sizeOf(DType::Float), 4u);
  EXPECT_EQ(sizeOf(DType::Bool), 1u);
  EXPECT_EQ(sizeOf(DType::Half), 2u);
  EXPECT_STREQ(toString(DType::Half), "half");
  for (int k = 0; k <= int(ProgramKind::Call); ++k)
    EXPECT_EQ(programKindFromString(toString(ProgramKind(k))), ProgramKind(k));
  EXPECT_STREQ(toString(SyncType::External), "external");
  EXPECT_THROW(dtypeFromString("double"), std::invalid_argument);
}

// The written file is toJson's document, element by element (no copy of the whole in memory).
TEST(IrJson, TheStreamedTextIsToJsonsDocument) {
  const Executable exe = everyKindGraph();
  std::ostringstream out;
  writeJson(exe, out);
  EXPECT_EQ(json::parse(out.str()), toJson(exe));
  EXPECT_GE(out.str().size(), jsonBytesLowerBound(exe));
}

// The message of the std::length_error thrown by f.
template <class F>
std::string lengthErrorOf(F f) {
  try {
    f();
  } catch (const std::length_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::length_error";
  return "";
}

// Over the bound: refused before a byte is written when the executable's counts
// already pass it, else when the bytes written do; never a file run --graph cannot read.
TEST(IrJson, ASerializedGraphOverItsBoundIsRefused) {
  const Executable exe = everyKindGraph();
  std::ostringstream before;
  const std::string early = lengthErrorOf([&] { writeJson(exe, before, jsonBytesLowerBound(exe) - 1); });
  EXPECT_NE(early.find("would take at least " + std::to_string(jsonBytesLowerBound(exe)) + " bytes"), std::string::npos)
      << early;
  EXPECT_TRUE(before.str().empty());
  std::ostringstream whole;
  writeJson(exe, whole);
  std::ostringstream during;
  const std::string late = lengthErrorOf([&] { writeJson(exe, during, whole.str().size() - 2); });
  EXPECT_NE(late.find("takes more than " + std::to_string(whole.str().size() - 2) + " bytes"), std::string::npos) << late;
  EXPECT_LE(during.str().size(), whole.str().size() - 2);
  EXPECT_EQ(kMaxExecutableFileBytes, 1ull << 30);
}

// Streaming Memory: a remote buffer and the copies to and from it round-trip,
// are read strictly and validated against the tensor they fill.
TEST(IrJson, RemoteBuffersAndRemoteCopiesRoundTripAndAreChecked) {
  Executable exe = everyKindGraph();
  RemoteBuffer buffer;
  buffer.id = 0;
  buffer.name = "w1/m";
  buffer.elements = exe.tensors[1].numElements();
  buffer.initialValue.assign(buffer.elements, 0.1);
  exe.remoteBuffers.push_back(buffer);
  for (bool store : {false, true}) {
    Program p;
    p.kind = ProgramKind::RemoteCopy;
    p.name = store ? "store" : "load";
    p.remoteBuffer = 0;
    p.remoteStore = store;
    p.tensor = {1, 0, buffer.elements};
    exe.addProgram(p);
  }
  const json j = toJson(exe);
  EXPECT_EQ(j["programs"].back()["direction"], "store");
  const Executable back = fromJson(j);
  EXPECT_EQ(toJson(back), j);
  EXPECT_NO_THROW(back.validate(4));
  EXPECT_EQ(back.remoteBuffers.at(0).initialValue, buffer.initialValue);
  EXPECT_TRUE(back.programs.back().remoteStore);

  json damaged = j;
  damaged["programs"].back()["direction"] = "sideways";
  EXPECT_NE(errorOf([&] { fromJson(damaged); }).find("direction: expected load or store, got 'sideways'"),
            std::string::npos);
  Executable wrong = back;
  wrong.programs.back().tensor.end -= 1;
  EXPECT_NE(errorOf([&] { wrong.validate(4); }).find("but remote buffer 'w1/m' holds"), std::string::npos);
  wrong = back;
  wrong.programs.back().remoteBuffer = 3;
  EXPECT_NE(errorOf([&] { wrong.validate(4); }).find("remoteBuffer 3 is out of range"), std::string::npos);
}

// Found by the eleventh adversarial pass of issue 33: a remote buffer's
// bytes (elements x the dtype's size) wrapped, so a graph's buffer of 2^62
// floats that no copy reads counted as 0 bytes of Streaming Memory and was
// accepted; and two buffers could share a name (two streams cannot).
TEST(IrJson, ARemoteBufferOfMoreBytesThan64BitsCountOrANameUsedTwiceIsRefused) {
  Executable exe = everyKindGraph();
  RemoteBuffer huge;
  huge.id = 0;
  huge.name = "huge";
  huge.elements = 1ull << 62;
  exe.remoteBuffers.push_back(huge);
  EXPECT_NE(errorOf([&] { exe.validate(4); })
                .find("remoteBuffers[0] 'huge': elements 4611686018427387904 of float are more bytes than 64 bits "
                      "count: expected at most 4611686018427387903"),
            std::string::npos)
      << errorOf([&] { exe.validate(4); });
  // The most that 64 bits count passes this check; a buffer that no copy
  // uses is refused for that (the next test), a used one holds a tensor
  // region (the device's capacity is the load's check).
  exe.remoteBuffers[0].elements = (1ull << 62) - 1;
  EXPECT_EQ(errorOf([&] { exe.validate(4); }).find("more bytes than 64 bits count"), std::string::npos);
  exe.remoteBuffers[0].elements = 8;
  RemoteBuffer twin = exe.remoteBuffers[0];
  twin.id = 1;
  exe.remoteBuffers.push_back(twin);
  EXPECT_NE(errorOf([&] { exe.validate(4); }).find("remoteBuffers[1] 'huge': name is already used by remoteBuffers[0]"),
            std::string::npos)
      << errorOf([&] { exe.validate(4); });
}

// Found by the twelfth adversarial pass of issue 33: a remote buffer that no
// RemoteCopy uses was accepted, and a functional load backed it with host
// memory: a 224 KB graph holding one of 2^34 floats, under an ipu2's
// Streaming Memory, took 64 GiB (one of 2^61, with streamingMemory.bytesPerIpu
// set high, ended as a bare "cannot create std::vector larger than max_size()").
TEST(IrJson, ARemoteBufferThatNoCopyUsesIsRefused) {
  Executable exe = everyKindGraph();
  RemoteBuffer unused;
  unused.id = 0;
  unused.name = "unused";
  unused.elements = 1ull << 34;
  exe.remoteBuffers.push_back(unused);
  EXPECT_NE(errorOf([&] { exe.validate(4); })
                .find("remoteBuffers[0] 'unused': no RemoteCopy program loads or stores it: expected every remote "
                      "buffer to be copied to or from a tensor"),
            std::string::npos)
      << errorOf([&] { exe.validate(4); });
}

}  // namespace test_ir_json
