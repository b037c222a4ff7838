// The run directory's log and lock (run_dir.h).
#include "train/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "support/error.h"

namespace tenet::train {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLogHeader =
    "epoch,step,split,loss,accuracy,lr,images_per_second,elapsed_seconds";

/// Doubles as text that reads back to the same value.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

CurveLog::CurveLog(const std::string& path, int64_t resume_step, int64_t completed_epochs)
    : path_(path) {
  std::vector<std::string> kept;
  std::error_code ec;  // not through a link, nor from /dev/zero (read without end)
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw BindError(path + " is not a regular file; remove it or choose another run directory");
  if (resume_step > 0 && fs::exists(status)) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line))
      if (keep(line, resume_step, completed_epochs)) kept.push_back(line);
  }
  out_.open(path, std::ios::trunc);
  if (!out_) throw BindError("cannot write " + path);
  out_ << kLogHeader << "\n";
  for (const std::string& line : kept) out_ << line << "\n";
  out_.flush();
}

void CurveLog::row(int64_t epoch, int64_t step, const char* split, double loss, double accuracy,
                   double lr, double images_per_second, double elapsed) {
  out_ << epoch << "," << step << "," << split << "," << exact(loss) << "," << exact(accuracy)
       << "," << exact(lr) << "," << fixed(images_per_second, 1) << "," << fixed(elapsed, 3)
       << "\n";
  out_.flush();
}

bool CurveLog::keep(const std::string& line, int64_t step, int64_t completed_epochs) {
  std::stringstream ss(line);
  std::string epoch, row_step, split;
  if (!std::getline(ss, epoch, ',') || !std::getline(ss, row_step, ',') ||
      !std::getline(ss, split, ','))
    return false;
  char* end = nullptr;
  long long value = std::strtoll((split == "test" ? epoch : row_step).c_str(), &end, 10);
  if (*end != '\0') return false;
  return split == "test" ? value <= completed_epochs : value <= step;
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

void RunDirLock::take(const std::string& dir, const std::string& out_option) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0)
    throw BindError("cannot create the lock file " + path + ": " + std::strerror(errno) +
                    "; choose another " + out_option);
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const bool busy = errno == EWOULDBLOCK;
  const std::string reason = std::strerror(errno);
  ::close(fd_);
  fd_ = -1;
  if (busy)
    throw BindError("another run is writing to the run directory " + dir + " (it holds " + path +
                    "); wait for it to end or choose another " + out_option);
  throw BindError("cannot lock " + path + ": " + reason + "; choose another " + out_option);
}

}  // namespace tenet::train
