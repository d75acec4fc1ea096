#include "viewer/core/frame_gate.hpp"

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ipusim::viewer::frame_gate {
namespace {

std::atomic<bool> frameInProgress{false};
std::atomic<int> uiWaiting{0};

constexpr const char* kVfsName = "ipusim-frame-gated";

// A file of the gated VFS: our sqlite3_file, then the default VFS's file.
struct GatedFile {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

sqlite3_vfs* defaultVfs = nullptr;

sqlite3_file* realOf(sqlite3_file* f) { return reinterpret_cast<GatedFile*>(f)->real(); }

// Version 1 of the io methods: profiles are written without WAL (no shared
// memory needed) and, without xFetch, SQLite maps no pages: every page read
// goes through xRead, the gate.
const sqlite3_io_methods gatedMethods = {
    1,
    [](sqlite3_file* f) { return realOf(f)->pMethods->xClose(realOf(f)); },
    [](sqlite3_file* f, void* buffer, int amount, sqlite3_int64 offset) {
      waitWhileDrawing();
      return realOf(f)->pMethods->xRead(realOf(f), buffer, amount, offset);
    },
    [](sqlite3_file* f, const void* buffer, int amount, sqlite3_int64 offset) {
      return realOf(f)->pMethods->xWrite(realOf(f), buffer, amount, offset);
    },
    [](sqlite3_file* f, sqlite3_int64 size) { return realOf(f)->pMethods->xTruncate(realOf(f), size); },
    [](sqlite3_file* f, int flags) { return realOf(f)->pMethods->xSync(realOf(f), flags); },
    [](sqlite3_file* f, sqlite3_int64* size) { return realOf(f)->pMethods->xFileSize(realOf(f), size); },
    [](sqlite3_file* f, int lock) { return realOf(f)->pMethods->xLock(realOf(f), lock); },
    [](sqlite3_file* f, int lock) { return realOf(f)->pMethods->xUnlock(realOf(f), lock); },
    [](sqlite3_file* f, int* out) { return realOf(f)->pMethods->xCheckReservedLock(realOf(f), out); },
    [](sqlite3_file* f, int op, void* arg) { return realOf(f)->pMethods->xFileControl(realOf(f), op, arg); },
    [](sqlite3_file* f) { return realOf(f)->pMethods->xSectorSize(realOf(f)); },
    [](sqlite3_file* f) { return realOf(f)->pMethods->xDeviceCharacteristics(realOf(f)); },
    nullptr,  // xShmMap and the rest: versions 2 and 3 only
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

int gatedOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* outFlags) {
  auto* gated = reinterpret_cast<GatedFile*>(file);
  gated->base.pMethods = nullptr;
  const int rc = defaultVfs->xOpen(defaultVfs, name, gated->real(), flags, outFlags);
  // SQLite calls xClose whenever pMethods is set, even after a failed open.
  if (gated->real()->pMethods) gated->base.pMethods = &gatedMethods;
  return rc;
}

void registerGatedVfs() {
  defaultVfs = sqlite3_vfs_find(nullptr);
  if (!defaultVfs) throw std::runtime_error("frame_gate: SQLite has no default VFS");
  static sqlite3_vfs vfs = *defaultVfs;  // its file names, locks, time and randomness
  vfs.zName = kVfsName;
  vfs.szOsFile = int(sizeof(GatedFile)) + defaultVfs->szOsFile;
  vfs.pNext = nullptr;
  vfs.pAppData = nullptr;
  vfs.xOpen = gatedOpen;
  if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) throw std::runtime_error("frame_gate: cannot register SQLite's VFS " + std::string(kVfsName));
}

}  // namespace

void frameBegins() { frameInProgress.store(true, std::memory_order_release); }

void frameEnds() { frameInProgress.store(false, std::memory_order_release); }

bool drawing() { return frameInProgress.load(std::memory_order_acquire); }

void waitWhileDrawing() {
  // Polled: a frame lasts milliseconds, and a read waiting 0.2 ms more than
  // it needs to costs nothing the user sees.
  while (drawing() && uiWaiting.load(std::memory_order_acquire) == 0)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

const char* frameGatedVfs() {
  static std::once_flag once;
  std::call_once(once, registerGatedVfs);
  return kVfsName;
}

UiWaits::UiWaits() { uiWaiting.fetch_add(1, std::memory_order_acq_rel); }

UiWaits::~UiWaits() { uiWaiting.fetch_sub(1, std::memory_order_acq_rel); }

}  // namespace ipusim::viewer::frame_gate
