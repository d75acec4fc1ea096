#pragma once
// Name: an interned string, 8 bytes. A compiled ResNet-50 step holds about
// 6 million vertices with 20 million fields and 18 million parameters, each
// named by a codelet, field or parameter name out of a few hundred distinct
// ones: as std::string (32 bytes, a heap block when longer than 15
// characters) the names alone took over a gigabyte. Each distinct string is
// stored once per process (never freed) and a Name points at it; equality
// is pointer equality, ordering is the strings'. It converts implicitly to
// const std::string&, so it reads as the string it names.
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ipusim::ir {

class Name {
 public:
  Name();  // ""
  Name(std::string_view s);  // NOLINT: implicit, as a string
  Name(const std::string& s) : Name(std::string_view(s)) {}  // NOLINT
  Name(const char* s);                                        // NOLINT

  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT
  const char* c_str() const { return s_->c_str(); }
  std::size_t size() const { return s_->size(); }
  bool empty() const { return s_->empty(); }
  // The std::string lookups callers use on names.
  std::size_t find(std::string_view p, std::size_t pos = 0) const { return s_->find(p, pos); }
  std::size_t rfind(std::string_view p, std::size_t pos = std::string::npos) const { return s_->rfind(p, pos); }
  std::string substr(std::size_t pos, std::size_t n = std::string::npos) const { return s_->substr(pos, n); }

  friend bool operator==(Name a, Name b) { return a.s_ == b.s_; }
  friend bool operator!=(Name a, Name b) { return a.s_ != b.s_; }
  friend bool operator==(Name a, const std::string& b) { return *a.s_ == b; }
  friend bool operator!=(Name a, const std::string& b) { return *a.s_ != b; }
  friend bool operator==(const std::string& a, Name b) { return a == *b.s_; }
  friend bool operator!=(const std::string& a, Name b) { return a != *b.s_; }
  friend bool operator==(Name a, const char* b) { return *a.s_ == b; }
  friend bool operator!=(Name a, const char* b) { return *a.s_ != b; }
  friend bool operator<(Name a, Name b) { return *a.s_ < *b.s_; }
  friend std::string operator+(Name a, const std::string& b) { return *a.s_ + b; }
  friend std::string operator+(const std::string& a, Name b) { return a + *b.s_; }
  friend std::string operator+(Name a, const char* b) { return *a.s_ + b; }
  friend std::string operator+(const char* a, Name b) { return a + *b.s_; }
  friend std::ostream& operator<<(std::ostream& os, Name n) { return os << *n.s_; }

 private:
  const std::string* s_;
};

}  // namespace ipusim::ir

template <>
struct std::hash<ipusim::ir::Name> {
  std::size_t operator()(ipusim::ir::Name n) const noexcept { return std::hash<const void*>()(&n.str()); }
};
