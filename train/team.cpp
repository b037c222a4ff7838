// The processes that train one model together (team.h): MPI when a launcher
// started this process and the runtime has it, else a team of one.
#include "train/team.h"

#include <time.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#ifdef TENET_WITH_MPI
// MPI's C interface only (Open MPI and MPICH would add their deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace tenet::train {

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = std::getenv(name);
    if (!value) continue;
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && n > 0 && n <= INT_MAX) return int(n);
  }
  return 1;
}

Team& Team::world() {
  static Team team;
  return team;
}

namespace {

#ifdef TENET_WITH_MPI

void sleep_a_millisecond() {
  timespec pause{0, 1000000};
  nanosleep(&pause, nullptr);
}

void check(int rc, const char* during) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw TeamError(std::string("lost the other processes of this job during ") + during + " (MPI: " +
                      text + "); the job ends; continue it from its last checkpoint with --resume",
                  true);
}

/// MPI's int counts and displacements; a TeamError beyond them.
std::vector<int> ints(const std::vector<int64_t>& values) {
  std::vector<int> out;
  out.reserve(values.size());
  for (int64_t v : values) {
    if (v < 0 || v > INT_MAX)
      throw TeamError("a message of " + std::to_string(v) +
                      " values is larger than one MPI call carries (2^31 - 1)");
    out.push_back(int(v));
  }
  return out;
}

#endif

}  // namespace

Team::Team() {
  const int launched = launched_ranks();
  if (launched <= 1) return;
#ifdef TENET_WITH_MPI
  int initialized = 0, provided = 0;
  MPI_Initialized(&initialized);  // by the host program (mpi4py, a C++ main): it finalises
  if (!initialized &&
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw BindError("MPI_Init failed: cannot join the other " + std::to_string(launched - 1) +
                    " processes of this job");
  mpi_ = true;
  owns_mpi_ = initialized == 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
#ifdef _OPENMP
  // The ranks on this machine share its cores, unless the user chose.
  if (local_size_ > 1 && !std::getenv("OMP_NUM_THREADS"))
    omp_set_num_threads(std::max(1, omp_get_num_procs() / local_size_));
#endif
#else
  throw BindError(
      "an MPI launcher started this program as one of " + std::to_string(launched) +
      " processes, but it was built without MPI; install an MPI (Debian: apt-get install "
      "libopenmpi-dev openmpi-bin) and build again (CMake finds it), or run it as one process");
#endif
}

void Team::broadcast(void* data, size_t bytes) {
  if (size_ == 1 || bytes == 0) return;
#ifdef TENET_WITH_MPI
  auto* p = static_cast<char*>(data);
  for (size_t done = 0; done < bytes;) {  // MPI counts are int
    const size_t n = std::min<size_t>(bytes - done, size_t(1) << 30);
    check(MPI_Bcast(p + done, int(n), MPI_BYTE, 0, MPI_COMM_WORLD), "a broadcast");
    done += n;
  }
#else
  (void)data;
#endif
}

std::vector<std::string> Team::all_texts(const std::string& text) {
  if (size_ == 1) return {text};
  std::vector<std::string> texts(static_cast<size_t>(size_));
#ifdef TENET_WITH_MPI
  int length = int(text.size());
  std::vector<int> lengths(static_cast<size_t>(size_)), offsets(lengths.size());
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD),
        "the start-up check");
  int total = 0;
  for (int q = 0; q < size_; ++q) {
    offsets[size_t(q)] = total;
    total += lengths[size_t(q)];
  }
  std::string all(size_t(total), '\0');
  check(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                       MPI_CHAR, MPI_COMM_WORLD),
        "the start-up check");
  for (int q = 0; q < size_; ++q)
    texts[size_t(q)] = all.substr(size_t(offsets[size_t(q)]), size_t(lengths[size_t(q)]));
#endif
  return texts;
}

namespace {

std::string encode(const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string text;
  for (const auto& fact : facts) text += std::to_string(fact.second.size()) + ":" + fact.second;
  return text;
}

std::vector<std::string> decode(const std::string& text) {
  std::vector<std::string> values;
  for (size_t at = 0; at < text.size();) {
    const size_t colon = text.find(':', at);
    if (colon == std::string::npos) break;
    const size_t length = std::stoul(text.substr(at, colon - at));
    values.push_back(text.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  return values;
}

/// A value short and plain enough to quote in a message.
bool quotable(const std::string& value) {
  if (value.size() > 60) return false;
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

void Team::agree(const std::vector<std::pair<std::string, std::string>>& facts) {
  if (size_ == 1) return;
  const std::vector<std::string> texts = all_texts(encode(facts));
  const std::vector<std::string> ours = decode(texts[0]);
  for (size_t q = 1; q < texts.size(); ++q) {
    if (texts[q] == texts[0]) continue;
    const std::vector<std::string> theirs = decode(texts[q]);
    size_t f = 0;
    while (f < facts.size() && f < ours.size() && f < theirs.size() && ours[f] == theirs[f]) ++f;
    const std::string what = f < facts.size() ? facts[f].first : "build of Tenet";
    std::string values;
    if (f < ours.size() && f < theirs.size() && quotable(ours[f]) && quotable(theirs[f]))
      values = " ('" + theirs[f] + "' against '" + ours[f] + "')";
    throw TeamError("rank " + std::to_string(q) + " of this job has another " + what +
                    " than rank 0" + values +
                    "; every process must train the same model on the same data with the same "
                    "options");
  }
}

void Team::exchange(const float* send, const std::vector<int64_t>& send_counts,
                    const std::vector<int64_t>& send_offsets, float* recv,
                    const std::vector<int64_t>& recv_counts,
                    const std::vector<int64_t>& recv_offsets) {
  if (size_ == 1) {
    std::memcpy(recv + recv_offsets[0], send + send_offsets[0], size_t(send_counts[0]) * 4);
    return;
  }
#ifdef TENET_WITH_MPI
  const std::vector<int> sc = ints(send_counts), so = ints(send_offsets), rc = ints(recv_counts),
                         ro = ints(recv_offsets);
  check(MPI_Alltoallv(send, sc.data(), so.data(), MPI_FLOAT, recv, rc.data(), ro.data(), MPI_FLOAT,
                      MPI_COMM_WORLD),
        "the gradient exchange");
#else
  (void)recv_counts;
#endif
}

void Team::gather_parts(float* data, const std::vector<int64_t>& counts,
                        const std::vector<int64_t>& offsets) {
  if (size_ == 1) return;
#ifdef TENET_WITH_MPI
  const std::vector<int> c = ints(counts), o = ints(offsets);
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, c.data(), o.data(), MPI_FLOAT,
                       MPI_COMM_WORLD),
        "the gradient exchange");
#else
  (void)data, (void)counts, (void)offsets;
#endif
}

void Team::wait_for_leader() {
  if (size_ == 1) return;
#ifdef TENET_WITH_MPI
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "a wait for rank 0");
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "a wait for rank 0");
    if (done) return;
    sleep_a_millisecond();
  }
#endif
}

void Team::leader_does(const std::function<void()>& work) {
  if (size_ == 1) {
    work();  // the error as it is, for a run alone
    return;
  }
  std::string error;
  if (leader()) {
    try {
      work();
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "rank 0 failed";
    }
  }
  wait_for_leader();
  uint64_t length = error.size();
  broadcast(&length, sizeof length);
  error.resize(size_t(length));
  broadcast(error.data(), error.size());
  if (!error.empty()) throw TeamError(error);
}

void Team::abort(int code) {
#ifdef TENET_WITH_MPI
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

void Team::finish() {
#ifdef TENET_WITH_MPI
  if (mpi_ && owns_mpi_ && !finished_) MPI_Finalize();
#endif
  finished_ = true;
}

}  // namespace tenet::train
