// `tenet opt FILE.ir --passes=a,b,c`: passes on printed IR, to stdout or -o;
// what it prints is what the pass tests' goldens hold (tests/passes/).
#include <gtest/gtest.h>

#include "tests/cli/cli_util.h"

using tenet::testing::Cli;
using tenet::testing::CommandResult;
using tenet::testing::read_file;
using tenet::testing::source_path;

namespace {

TEST_F(Cli, OptRunsNamedPassesOnPrintedIr) {
  CommandResult r = run_in_source("opt tests/passes/dce.ir --passes=dce");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(source_path("tests/passes/dce.ir.golden")));

  // -o writes the same text; no passes prints the module back.
  CommandResult to_file =
      run_in_source("opt tests/passes/dce.ir --passes=dce -o " + (dir_ / "out.ir").string());
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(read_file((dir_ / "out.ir").string()), r.out);
  CommandResult again = run_in_dir("opt out.ir");
  EXPECT_EQ(again.out, r.out);

  // Passes run in the order given, repeats allowed: dce after dce changes nothing.
  CommandResult twice = run_in_source("opt tests/passes/dce.ir --passes=dce,dce");
  EXPECT_EQ(twice.out, r.out);
}

TEST_F(Cli, OptErrors) {
  write("bad.ir", "func f[N](%x: float32[N]) {\n  return %y\n}\n");
  CommandResult bad = run_in_dir("opt bad.ir --passes=dce");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err.rfind("bad.ir:2:", 0), 0u) << bad.err;
  CommandResult unknown = run_in_source("opt tests/passes/dce.ir --passes=dce,fusion");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err,
            "error: unknown pass 'fusion' (passes: simplify, dce, hoist, index_split, "
            "contraction, fuse, schedule)\n");
  EXPECT_EQ(unknown.out, "");
  CommandResult missing = run_in_dir("opt nosuch.ir --passes=dce");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("error: cannot open 'nosuch.ir'", 0), 0u) << missing.err;
}

}  // namespace
