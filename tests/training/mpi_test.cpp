// `tenet train` under mpirun (train/team.h, train/data_parallel.h): 2 and 3
// ranks give the bits of one process taking the same shards; a one-process
// run without shards differs only by rounding; ranks that disagree are
// refused at start; a killed rank ends the job, and the run resumes exactly
// on another number of processes. Without MPI in the build, an MPI launch is
// refused with what to install.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/training/training_util.h"

namespace tenet::testing {
namespace {

// A short run on the bundled sample: 300 images in batches of 32 (the last
// one of 12), dropout on, Adam.
const char* kRun =
    "train models/mnist_cnn.tn --epochs 1 --limit-train 300 --limit-test 100 "
    "--batch 32 --log-every 2 --seed 3";

#ifdef TENET_MPIEXEC

/// The whole file's bytes.
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The log's rows without their timing columns.
std::vector<std::string> log_lines(const std::string& path) {
  std::vector<std::string> lines;
  for (const LogRow& row : read_log(path)) lines.push_back(row.line);
  return lines;
}

class Mpi : public Training {
 protected:
  /// `tenet ARGS` as `ranks` processes of one job on this machine.
  CommandResult mpirun(int ranks, const std::string& args) const {
    return run_command(launcher(ranks) + tenet_binary() + " " + args);
  }
  /// mpirun's command line up to the program: from the source tree, one
  /// OpenMP thread per rank, allowed as root (CI's containers).
  std::string launcher(int ranks) const {
    return "cd " + source_path("") +
           " && OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
           "OMPI_MCA_rmaps_base_oversubscribe=1 " TENET_MPIEXEC " --oversubscribe -np " +
           std::to_string(ranks) + " ";
  }
};

TEST_F(Mpi, RanksGiveTheBitsOfOneProcessTakingTheSameShards) {
  CommandResult r = tenet(std::string(kRun) + " --shards 6 --out " + path("one"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("data parallel: 6 shards per batch (5 examples each), 1 processes"),
            std::string::npos)
      << r.out;
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string out = path("ranks" + std::to_string(ranks));
    r = mpirun(ranks, std::string(kRun) + " --shards 6 --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // Rank 0 alone speaks.
    EXPECT_EQ(r.out.find("model models/mnist_cnn.tn"), r.out.rfind("model models/mnist_cnn.tn"))
        << r.out;
    // The same checkpoint, byte for byte: parameters, Adam's moments, step,
    // options (shards=6) and progress tallies.
    EXPECT_TRUE(file_bytes(out + "/last.safetensors") == file_bytes(path("one/last.safetensors")));
    EXPECT_EQ(log_lines(out + "/log.csv"), log_lines(path("one/log.csv")));
  }
  // Without --shards each process takes one: 2 ranks are `--shards 2`.
  r = mpirun(2, std::string(kRun) + " --out " + path("default2"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = tenet(std::string(kRun) + " --shards 2 --out " + path("one2"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(file_bytes(path("default2/last.safetensors")) ==
              file_bytes(path("one2/last.safetensors")));
  // Against one process on whole batches: rounding only. With SGD (Adam
  // turns rounding in near-zero gradients into steps of up to lr), measured
  // 2.5e-7 of each parameter's largest element after these 10 steps.
  const std::string sgd = std::string(kRun) + " --optimizer sgd --lr 0.05 --momentum 0.9";
  r = tenet(sgd + " --out " + path("whole"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = tenet(sgd + " --shards 2 --out " + path("halves"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const train::NamedTensors whole = checkpoint_parameters(path("whole/last.safetensors"));
  const train::NamedTensors halves = checkpoint_parameters(path("halves/last.safetensors"));
  ASSERT_EQ(whole.size(), halves.size());
  for (size_t k = 0; k < whole.size(); ++k) {
    SCOPED_TRACE(whole[k].name);
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < whole[k].tensor.numel(); ++i) {
      scale = std::max(scale, std::abs(whole[k].tensor.get(i)));
      worst = std::max(worst, std::abs(whole[k].tensor.get(i) - halves[k].tensor.get(i)));
    }
    EXPECT_LE(worst, 2e-6 * scale);
    EXPECT_GT(worst, 0.0);  // the sums do differ: the shards are not a no-op
  }
}

TEST_F(Mpi, RanksThatDisagreeAreRefusedAtStart) {
  const std::string run = std::string(kRun) + " --out " + path("run");
  CommandResult r = run_command(launcher(1) + tenet_binary() + " " + run + " : -np 1 " +
                                tenet_binary() + " " + run + " --lr 0.002");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: rank 1 of this job has another value of lr than rank 0 ('0.002' "
                       "against '0.001'); every process must train the same model on the same "
                       "data with the same options"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("run/last.safetensors")));
  r = mpirun(2, std::string(kRun) + " --shards 3 --out " + path("run"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: --shards 3 cannot be shared by 2 processes: give a multiple of 2"),
            std::string::npos)
      << r.err;
}

// A rank killed mid-run ends the job (mpirun says which); the run resumes
// from its last checkpoint, here on one process, and ends with the bits of
// an uninterrupted run.
TEST_F(Mpi, AKilledRankEndsTheJobAndTheRunResumesExactly) {
  const std::string run =
      "train models/mnist_cnn.tn --epochs 1 --batch 16 --limit-test 100 "
      "--checkpoint-every 8 --shards 2";
  const std::string dir = path("killed");
  const std::string script = launcher(2) + "sh -c 'echo $$ > " + path("pid") +
                             ".$OMPI_COMM_WORLD_RANK; exec " + tenet_binary() + " " + run +
                             " --out " + dir + "' > " + path("job.out") + " 2> " + path("job.err") +
                             " &\n" +
                             "job=$!\n"
                             "for i in $(seq 1 1200); do [ -f " +
                             dir +
                             "/last.safetensors ] && break; sleep 0.05; done\n"
                             "kill -9 $(cat " +
                             path("pid") +
                             ".1)\n"
                             "wait $job; echo \"job status $?\"\n";
  CommandResult r = run_command("bash " + write("kill.sh", script));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("job status 0"), std::string::npos) << r.out;
  const std::string err = file_bytes(path("job.err"));
  EXPECT_NE(err.find("process rank 1"), std::string::npos) << err;
  EXPECT_NE(err.find("signal 9"), std::string::npos) << err;
  ASSERT_TRUE(std::filesystem::exists(dir + "/last.safetensors"));

  r = tenet("train models/mnist_cnn.tn --resume " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("resuming from " + dir), std::string::npos) << r.out;
  r = tenet(run + " --out " + path("whole"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(file_bytes(dir + "/last.safetensors") == file_bytes(path("whole/last.safetensors")));
}

#else

// This build has no MPI: a launch by mpirun (as its environment shows) is
// refused with what to install, before any work.
TEST_F(Training, AnMpiLaunchWithoutMpiSaysHowToGetIt) {
  CommandResult r = run_command("cd " + source_path("") + " && OMPI_COMM_WORLD_SIZE=2 " +
                                tenet_binary() + " " + kRun + " --out " + path("run"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "error: an MPI launcher started this program as one of 2 processes, but it was built "
            "without MPI; install an MPI (Debian: apt-get install libopenmpi-dev openmpi-bin) "
            "and build again (CMake finds it), or run it as one process\n");
  EXPECT_FALSE(std::filesystem::exists(path("run")));
}

#endif

}  // namespace
}  // namespace tenet::testing
