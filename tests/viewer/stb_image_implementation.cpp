// stb_image's implementation, compiled once for the viewer tests that read
// the PNGs ipusim-view writes. In a file of its own: the test files build in
// unity batches, and the header's implementation part has no include guard.
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
