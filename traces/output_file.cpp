#include "traces/output_file.hpp"

#include "traces/interrupt_cleanup.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ipusim::traces {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw OutputFileError(path + ": " + why);
}

// Whether `output` names `input` or (when `input` is a directory) a file in it
// that a command reads by default (a report directory's profile.pop).
bool sameFile(const fs::path& output, const std::string& input) {
  std::error_code ec;
  if (fs::equivalent(output, input, ec)) return true;
  if (fs::is_directory(input, ec) && fs::equivalent(output, fs::path(input) / "profile.pop", ec)) return true;
  return false;
}

}  // namespace

void checkOutputPath(const std::string& path, const OutputPolicy& policy) {
  if (path.empty()) throw OutputFileError("output path is empty");
  const fs::path target(path);
  for (const auto& input : policy.inputs)
    if (sameFile(target, input)) refuse(path, "is an input of this command (" + input + "); choose another output path");
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return;  // a new file
    refuse(path, std::string("cannot inspect it: ") + std::strerror(errno));
  }
  if (S_ISLNK(info.st_mode) && ::stat(path.c_str(), &info) != 0) return;  // a dangling link: replaced like a new file
  if (S_ISDIR(info.st_mode)) refuse(path, "is a directory; expected a file name");
  if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) refuse(path, "is a device; refusing to replace it");
  if (S_ISFIFO(info.st_mode)) refuse(path, "is a FIFO; refusing to replace it");
  if (S_ISSOCK(info.st_mode)) refuse(path, "is a socket; refusing to replace it");
  if (!S_ISREG(info.st_mode)) refuse(path, "is not a regular file; refusing to replace it");
  if ((info.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) refuse(path, "is read-only; refusing to replace it");
  if (!policy.force) refuse(path, "already exists; pass --force to replace it");
}

OutputFile::OutputFile(std::string path, const OutputPolicy& policy) : path_(std::move(path)) {
  checkOutputPath(path_, policy);
  temporary_ = path_ + ".tmp-" + std::to_string(::getpid());
  registerFileToRemoveOnInterrupt(temporary_);
  // Created here as a new file, never opened through a link: whatever has
  // this name already (a killed run's leftover, or a planted symlink to
  // someone's file) is removed first — a link itself, not what it names.
  ::unlink(temporary_.c_str());
  const int created = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (created >= 0) {
    ::close(created);
    out_.open(temporary_, std::ios::binary | std::ios::trunc);
  }
  if (created < 0 || !out_) {
    const std::string why = std::strerror(errno);
    unregisterFileToRemoveOnInterrupt(temporary_);
    refuse(path_, "cannot create " + temporary_ + ": " + why);
  }
}

OutputFile::~OutputFile() {
  if (committed_) return;
  if (out_.is_open()) out_.close();
  std::remove(temporary_.c_str());
  unregisterFileToRemoveOnInterrupt(temporary_);
}

void OutputFile::commit() {
  out_.flush();
  out_.close();
  if (!out_) refuse(path_, "writing failed (disk full?)");
  struct stat info {};
  if (::stat(temporary_.c_str(), &info) != 0) refuse(path_, "the temporary file " + temporary_ + " disappeared");
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
    refuse(path_, std::string("cannot rename the finished file onto it: ") + std::strerror(errno));
  committed_ = true;
  unregisterFileToRemoveOnInterrupt(temporary_);
}

}  // namespace ipusim::traces
