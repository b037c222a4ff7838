// The programs Tenet ships settle how OpenMP's idle threads wait
// (runtime/tenet_parallel.h, settle_openmp_waiting): where the user set
// neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY, `tenet` starts itself again with
// GOMP_SPINCOUNT=3000; the user's own setting is left alone. What the process
// saw is read from the compiler its JIT starts (TENET_CXX: a script that
// writes its environment down, then runs the real compiler); a fresh cache per
// run makes the JIT compile.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "tests/cli/cli_util.h"

namespace tenet::testing {
namespace {

class OpenmpEnv : public Cli {
 protected:
  /// What the compiler saw when `tenet run` ran with `env` (after `env -u` of
  /// the variables concerned): one line per compiler start.
  std::string seen_with(const std::string& env, const std::string& tag) {
    const std::string seen = (dir_ / ("seen-" + tag)).string();
    const std::string cxx = write("cxx-" + tag + ".sh",
                                  "#!/bin/sh\necho \"spin=${GOMP_SPINCOUNT-unset} "
                                  "policy=${OMP_WAIT_POLICY-unset}\" >> " +
                                      seen + "\nexec c++ \"$@\"\n");
    ::chmod(cxx.c_str(), 0755);
    const CommandResult r = run_in_source(
        "run models/softmax.tn --backend cpp --sizes N=2,K=3",
        "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u TENET_OPENMP_SETTLED " + env +
            " TENET_CXX=" + cxx + " TENET_CACHE_DIR=" + (dir_ / ("cache-" + tag)).string());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return read_file(seen);
  }
};

std::string lines_of(const std::string& line, const std::string& text) {
  EXPECT_FALSE(text.empty());
  std::string expected;
  for (size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) expected += line + "\n";
  return expected;
}

TEST_F(OpenmpEnv, IdleThreadsSpinBrieflyUnlessTheUserSaysOtherwise) {
  const std::string settled = seen_with("", "settled");
  EXPECT_EQ(settled, lines_of("spin=3000 policy=unset", settled));
  const std::string own = seen_with("GOMP_SPINCOUNT=77", "own");
  EXPECT_EQ(own, lines_of("spin=77 policy=unset", own));
  const std::string passive = seen_with("OMP_WAIT_POLICY=passive", "passive");
  EXPECT_EQ(passive, lines_of("spin=unset policy=passive", passive));
}

}  // namespace
}  // namespace tenet::testing
