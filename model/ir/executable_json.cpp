// JSON form of the executable (serialized_graph.json). Every element is an
// object with named keys; optional keys are written only when they differ
// from their default, and a program carries only the keys of its kind.
#include "model/ir/executable.hpp"
#include "model/ir/json_reader.hpp"

#include <stdexcept>

namespace ipusim::ir {
namespace {

using nlohmann::json;
using namespace json_reader;

constexpr const char* kFormat = "ipusim-executable";
constexpr std::uint64_t kVersion = 1;

const char* toString(StreamDirection d) { return d == StreamDirection::HostToDevice ? "HostToDevice" : "DeviceToHost"; }

// ---------------------------------------------------------------- writing

json refJson(const TensorRef& r) { return {{"tensor", r.tensor}, {"begin", r.begin}, {"end", r.end}}; }

void putDebug(json& j, const DebugInfo& d) {
  if (!d.layer.empty() || !d.op.empty()) j["debug"] = {{"layer", d.layer}, {"op", d.op}};
}

json tensorJson(const Tensor& t) {
  json mapping = json::array();
  for (const auto& iv : t.mapping) {
    json m = {{"tile", iv.tile}, {"begin", iv.begin}, {"end", iv.end}};
    if (iv.address != TileInterval::kUnplaced) m["address"] = iv.address;
    mapping.push_back(std::move(m));
  }
  json j = {{"id", t.id}, {"name", t.name}, {"shape", t.shape}, {"dtype", toString(t.dtype)},
            {"category", t.category}, {"alwaysLive", t.alwaysLive}, {"mapping", std::move(mapping)}};
  if (!t.initialValue.empty()) j["initialValue"] = t.initialValue;
  if (t.drawnInit) {
    const DrawnInit& d = *t.drawnInit;
    if (d.distribution == DrawnInit::Distribution::Uniform) {
      j["initialUniform"] = {{"seed", d.seed}, {"limit", d.limit}};
      if (d.center != 0) j["initialUniform"]["center"] = d.center;
    } else if (d.distribution == DrawnInit::Distribution::Orthogonal) {
      j["initialOrthogonal"] = {{"seed", d.seed}, {"gain", d.gain}, {"rows", d.rows}, {"cols", d.cols}};
    } else if (d.distribution == DrawnInit::Distribution::Identity) {
      j["initialIdentity"] = {{"gain", d.gain}, {"rows", d.rows}, {"cols", d.cols}};
    } else {
      j["initialNormal"] = {{"seed", d.seed}, {"mean", d.center}, {"stddev", d.stddev},
                            {"truncated", d.distribution == DrawnInit::Distribution::TruncatedNormal}};
    }
  }
  putDebug(j, t.debug);
  return j;
}

json computeSetJson(const ComputeSet& cs) {
  json vertices = json::array();
  for (const auto& v : cs.vertices) {
    json fields = json::array();
    for (const auto& f : v.fields)
      fields.push_back({{"name", f.name.str()}, {"tensor", f.ref.tensor}, {"begin", f.ref.begin}, {"end", f.ref.end}});
    json vj = {{"codelet", v.codelet.str()}, {"tile", v.tile}, {"fields", std::move(fields)}};
    if (!v.params.empty()) {
      json params = json::object();
      for (const auto& [name, value] : v.params) params[name.str()] = value;
      vj["params"] = std::move(params);
    }
    vertices.push_back(std::move(vj));
  }
  json j = {{"id", cs.id}, {"name", cs.name}, {"vertices", std::move(vertices)}};
  if (cs.independentPerIpu) j["independentPerIpu"] = true;
  putDebug(j, cs.debug);
  return j;
}

json streamJson(const Stream& s) {
  json j = {{"id", s.id}, {"name", s.name}, {"direction", toString(s.direction)}, {"dtype", toString(s.dtype)},
            {"elementsPerCopy", s.elementsPerCopy}, {"bufferDepth", s.bufferDepth}};
  putDebug(j, s.debug);
  return j;
}

json remoteBufferJson(const RemoteBuffer& b) {
  json j = {{"id", b.id}, {"name", b.name}, {"dtype", toString(b.dtype)}, {"elements", b.elements}};
  if (!b.initialValue.empty()) j["initialValue"] = b.initialValue;
  putDebug(j, b.debug);
  return j;
}

void putRenames(json& j, const Program& p) {
  if (p.renames.empty()) return;
  json renames = json::array();
  for (const TensorRename& r : p.renames) renames.push_back({r.from, r.to});
  j["renames"] = std::move(renames);
}

json programJson(const Program& p) {
  json j = {{"id", p.id}, {"kind", toString(p.kind)}, {"name", p.name}};
  if (!p.children.empty()) j["children"] = p.children;
  switch (p.kind) {
    case ProgramKind::Execute:
      j["computeSet"] = p.computeSet;
      putRenames(j, p);
      break;
    case ProgramKind::Copy:
      if (p.copyOf != kNoId) {
        j["copyOf"] = p.copyOf;
        putRenames(j, p);
      } else if (p.regions.empty()) {
        j["src"] = refJson(p.src);
        j["dst"] = refJson(p.dst);
      } else {
        json regions = json::array();
        for (const CopyRegion& r : p.regions) {
          json region = {{"src", refJson(r.src)}, {"dst", refJson(r.dst)}};
          if (r.rows > 1) region["rows"] = r.rows, region["srcStride"] = r.srcStride, region["dstStride"] = r.dstStride;
          regions.push_back(std::move(region));
        }
        j["regions"] = std::move(regions);
      }
      break;
    case ProgramKind::StreamCopy: j["stream"] = p.stream; j["tensor"] = refJson(p.tensor); break;
    case ProgramKind::Repeat: j["count"] = p.count; break;
    case ProgramKind::RepeatWhileTrue:
    case ProgramKind::If: j["condition"] = refJson(p.condition); break;
    case ProgramKind::Sync: j["syncType"] = toString(p.syncType); break;
    case ProgramKind::Call: j["callee"] = p.callee; break;
    case ProgramKind::RemoteCopy:
      j["remoteBuffer"] = p.remoteBuffer;
      j["tensor"] = refJson(p.tensor);
      j["direction"] = p.remoteStore ? "store" : "load";
      break;
    case ProgramKind::Sequence: break;
  }
  if (p.marksStep) j["marksStep"] = true;
  if (p.collective) j["collective"] = true;
  if (p.ipusApart) j["ipusApart"] = true;
  putDebug(j, p.debug);
  return j;
}

// ---------------------------------------------------------------- reading

DebugInfo readDebug(const json& obj, const std::string& path) {
  DebugInfo d;
  if (const json* j = optional(obj, "debug")) {
    const std::string p = child(path, "debug");
    expectObject(*j, p, {"layer", "op"});
    if (const json* v = optional(*j, "layer")) d.layer = asString(*v, child(p, "layer"));
    if (const json* v = optional(*j, "op")) d.op = asString(*v, child(p, "op"));
  }
  return d;
}

DType readDType(const json& j, const std::string& path) {
  const std::string name = asString(j, path);
  try {
    return dtypeFromString(name);
  } catch (const std::invalid_argument& e) {
    fail(path, e.what());
  }
}

TensorRef readRef(const json& j, const std::string& path) {
  expectObject(j, path, {"tensor", "begin", "end"});
  TensorRef r;
  r.tensor = asU32(required(j, path, "tensor", "a tensor id"), child(path, "tensor"));
  r.begin = asU64(required(j, path, "begin", "an element index"), child(path, "begin"));
  r.end = asU64(required(j, path, "end", "an element index"), child(path, "end"));
  return r;
}

Id readId(const json& obj, const std::string& path, std::size_t index) {
  const Id id = asU32(required(obj, path, "id", "an unsigned integer"), child(path, "id"));
  if (id != index) fail(child(path, "id"), "expected " + std::to_string(index) + " (its index), got " + std::to_string(id));
  return id;
}

Tensor readTensor(const json& j, const std::string& path, std::size_t index) {
  expectObject(j, path, {"id", "name", "shape", "dtype", "category", "alwaysLive", "mapping", "initialValue",
                         "initialUniform", "initialNormal", "initialOrthogonal", "initialIdentity", "debug"});
  Tensor t;
  t.id = readId(j, path, index);
  t.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  const std::string shapePath = child(path, "shape");
  const json& shape = expectArray(required(j, path, "shape", "an array of dimensions"), shapePath);
  for (std::size_t i = 0; i < shape.size(); ++i) t.shape.push_back(asU64(shape[i], item(shapePath, i)));
  t.dtype = readDType(required(j, path, "dtype", "float, half, int, uint or bool"), child(path, "dtype"));
  if (const json* v = optional(j, "category")) t.category = asString(*v, child(path, "category"));
  if (const json* v = optional(j, "alwaysLive")) t.alwaysLive = asBool(*v, child(path, "alwaysLive"));
  const std::string mapPath = child(path, "mapping");
  const json& mapping = expectArray(required(j, path, "mapping", "an array of tile intervals"), mapPath);
  for (std::size_t i = 0; i < mapping.size(); ++i) {
    const std::string p = item(mapPath, i);
    expectObject(mapping[i], p, {"tile", "begin", "end", "address"});
    TileInterval iv;
    iv.tile = asU32(required(mapping[i], p, "tile", "a tile index"), child(p, "tile"));
    iv.begin = asU64(required(mapping[i], p, "begin", "an element index"), child(p, "begin"));
    iv.end = asU64(required(mapping[i], p, "end", "an element index"), child(p, "end"));
    if (const json* v = optional(mapping[i], "address")) iv.address = asU64(*v, child(p, "address"));
    t.mapping.push_back(iv);
  }
  if (const json* v = optional(j, "initialValue")) {
    const std::string p = child(path, "initialValue");
    expectArray(*v, p);
    t.initialValue.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) t.initialValue.push_back(asDouble((*v)[i], item(p, i)));
  }
  // At most one of the drawn forms.
  const char* drawnKey = nullptr;
  for (const char* key : {"initialUniform", "initialNormal", "initialOrthogonal", "initialIdentity"}) {
    if (!optional(j, key)) continue;
    if (drawnKey) fail(child(path, key), std::string("a tensor has one of initialUniform, initialNormal, initialOrthogonal "
                                                     "and initialIdentity; this one also has ") + drawnKey);
    drawnKey = key;
  }
  if (const json* v = optional(j, "initialUniform")) {
    const std::string p = child(path, "initialUniform");
    expectObject(*v, p, {"seed", "limit", "center"});
    t.drawnInit = DrawnInit{asU64(required(*v, p, "seed", "an unsigned integer"), child(p, "seed")),
                            asDouble(required(*v, p, "limit", "a number >= 0"), child(p, "limit"))};
    if (const json* c = optional(*v, "center")) t.drawnInit->center = asDouble(*c, child(p, "center"));
  }
  if (const json* v = optional(j, "initialNormal")) {
    const std::string p = child(path, "initialNormal");
    expectObject(*v, p, {"seed", "mean", "stddev", "truncated"});
    DrawnInit d;
    d.seed = asU64(required(*v, p, "seed", "an unsigned integer"), child(p, "seed"));
    d.center = asDouble(required(*v, p, "mean", "a number"), child(p, "mean"));
    d.stddev = asDouble(required(*v, p, "stddev", "a number >= 0"), child(p, "stddev"));
    const json* truncated = optional(*v, "truncated");
    const bool cut = truncated && truncated->is_boolean() && truncated->get<bool>();
    if (truncated && !truncated->is_boolean()) fail(child(p, "truncated"), "expected true or false");
    d.distribution = cut ? DrawnInit::Distribution::TruncatedNormal : DrawnInit::Distribution::Normal;
    t.drawnInit = d;
  }
  for (const char* key : {"initialOrthogonal", "initialIdentity"}) {
    const json* v = optional(j, key);
    if (!v) continue;
    const std::string p = child(path, key);
    const bool orthogonal = std::string(key) == "initialOrthogonal";
    if (orthogonal)
      expectObject(*v, p, {"seed", "gain", "rows", "cols"});
    else
      expectObject(*v, p, {"gain", "rows", "cols"});
    DrawnInit d;
    d.distribution = orthogonal ? DrawnInit::Distribution::Orthogonal : DrawnInit::Distribution::Identity;
    if (orthogonal) d.seed = asU64(required(*v, p, "seed", "an unsigned integer"), child(p, "seed"));
    d.gain = asDouble(required(*v, p, "gain", "a finite number"), child(p, "gain"));
    d.rows = asU64(required(*v, p, "rows", "a positive integer"), child(p, "rows"));
    d.cols = asU64(required(*v, p, "cols", "a positive integer"), child(p, "cols"));
    t.drawnInit = d;
  }
  t.debug = readDebug(j, path);
  return t;
}

Vertex readVertex(const json& j, const std::string& path) {
  expectObject(j, path, {"codelet", "tile", "fields", "params"});
  Vertex v;
  v.codelet = asString(required(j, path, "codelet", "a codelet name"), child(path, "codelet"));
  v.tile = asU32(required(j, path, "tile", "a tile index"), child(path, "tile"));
  const std::string fieldsPath = child(path, "fields");
  const json& fields = expectArray(required(j, path, "fields", "an array of fields"), fieldsPath);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string p = item(fieldsPath, i);
    expectObject(fields[i], p, {"name", "tensor", "begin", "end"});
    VertexField f;
    f.name = asString(required(fields[i], p, "name", "a field name"), child(p, "name"));
    f.ref.tensor = asU32(required(fields[i], p, "tensor", "a tensor id"), child(p, "tensor"));
    f.ref.begin = asU64(required(fields[i], p, "begin", "an element index"), child(p, "begin"));
    f.ref.end = asU64(required(fields[i], p, "end", "an element index"), child(p, "end"));
    v.fields.push_back(std::move(f));
  }
  if (const json* params = optional(j, "params")) {
    const std::string p = child(path, "params");
    if (!params->is_object()) fail(p, std::string("expected an object {name: number}, got ") + params->type_name());
    for (const auto& entry : params->items()) v.params[entry.key()] = asDouble(entry.value(), child(p, entry.key()));
  }
  return v;
}

ComputeSet readComputeSet(const json& j, const std::string& path, std::size_t index) {
  expectObject(j, path, {"id", "name", "vertices", "independentPerIpu", "debug"});
  ComputeSet cs;
  cs.id = readId(j, path, index);
  cs.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  const std::string vPath = child(path, "vertices");
  const json& vertices = expectArray(required(j, path, "vertices", "an array of vertices"), vPath);
  cs.vertices.reserve(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) cs.vertices.push_back(readVertex(vertices[i], item(vPath, i)));
  if (const json* v = optional(j, "independentPerIpu")) cs.independentPerIpu = asBool(*v, child(path, "independentPerIpu"));
  cs.debug = readDebug(j, path);
  return cs;
}

Stream readStream(const json& j, const std::string& path, std::size_t index) {
  expectObject(j, path, {"id", "name", "direction", "dtype", "elementsPerCopy", "bufferDepth", "debug"});
  Stream s;
  s.id = readId(j, path, index);
  s.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  const std::string dirPath = child(path, "direction");
  const std::string dir = asString(required(j, path, "direction", "HostToDevice or DeviceToHost"), dirPath);
  if (dir == "HostToDevice") s.direction = StreamDirection::HostToDevice;
  else if (dir == "DeviceToHost") s.direction = StreamDirection::DeviceToHost;
  else fail(dirPath, "expected HostToDevice or DeviceToHost, got '" + dir + "'");
  s.dtype = readDType(required(j, path, "dtype", "float, half, int, uint or bool"), child(path, "dtype"));
  s.elementsPerCopy = asU64(required(j, path, "elementsPerCopy", "an unsigned integer"), child(path, "elementsPerCopy"));
  if (const json* v = optional(j, "bufferDepth")) s.bufferDepth = asU32(*v, child(path, "bufferDepth"));
  s.debug = readDebug(j, path);
  return s;
}

void readRenames(const json& j, const std::string& path, Program& p) {
  const json* renames = optional(j, "renames");
  if (!renames) return;
  const std::string rp = child(path, "renames");
  expectArray(*renames, rp);
  for (std::size_t i = 0; i < renames->size(); ++i) {
    const std::string ip = item(rp, i);
    const json& pair = expectArray((*renames)[i], ip);
    if (pair.size() != 2)
      fail(ip, "expected [from, to] (two tensor ids), got " + std::to_string(pair.size()) + " items");
    p.renames.push_back({asU32(pair[0], item(ip, 0)), asU32(pair[1], item(ip, 1))});
  }
}

Program readProgram(const json& j, const std::string& path, std::size_t index) {
  if (!j.is_object()) fail(path, std::string("expected an object, got ") + j.type_name());
  Program p;
  const std::string kindPath = child(path, "kind");
  try {
    p.kind = programKindFromString(asString(required(j, path, "kind", "a program kind"), kindPath));
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    if (message.rfind(kindPath, 0) == 0) throw;
    fail(kindPath, message);
  }
  std::vector<std::string> keys = {"id", "kind", "name", "children", "marksStep", "collective", "ipusApart", "debug"};
  switch (p.kind) {
    case ProgramKind::Execute: keys.insert(keys.end(), {"computeSet", "renames"}); break;
    case ProgramKind::Copy: keys.insert(keys.end(), {"src", "dst", "regions", "copyOf", "renames"}); break;
    case ProgramKind::StreamCopy: keys.insert(keys.end(), {"stream", "tensor"}); break;
    case ProgramKind::Repeat: keys.push_back("count"); break;
    case ProgramKind::RepeatWhileTrue:
    case ProgramKind::If: keys.push_back("condition"); break;
    case ProgramKind::Sync: keys.push_back("syncType"); break;
    case ProgramKind::Call: keys.push_back("callee"); break;
    case ProgramKind::RemoteCopy: keys.insert(keys.end(), {"remoteBuffer", "tensor", "direction"}); break;
    case ProgramKind::Sequence: break;
  }
  expectObject(j, path, keys);
  p.id = readId(j, path, index);
  p.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  if (const json* v = optional(j, "children")) {
    const std::string c = child(path, "children");
    expectArray(*v, c);
    for (std::size_t i = 0; i < v->size(); ++i) p.children.push_back(asU32((*v)[i], item(c, i)));
  }
  switch (p.kind) {
    case ProgramKind::Execute:
      p.computeSet = asU32(required(j, path, "computeSet", "a compute set id"), child(path, "computeSet"));
      readRenames(j, path, p);
      break;
    case ProgramKind::Copy:
      // "src" and "dst" (one region, the original form), "regions", or
      // "copyOf" (another Copy's regions) with "renames".
      if (const json* copyOf = optional(j, "copyOf")) {
        if (optional(j, "regions") || optional(j, "src") || optional(j, "dst"))
          fail(path, "has both \"copyOf\" and its own regions (\"regions\" or \"src\"/\"dst\"); expected one form");
        p.copyOf = asU32(*copyOf, child(path, "copyOf"));
        readRenames(j, path, p);
      } else if (optional(j, "renames")) {
        fail(path, "has \"renames\" but no \"copyOf\": a Copy renames the tensors of another Copy's regions");
      } else if (const json* regions = optional(j, "regions")) {
        if (optional(j, "src") || optional(j, "dst"))
          fail(path, "has both \"regions\" and \"src\"/\"dst\"; expected one form");
        const std::string rp = child(path, "regions");
        expectArray(*regions, rp);
        if (regions->empty()) fail(rp, "expected at least one region");
        for (std::size_t i = 0; i < regions->size(); ++i) {
          const std::string ip = item(rp, i);
          const json& r = (*regions)[i];
          if (!r.is_object()) fail(ip, std::string("expected an object {src, dst}, got ") + r.type_name());
          expectObject(r, ip, {"src", "dst", "rows", "srcStride", "dstStride"});
          CopyRegion region{readRef(required(r, ip, "src", "a tensor region"), child(ip, "src")),
                            readRef(required(r, ip, "dst", "a tensor region"), child(ip, "dst"))};
          if (const json* rows = optional(r, "rows")) {
            region.rows = asU64(*rows, child(ip, "rows"));
            region.srcStride = asU64(required(r, ip, "srcStride", "elements between source rows"), child(ip, "srcStride"));
            region.dstStride = asU64(required(r, ip, "dstStride", "elements between destination rows"), child(ip, "dstStride"));
          }
          p.regions.push_back(region);
        }
      } else {
        p.src = readRef(required(j, path, "src", "a tensor region"), child(path, "src"));
        p.dst = readRef(required(j, path, "dst", "a tensor region"), child(path, "dst"));
      }
      break;
    case ProgramKind::StreamCopy:
      p.stream = asU32(required(j, path, "stream", "a stream id"), child(path, "stream"));
      p.tensor = readRef(required(j, path, "tensor", "a tensor region"), child(path, "tensor"));
      break;
    case ProgramKind::Repeat: p.count = asU64(required(j, path, "count", "an unsigned integer"), child(path, "count")); break;
    case ProgramKind::RepeatWhileTrue:
    case ProgramKind::If:
      p.condition = readRef(required(j, path, "condition", "a one-element tensor region"), child(path, "condition"));
      break;
    case ProgramKind::Sync: {
      const std::string sp = child(path, "syncType");
      const std::string type = asString(required(j, path, "syncType", "internal or external"), sp);
      if (type == "internal") p.syncType = SyncType::Internal;
      else if (type == "external") p.syncType = SyncType::External;
      else fail(sp, "expected internal or external, got '" + type + "'");
      break;
    }
    case ProgramKind::Call: p.callee = asU32(required(j, path, "callee", "a program id"), child(path, "callee")); break;
    case ProgramKind::RemoteCopy: {
      p.remoteBuffer = asU32(required(j, path, "remoteBuffer", "a remote buffer id"), child(path, "remoteBuffer"));
      p.tensor = readRef(required(j, path, "tensor", "a tensor region"), child(path, "tensor"));
      const std::string dp = child(path, "direction");
      const std::string direction = asString(required(j, path, "direction", "load or store"), dp);
      if (direction != "load" && direction != "store") fail(dp, "expected load or store, got '" + direction + "'");
      p.remoteStore = direction == "store";
      break;
    }
    case ProgramKind::Sequence: break;
  }
  if (const json* v = optional(j, "marksStep")) p.marksStep = asBool(*v, child(path, "marksStep"));
  if (const json* v = optional(j, "collective")) p.collective = asBool(*v, child(path, "collective"));
  if (const json* v = optional(j, "ipusApart")) p.ipusApart = asBool(*v, child(path, "ipusApart"));
  p.debug = readDebug(j, path);
  return p;
}

RemoteBuffer readRemoteBuffer(const json& j, const std::string& path, std::size_t index) {
  expectObject(j, path, {"id", "name", "dtype", "elements", "initialValue", "debug"});
  RemoteBuffer b;
  b.id = readId(j, path, index);
  b.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  b.dtype = readDType(required(j, path, "dtype", "float, half, int, uint or bool"), child(path, "dtype"));
  b.elements = asU64(required(j, path, "elements", "an unsigned integer"), child(path, "elements"));
  if (const json* v = optional(j, "initialValue")) {
    const std::string p = child(path, "initialValue");
    expectArray(*v, p);
    b.initialValue.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) b.initialValue.push_back(asDouble((*v)[i], item(p, i)));
  }
  b.debug = readDebug(j, path);
  return b;
}

EntryPoint readEntryPoint(const json& j, const std::string& path) {
  expectObject(j, path, {"name", "program"});
  EntryPoint e;
  e.name = asString(required(j, path, "name", "a string"), child(path, "name"));
  e.program = asU32(required(j, path, "program", "a program id"), child(path, "program"));
  return e;
}

template <class T, class ReadOne>
void readTable(const json& root, const char* key, std::vector<T>& out, ReadOne readOne) {
  const json* table = optional(root, key);
  if (!table) return;
  expectArray(*table, key);
  out.reserve(table->size());
  for (std::size_t i = 0; i < table->size(); ++i) out.push_back(readOne((*table)[i], item(key, i), i));
}

}  // namespace

json toJson(const Executable& exe) {
  if (exe.mirror.active())
    throw std::logic_error("executable '" + exe.name + "' mirrors its replicas (timing only, model/ir/replica_mirror.hpp): "
                           "it holds one replica's work; serialize the fully laid-out executable");
  json j = {{"format", kFormat}, {"version", kVersion}, {"name", exe.name}, {"target", exe.target},
            {"options", exe.options}};
  json& tensors = j["tensors"] = json::array();
  for (const auto& t : exe.tensors) tensors.push_back(tensorJson(t));
  json& computeSets = j["computeSets"] = json::array();
  for (const auto& cs : exe.computeSets) computeSets.push_back(computeSetJson(cs));
  json& streams = j["streams"] = json::array();
  for (const auto& s : exe.streams) streams.push_back(streamJson(s));
  if (!exe.remoteBuffers.empty()) {
    json& remote = j["remoteBuffers"] = json::array();
    for (const auto& b : exe.remoteBuffers) remote.push_back(remoteBufferJson(b));
  }
  json& programs = j["programs"] = json::array();
  for (const auto& p : exe.programs) programs.push_back(programJson(p));
  json& entries = j["entryPoints"] = json::array();
  for (const auto& e : exe.entryPoints) entries.push_back({{"name", e.name}, {"program", e.program}});
  if (exe.ipusPerReplica) j["ipusPerReplica"] = exe.ipusPerReplica;
  return j;
}

namespace {

// Counts the bytes written and refuses to pass `limit` (writeJson).
class BoundedWriter {
 public:
  BoundedWriter(std::ostream& out, std::uint64_t limit, const Executable& exe) : out_(out), limit_(limit), exe_(exe) {}
  void write(const std::string& text, const char* where) {
    written_ += text.size();
    if (written_ > limit_)
      throw std::length_error("the serialized graph of '" + exe_.name + "' takes more than " + std::to_string(limit_) +
                              " bytes (the most `ipusim run --graph` reads, model/ir/executable.hpp), passed while " +
                              "writing its " + where + ": it is not written; compile a smaller model or replicate it " +
                              "(ipu.num_ipus: one replica is serialized)");
    out_ << text;
  }

 private:
  std::ostream& out_;
  std::uint64_t limit_, written_ = 0;
  const Executable& exe_;
};

// A name that is not UTF-8 (a workload's, from its file's name) written
// with U+FFFD, as compile --json shows it: the JSON library threw "invalid
// UTF-8 byte", and compile -o or autoReport.outputSerializedGraph failed.
std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

template <typename Item, typename ToJson>
void writeArray(BoundedWriter& w, const char* key, const std::vector<Item>& items, ToJson toJson, bool last = false) {
  w.write(std::string("\"") + key + "\":[", key);
  for (std::size_t i = 0; i < items.size(); ++i) w.write((i ? ",\n" : "\n") + dumped(toJson(items[i])), key);
  w.write(last ? "\n]" : "\n],\n", key);
}

}  // namespace

std::uint64_t jsonBytesLowerBound(const Executable& exe) {
  // The shortest text of each element toJson writes: {"tile":0,"begin":0,"end":1} is 28 bytes,
  // {"name":"","tensor":0,"begin":0,"end":1} 40, {"codelet":"","tile":0,"fields":[]} 35, a copy
  // region's {"src":{...},"dst":{...}} 2 x 30 + 16.
  std::uint64_t bytes = 0;
  for (const auto& t : exe.tensors) bytes += 28 * std::uint64_t(t.mapping.size());
  for (const auto& cs : exe.computeSets)
    for (const auto& v : cs.vertices) bytes += 35 + 40 * std::uint64_t(v.fields.size());
  for (const auto& p : exe.programs) bytes += 76 * std::uint64_t(p.regions.size());
  return bytes;
}

void writeJson(const Executable& exe, std::ostream& out, std::uint64_t maxBytes) {
  if (exe.mirror.active()) toJson(exe);  // throws: a mirrored executable is not serialized
  const std::uint64_t atLeast = jsonBytesLowerBound(exe);
  if (atLeast > maxBytes)
    throw std::length_error("the serialized graph of '" + exe.name + "' would take at least " +
                            std::to_string(atLeast) + " bytes (its vertices, their fields, its tensors' tile " +
                            "intervals and copy regions), more than the " + std::to_string(maxBytes) +
                            " bytes `ipusim run --graph` reads (model/ir/executable.hpp): it is not written; " +
                            "compile a smaller model or replicate it (ipu.num_ipus: one replica is serialized)");
  BoundedWriter w(out, maxBytes, exe);
  json head = {{"format", kFormat}, {"version", kVersion}, {"name", exe.name}, {"target", exe.target},
               {"options", exe.options}};
  if (exe.ipusPerReplica) head["ipusPerReplica"] = exe.ipusPerReplica;
  std::string text = dumped(head);
  text.back() = ',';  // the object stays open for the arrays
  w.write(text + "\n", "header");
  writeArray(w, "tensors", exe.tensors, tensorJson);
  writeArray(w, "computeSets", exe.computeSets, computeSetJson);
  writeArray(w, "streams", exe.streams, streamJson);
  if (!exe.remoteBuffers.empty()) writeArray(w, "remoteBuffers", exe.remoteBuffers, remoteBufferJson);
  writeArray(w, "programs", exe.programs, programJson);
  writeArray(w, "entryPoints", exe.entryPoints,
             [](const EntryPoint& e) { return json{{"name", e.name}, {"program", e.program}}; }, true);
  w.write("}\n", "end");
}

Executable fromJson(const json& j) {
  expectObject(j, "", {"format", "version", "name", "target", "options", "tensors", "computeSets", "streams",
                       "remoteBuffers", "programs", "entryPoints", "ipusPerReplica"});
  if (const json* v = optional(j, "format"))
    if (asString(*v, "format") != kFormat) fail("format", "expected '" + std::string(kFormat) + "', got " + v->dump());
  if (const json* v = optional(j, "version"))
    if (asU64(*v, "version") != kVersion)
      fail("version", "this ipusim reads version " + std::to_string(kVersion) + ", got " + v->dump());
  Executable exe;
  if (const json* v = optional(j, "name")) exe.name = asString(*v, "name");
  if (const json* v = optional(j, "target")) {
    if (!v->is_object() && !v->is_null()) fail("target", std::string("expected an object, got ") + v->type_name());
    exe.target = *v;
  }
  if (const json* v = optional(j, "options")) {
    if (!v->is_object() && !v->is_null()) fail("options", std::string("expected an object, got ") + v->type_name());
    exe.options = *v;
  }
  if (const json* v = optional(j, "ipusPerReplica")) exe.ipusPerReplica = std::uint32_t(asU64(*v, "ipusPerReplica"));
  readTable(j, "tensors", exe.tensors, readTensor);
  readTable(j, "computeSets", exe.computeSets, readComputeSet);
  readTable(j, "streams", exe.streams, readStream);
  readTable(j, "remoteBuffers", exe.remoteBuffers, readRemoteBuffer);
  readTable(j, "programs", exe.programs, readProgram);
  readTable(j, "entryPoints", exe.entryPoints,
            [](const json& e, const std::string& path, std::size_t) { return readEntryPoint(e, path); });
  return exe;
}

}  // namespace ipusim::ir
