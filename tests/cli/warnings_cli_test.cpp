// The warning channel (issue 15): the checker's warnings and notes reach the
// user through the driver's Compilation, and every command that compiles
// prints them on stderr, rendered like errors, and goes on (exit status 0).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_util.h"

namespace tenet::testing {
namespace {

class Warnings : public Cli {};

// A reduction hint (a warning) and an index with uses of two sizes (a note).
const char* kProgram = R"(def f(float(N) x, float(M) y) -> (z, s) {
  z(i) = x(i) + y(i)
  s +=! z(i) * z(i) <=> sum(z)
}
)";

const char* kPrinted =
    "w.tn:2:5: note: index 'i' ranges over [0, min(M, N)), the smallest size of its uses (as in "
    "TC)\n"
    "    z(i) = x(i) + y(i)\n"
    "      ^\n"
    "w.tn:2:12: note: dimension 0 of 'x' has size N\n"
    "    z(i) = x(i) + y(i)\n"
    "             ^\n"
    "w.tn:2:19: note: dimension 0 of 'y' has size M\n"
    "    z(i) = x(i) + y(i)\n"
    "                    ^\n"
    "w.tn:3:21: warning: the reduction hint '<=> ...' is ignored: Tenet chooses how to compute "
    "reductions itself\n"
    "    s +=! z(i) * z(i) <=> sum(z)\n"
    "                      ^~~~~~~~~~\n";

TEST_F(Warnings, EveryCommandThatCompilesPrintsThemOnce) {
  write("w.tn", kProgram);
  for (const std::string& command :
       {std::string("check w.tn"), std::string("run w.tn --sizes N=3,M=2"),
        std::string("run w.tn --sizes N=3,M=2 --backend cpp"),
        std::string("run w.tn --grad --output s --sizes N=3,M=2"),
        std::string("print w.tn --stage check"),
        std::string("print w.tn --grad f --output s --stage ad"),
        std::string("gradcheck w.tn --output s --sizes N=3,M=2"),
        std::string("emit w.tn --target cpp -o out")}) {
    CommandResult r = run_in_dir(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    EXPECT_EQ(r.err, kPrinted) << command;
  }
}

TEST_F(Warnings, AProgramWithErrorsReportsOnlyTheErrors) {
  write("bad.tn", R"(def f(float(N) x, float(M) y) -> (z) {
  z(i) = x(i) + y(i) <=> add(x, y)
  w(i) = q(i)
}
)");
  CommandResult r = run_in_dir("check bad.tn");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "bad.tn:3:10: error: unknown name 'q'\n"
            "    w(i) = q(i)\n"
            "           ^\n");
}

TEST_F(Warnings, ACallDoesNotRepeatTheCalleesWarnings) {
  write("calls.tn", R"(def add(float(N) x, float(M) y) -> (z) {
  z(i) = x(i) + y(i)
}
def g(float(K) a) -> (b, c) {
  b = add(a, a)
  c = add(a, a)
}
)");
  CommandResult r = run_in_dir("check calls.tn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "calls.tn:2:5: note: index 'i' ranges over [0, min(M, N)), the smallest size of its "
            "uses (as in TC)\n"
            "    z(i) = x(i) + y(i)\n"
            "      ^\n"
            "calls.tn:2:12: note: dimension 0 of 'x' has size N\n"
            "    z(i) = x(i) + y(i)\n"
            "             ^\n"
            "calls.tn:2:19: note: dimension 0 of 'y' has size M\n"
            "    z(i) = x(i) + y(i)\n"
            "                    ^\n");
}

}  // namespace
}  // namespace tenet::testing
