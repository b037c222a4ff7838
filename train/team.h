/// \file
/// The processes that train one model together: the ranks of
/// MPI_COMM_WORLD when an MPI launcher (mpirun, mpiexec, srun) started this
/// process and the runtime was built with MPI (TENET_WITH_MPI), else this
/// process alone. What data_parallel.h and the trainers need of MPI, and
/// nothing more: every call is a collective of the whole team.
///
/// Expects: collectives called by every rank in the same order with
/// matching sizes (the trainers do, from the same options, checked at start
/// by TeamCheck).
/// Guarantees: MPI is started only when a launcher asked for it, so a build
/// with MPI runs alone exactly as one without; a peer lost in a collective
/// (a rank killed, a broken link) is a TeamError, not a hang of this rank
/// (MPI_ERRORS_RETURN; mpirun also ends the job when a rank dies); waiting
/// for the leader (wait_for_leader) sleeps instead of spinning, so rank 0's
/// evaluation and checkpoint writes get the cores. The library needs only
/// the standard library and, with TENET_WITH_MPI, an MPI-3 implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/error.h"

namespace tenet::train {

/// A failure that every rank of the team sees alike (the same check on the
/// same values, or the leader's failure broadcast): the leader reports it,
/// the others end quietly. `lost` marks a peer lost in a collective, after
/// which the team can only abort.
class TeamError : public BindError {
 public:
  TeamError(const std::string& message, bool lost = false) : BindError(message), lost_(lost) {}
  bool lost() const { return lost_; }

 private:
  bool lost_;
};

/// How many processes an MPI launcher started, from its environment
/// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE); 1 when none did.
int launched_ranks();

class Team {
 public:
  /// This process's team, made on first use: MPI_Init when launched_ranks()
  /// > 1 (a BindError saying how to build with MPI when this runtime has
  /// none), else a team of one.
  static Team& world();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool leader() const { return rank_ == 0; }
  /// Ranks on this machine (a team of one: 1). Unless OMP_NUM_THREADS is
  /// set, each rank's OpenMP threads are its share of the machine's cores.
  int local_size() const { return local_size_; }

  /// The leader's `bytes` bytes at `data` into every rank's.
  void broadcast(void* data, size_t bytes);
  /// Every rank's text, in rank order.
  std::vector<std::string> all_texts(const std::string& text);
  /// All-to-all of float32 runs: rank r sends send[send_offsets[q] ..+
  /// send_counts[q]) to rank q and receives rank q's into recv[recv_offsets[q] ..+ recv_counts[q]).
  void exchange(const float* send, const std::vector<int64_t>& send_counts,
                const std::vector<int64_t>& send_offsets, float* recv,
                const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_offsets);
  /// Each rank's part data[offsets[q] ..+ counts[q]) into every rank's `data`.
  void gather_parts(float* data, const std::vector<int64_t>& counts,
                    const std::vector<int64_t>& offsets);
  /// Checks that every rank holds the same value of each fact (what it is,
  /// its value), given in the same order: a TeamError on every rank naming
  /// the first rank and fact that differ from rank 0's.
  void agree(const std::vector<std::pair<std::string, std::string>>& facts);
  /// A barrier that sleeps (1 ms polls) while the leader works alone.
  void wait_for_leader();
  /// Runs `work` on the leader alone; the others wait for it. When it
  /// throws, every rank throws a TeamError with its message.
  void leader_does(const std::function<void()>& work);
  /// Ends the whole job (MPI_Abort) with `code`; a team of one exits.
  [[noreturn]] void abort(int code);
  /// MPI_Finalize, once, at the end of a run that succeeded or failed alike everywhere.
  void finish();

 private:
  Team();
  int rank_ = 0, size_ = 1, local_size_ = 1;
  // MPI's state: unread in a build without MPI
  [[maybe_unused]] bool mpi_ = false, owns_mpi_ = false;
  bool finished_ = false;
};

}  // namespace tenet::train
