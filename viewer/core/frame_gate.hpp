#pragma once
// frame_gate: whether the UI thread is drawing a frame, for background work
// that must not take a core from it.
//
// Why: a 100 M-slice profile's whole-file checks (SQLite's quick_check, the
// row counts, the host-wait figure: ~35 s of CPU) ran beside the frames even
// at nice 19: on 2 cores, with llvmpipe rasterising on both, frames took
// 11-20 ms mean while the checks ran and 10-12 ms without them
// (bench/RESULTS.md). The window marks each frame from its events to its
// swap; the checks read the file through frameGatedVfs(), wait while a frame
// is drawn, and use the time between frames (at 20-30 frames a second, most
// of it).
namespace ipusim::viewer::frame_gate {

void frameBegins();
void frameEnds();
bool drawing();
// Returns once no frame is being drawn, or at once while the UI thread waits
// for background work (UiWaits).
void waitWhileDrawing();

// The name of a SQLite VFS that reads as the default one does, but first
// waits while a frame is drawn (registered on first use). Every page a
// background reader reads goes through it, also inside the single
// instructions that scan a whole file (quick_check, count(*)), inside which
// Debian 12's SQLite (3.40) calls no progress handler.
const char* frameGatedVfs();

// Held by the UI thread while it waits for background work mid-frame (a
// figure the frame needs now, such as the host wait of a comparison): the
// work must not wait for the frame then, or neither would go on.
class UiWaits {
 public:
  UiWaits();
  ~UiWaits();
  UiWaits(const UiWaits&) = delete;
  UiWaits& operator=(const UiWaits&) = delete;
};

}  // namespace ipusim::viewer::frame_gate
