// TC's reduction hints `<=> ...` (issue 15): accepted, ignored, and
// `tenet check` says so with a warning at the hint (exit status 0).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_util.h"

namespace tenet::testing {
namespace {

class TcAnnotation : public Cli {};

TEST_F(TcAnnotation, CheckWarnsAndSucceeds) {
  write("mm.tn", R"(def mm(float(M, K) A, float(K, N) B) -> (C, D) {
  C(i, j) +=! A(i, k) * B(k, j) <=> matmul(A, B)
  D(i) +=! C(i, j) where j in 0:N <=> rowsum(C)
}
)");
  CommandResult r = run_in_dir("check mm.tn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "mm(A: float32[M, K], B: float32[K, N]) -> (C: float32[M, N], D: float32[M])\n"
            "mm.tn: ok\n");
  EXPECT_EQ(r.err,
            "mm.tn:2:33: warning: the reduction hint '<=> ...' is ignored: Tenet chooses how to "
            "compute reductions itself\n"
            "    C(i, j) +=! A(i, k) * B(k, j) <=> matmul(A, B)\n"
            "                                  ^~~~~~~~~~~~~~~~\n"
            "mm.tn:3:35: warning: the reduction hint '<=> ...' is ignored: Tenet chooses how to "
            "compute reductions itself\n"
            "    D(i) +=! C(i, j) where j in 0:N <=> rowsum(C)\n"
            "                                    ^~~~~~~~~~~~~\n");
  // The hint changes nothing: the program runs as without it.
  write("plain.tn", R"(def mm(float(M, K) A, float(K, N) B) -> (C, D) {
  C(i, j) +=! A(i, k) * B(k, j)
  D(i) +=! C(i, j) where j in 0:N
}
)");
  CommandResult with = run_in_dir("run mm.tn --sizes M=2,K=3,N=2");
  CommandResult without = run_in_dir("run plain.tn --sizes M=2,K=3,N=2");
  EXPECT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(checksum_lines(with.out), checksum_lines(without.out));
}

TEST_F(TcAnnotation, MalformedHintIsASyntaxError) {
  write("bad.tn", "def f(float(N) x) -> (y) {\n  y(i) = x(i) <=>\n}\n");
  CommandResult r = run_in_dir("check bad.tn");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.tn:3:1: error: expected an expression, found '}'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tenet::testing
