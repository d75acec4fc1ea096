#include "sim/dataset/npy_file.hpp"

#include "model/util/input_file.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

namespace ipusim::sim::dataset {
namespace {

[[noreturn]] void npyFail(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

// Reads exactly `size` bytes unless the file ends first; returns how many.
std::size_t readUpTo(int fd, std::uint8_t* into, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, into + done, size - done);
    if (n <= 0) break;
    done += std::size_t(n);
  }
  return done;
}

// The header dictionary's entries, key and value text, read as Python
// reads the literal numpy.save writes ("{'descr': '<i4', 'fortran_order':
// False, 'shape': (8, 128), }"): a key in either quotes, a value up to the
// next ',' or '}' outside parentheses, brackets and quotes. Only numpy's three keys,
// each once: given twice numpy (a dictionary literal) takes the last, and
// 'shape' then "shape" is twice too (the first was read, numpy reads the
// second); numpy.load refuses any other key; a key with an escape
// ('sha\x70e' is 'shape' to Python) is refused rather than decoded.
std::map<std::string, std::string> headerEntries(const std::string& header, const std::string& path) {
  auto refuse = [&](const std::string& what) {
    npyFail(path, "the .npy header is not numpy.save's dictionary (" + what + ")");
  };
  std::map<std::string, std::string> entries;
  std::size_t i = header.find_first_not_of(' ');
  if (i == std::string::npos || header[i] != '{') refuse("expected it to start with '{'");
  for (++i;;) {
    i = header.find_first_not_of(' ', i);
    if (i == std::string::npos) refuse("no closing '}'");
    if (header[i] == '}') break;
    const char quote = header[i];
    if (quote != '\'' && quote != '"') refuse("expected a quoted key at byte " + std::to_string(i));
    const std::size_t end = header.find(quote, i + 1);
    if (end == std::string::npos) refuse("an unterminated key");
    const std::string key = header.substr(i + 1, end - i - 1);
    if (key.find('\\') != std::string::npos) refuse("a key with an escape, '" + key + "'");
    if (key != "descr" && key != "fortran_order" && key != "shape")
      npyFail(path, "the .npy header gives '" + key + "': expected only 'descr', 'fortran_order' and 'shape' "
                    "(numpy.load refuses other keys)");
    if (entries.count(key))
      npyFail(path, "the .npy header gives '" + key + "' twice (numpy takes the last); expected it once, as "
                    "numpy.save writes");
    i = header.find_first_not_of(' ', end + 1);
    if (i == std::string::npos || header[i] != ':') refuse("no ':' after '" + key + "'");
    std::string value;
    int depth = 0;
    char inQuote = 0;
    for (++i; i < header.size(); ++i) {
      const char c = header[i];
      if (inQuote) inQuote = c == inQuote ? 0 : inQuote;
      else if (c == '\'' || c == '"') inQuote = c;
      else if (c == '(' || c == '[') ++depth;
      else if (c == ')' || c == ']') --depth;
      else if ((c == ',' || c == '}') && depth == 0) break;
      value += c;
    }
    if (i == header.size()) refuse("no closing '}'");
    entries[key] = value;
    if (header[i] == ',') ++i;
  }
  if (header.find_first_not_of(" \n", i + 1) != std::string::npos) refuse("text after its closing '}'");
  return entries;
}

// The value of `key` (headerEntries), trimmed. Quotes around it are dropped
// unless `keepQuotes` (a boolean is never quoted).
std::string headerValue(const std::map<std::string, std::string>& entries, const std::string& key,
                        const std::string& path, bool keepQuotes = false) {
  const auto it = entries.find(key);
  if (it == entries.end()) npyFail(path, "the .npy header has no '" + key + "' (expected numpy.save's dictionary)");
  const std::string& value = it->second;
  const char* trimmed = keepQuotes ? " " : " '\"";
  const std::size_t first = value.find_first_not_of(trimmed), last = value.find_last_not_of(trimmed);
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

struct IntegerType {
  std::size_t bytes = 0;
  bool isSigned = false;
};

IntegerType integerType(const std::string& descr, const std::string& path, const std::string& what) {
  // '<i4' little-endian; '|i1' one byte (no order); '=' native (little-endian here).
  const bool order = descr.size() == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=');
  if (order && (descr[1] == 'i' || descr[1] == 'u') && (descr[2] == '1' || descr[2] == '2' || descr[2] == '4' || descr[2] == '8'))
    return {std::size_t(descr[2] - '0'), descr[1] == 'i'};
  npyFail(path, "descr '" + descr + "': " + what + " are read as little-endian integers ('<i4', '<i8', '|u1', ...; " +
                    "numpy: ids.astype(np.int32))");
}

// A Python tuple of sizes as numpy.load reads it (through ast.literal_eval):
// "()", "(5,)", "(8, 128)" as numpy.save writes them, one trailing comma,
// and what Python's integer literals also allow: a '+' ("(+6,)") and
// underscores between digits ("(4_0,)" is 40). Anything else — an empty
// item, a '-', a leading zero ("06" is a SyntaxError), nested parentheses —
// is refused rather than guessed at.
std::vector<std::uint64_t> parseShape(const std::string& text, const std::string& path) {
  auto refuse = [&]() { npyFail(path, "the .npy header's shape '" + text + "' is not a tuple of sizes"); };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') refuse();
  std::vector<std::string> items(1);
  for (std::size_t i = 1; i + 1 < text.size(); ++i)
    if (text[i] == ',') items.emplace_back();
    else items.back() += text[i];
  auto trim = [](const std::string& item) {
    const std::size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
  };
  for (std::string& item : items) item = trim(item);
  if (items.size() > 1 && items.back().empty()) items.pop_back();  // "(5,)" and "(8, 128,)"
  std::vector<std::uint64_t> shape;
  if (items.size() == 1 && items[0].empty()) return shape;  // "()": a scalar
  for (const std::string& item : items) {
    std::string literal = item[0] == '+' ? trim(item.substr(1)) : item;  // "+ 6" is 6 to Python too
    std::string digits;
    for (std::size_t i = 0; i < literal.size(); ++i) {
      const char c = literal[i];
      const bool betweenDigits = i > 0 && i + 1 < literal.size() && literal[i - 1] != '_' && literal[i + 1] != '_';
      if (c >= '0' && c <= '9') digits += c;
      else if (c != '_' || !betweenDigits) refuse();
    }
    if (digits.empty() || (digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)) refuse();
    const std::size_t significant = std::min(digits.find_first_not_of('0'), digits.size() - 1);
    if (digits.size() - significant > 18)
      npyFail(path, "the .npy header's shape '" + text + "' has a size beyond any file");
    shape.push_back(std::stoull(digits));
  }
  return shape;
}

}  // namespace

NpyArray readNpyIntegers(const std::string& path, const std::string& what) {
  const int fd = util::openRegularInputFile(path, what + " file", ~std::uint64_t(0));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::uint8_t preamble[8] = {};
  if (readUpTo(fd, preamble, 8) < 8 || std::memcmp(preamble, "\x93NUMPY", 6) != 0)
    npyFail(path, "bad magic (expected a NumPy .npy file: \\x93NUMPY, as numpy.save writes)");
  const unsigned major = preamble[6];
  if (major < 1 || major > 3) npyFail(path, "a .npy version " + std::to_string(major) + " (1, 2 and 3 are read)");
  std::uint8_t lengthBytes[4] = {};
  const std::size_t lengthSize = major == 1 ? 2 : 4;
  if (readUpTo(fd, lengthBytes, lengthSize) < lengthSize) npyFail(path, "truncated .npy header");
  std::uint64_t headerLength = 0;
  for (std::size_t i = lengthSize; i-- > 0;) headerLength = headerLength << 8 | lengthBytes[i];
  if (headerLength > 1 << 20) npyFail(path, "a .npy header of " + std::to_string(headerLength) + " bytes (at most 1 MiB)");
  std::string header(headerLength, '\0');
  if (readUpTo(fd, reinterpret_cast<std::uint8_t*>(header.data()), headerLength) < headerLength)
    npyFail(path, "truncated .npy header");
  const std::map<std::string, std::string> entries = headerEntries(header, path);
  const IntegerType type = integerType(headerValue(entries, "descr", path), path, what);
  const std::string fortranOrder = headerValue(entries, "fortran_order", path, true);
  if (fortranOrder != "False")
    npyFail(path, "fortran_order " + fortranOrder + ": expected False, " + what +
                      " are read in C (row-major) order (numpy: np.ascontiguousarray)");
  NpyArray a;
  a.shape = parseShape(headerValue(entries, "shape", path), path);
  std::uint64_t elements = 1;
  for (std::uint64_t d : a.shape) {
    if (d != 0 && elements > kMaxNpyValues / d)
      npyFail(path, "the .npy header announces more than " + std::to_string(kMaxNpyValues) +
                        " values (the limit for a dataset file held in memory: 4 GiB of 64-bit integers)");
    elements *= d;
  }
  // The file's size is known (a regular file): a header announcing more or
  // less data than follows it is refused before anything is allocated.
  const std::uint64_t dataBytes = elements * type.bytes;
  struct stat info {};
  const std::int64_t here = std::int64_t(::lseek(fd, 0, SEEK_CUR));
  if (::fstat(fd, &info) != 0 || here < 0) npyFail(path, "cannot inspect the file");
  const std::uint64_t follows = std::uint64_t(info.st_size) - std::min<std::uint64_t>(info.st_size, here);
  if (follows < dataBytes)
    npyFail(path, "truncated: the header announces " + std::to_string(dataBytes) + " bytes of data, the file has " +
                      std::to_string(follows));
  if (follows > dataBytes)
    npyFail(path, "has data after the " + std::to_string(dataBytes) + " bytes its .npy header announces");
  a.values.resize(elements);
  // Read in chunks straight into the values: no second copy of the data.
  constexpr std::uint64_t kChunkElements = 1u << 20;
  std::vector<std::uint8_t> chunk(std::min<std::uint64_t>(elements, kChunkElements) * type.bytes);
  for (std::uint64_t done = 0; done < elements;) {
    const std::uint64_t count = std::min<std::uint64_t>(elements - done, kChunkElements);
    const std::size_t got = readUpTo(fd, chunk.data(), count * type.bytes);
    if (got < count * type.bytes)  // it shrank while we read
      npyFail(path, "truncated: the header announces " + std::to_string(dataBytes) + " bytes of data, the file has " +
                        std::to_string(done * type.bytes + got));
    for (std::uint64_t e = 0; e < count; ++e) {
      std::uint64_t raw = 0;
      for (std::size_t b = type.bytes; b-- > 0;) raw = raw << 8 | chunk[e * type.bytes + b];
      if (type.isSigned && type.bytes < 8 && (raw >> (8 * type.bytes - 1)) & 1) raw |= ~0ull << (8 * type.bytes);
      a.values[done + e] = std::int64_t(raw);  // (an unsigned 8-byte value past 2^63 reads negative: refused as an id)
    }
    done += count;
  }
  std::uint8_t extra = 0;
  if (readUpTo(fd, &extra, 1) != 0)  // it grew while we read
    npyFail(path, "has data after the " + std::to_string(dataBytes) + " bytes its .npy header announces");
  return a;
}

}  // namespace ipusim::sim::dataset
