#include "sim/dataset/idx_file.hpp"

#include "model/util/input_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <sys/mman.h>
#include <unistd.h>

namespace ipusim::sim::dataset {
namespace {

// Asks for transparent huge pages under [data, data + bytes) before it is
// first touched: Fashion-MNIST's 47 MB of images then fault in 2 MiB at a
// time, not 4 KiB (11,500 page faults cost ~0.1 s of CPU in a VM). A hint only.
void adviseHugePages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHugePage = 2 << 20;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// Reads through zlib (which reads plain files transparently), never more than asked.
class IdxStream {
 public:
  explicit IdxStream(const std::string& path) : path_(path) {
    // A regular file only: a FIFO would block, /dev/zero would never end.
    const int fd = util::openRegularInputFile(path, "IDX file", std::numeric_limits<std::uint64_t>::max());
    file_ = gzdopen(fd, "rb");
    if (!file_) {
      ::close(fd);
      throw std::invalid_argument(path + ": cannot open IDX file");
    }
  }
  ~IdxStream() { gzclose(file_); }
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;

  // Reads up to `size` bytes; returns how many there were.
  std::size_t read(std::uint8_t* into, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const unsigned chunk = unsigned(std::min<std::size_t>(size - done, 1u << 30));
      const int n = gzread(file_, into + done, chunk);
      if (n < 0) {
        int code = 0;
        throw std::invalid_argument(path_ + ": cannot read IDX file (" + gzerror(file_, &code) + ")");
      }
      if (n == 0) break;
      done += std::size_t(n);
    }
    return done;
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

std::uint32_t bigEndian32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

IdxArray readIdx(const std::string& path) {
  IdxStream in(path);
  std::uint8_t magic[4] = {};
  if (in.read(magic, 4) < 4 || magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0)
    throw std::invalid_argument(path + ": bad magic (expected an IDX file of unsigned bytes: 00 00 08 <dims>)");
  const std::size_t rank = magic[3];
  std::vector<std::uint8_t> header(4 * rank);
  if (in.read(header.data(), header.size()) < header.size())
    throw std::invalid_argument(path + ": truncated IDX header");
  IdxArray a;
  // The header decides how much is read: a gzip bomb or an endless file is
  // never read past what it announces, and that is bounded first.
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    a.dims.push_back(bigEndian32(&header[4 * d]));
    if (a.dims.back() != 0 && elements > kMaxIdxBytes / a.dims.back())
      throw std::invalid_argument(path + ": the IDX header announces more than " + std::to_string(kMaxIdxBytes) +
                                  " bytes of data (the limit for a dataset file held in memory)");
    elements *= a.dims.back();
  }
  // Address space for what the header announces, but pages only for the
  // data that arrives: read chunk by chunk, so a 50-byte file announcing
  // 4 GiB costs a chunk, not 4 GiB of zeros, before it is found truncated.
  a.data.reserve(elements);
  adviseHugePages(a.data.data(), elements);
  constexpr std::uint64_t kChunkBytes = 16ull << 20;
  std::size_t got = 0;
  while (got < elements) {
    const auto want = std::size_t(std::min<std::uint64_t>(kChunkBytes, elements - got));
    a.data.resize(got + want);  // within the reserved capacity: no copy
    const std::size_t n = in.read(a.data.data() + got, want);
    got += n;
    if (n < want) break;
  }
  if (got < elements)
    throw std::invalid_argument(path + ": truncated: the header announces " + std::to_string(elements) +
                                " bytes of data, the file has " + std::to_string(got));
  std::uint8_t extra = 0;
  if (in.read(&extra, 1) != 0)
    throw std::invalid_argument(path + ": has data after the " + std::to_string(elements) +
                                " bytes its IDX header announces (not an IDX file, or a damaged one)");
  return a;
}

}  // namespace ipusim::sim::dataset
