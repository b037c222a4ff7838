// The schedule pass: the loop orders and shared loop nests it records (one
// function per rule in tests/passes/schedule.ir, whose golden is beside
// it), and that it changes nothing but attributes.
#include "passes/schedule.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

void strip(std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    s.annotations.inner_loops = 0;
    s.annotations.nest = 0;
    s.annotations.jam = 0;
    s.annotations.lanes = 0;
    s.annotations.scan = 0;
    if (s.kind == StmtKind::Loop) strip(s.loop->body);
  }
}

class SchedulePass : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = testing::read_ir("schedule.ir");
    after_ = before_;
    for (Function& f : after_.functions) {
      f = f.clone();
      passes::schedule(f);
      verify(f, "schedule");
    }
  }
  /// The annotation `key` (as comments print it) of the statement defining
  /// `value` in `fn`, or "-".
  std::string attr(const std::string& fn, const std::string& value, const std::string& key) {
    const Stmt* s = testing::find_statement(after_.find(fn)->body, value);
    if (!s) return "(no statement)";
    for (const std::string& line : describe_annotations(*s))
      if (line.rfind(key + ": ", 0) == 0) return line.substr(key.size() + 2);
    return "-";
  }

  Module before_, after_;
};

TEST_F(SchedulePass, OnlyAttributesChange) {
  for (size_t i = 0; i < after_.functions.size(); ++i) {
    Function stripped = after_.functions[i].clone();
    strip(stripped.body);
    EXPECT_EQ(print(stripped), print(before_.functions[i]));
    testing::expect_same_outputs(before_.functions[i], after_.functions[i]);
  }
}

TEST_F(SchedulePass, MovesContiguousOutIndicesInsideStridedReductions) {
  EXPECT_EQ(attr("weighted_sum", "s", "order"), "b, t, k, e");
  EXPECT_EQ(attr("transposed", "out", "order"), "b, k, n");
  EXPECT_EQ(attr("row_norm", "n2", "order"), "-");      // d is contiguous already
  EXPECT_EQ(attr("strided_out", "out", "order"), "-");  // n is strided in w
  // the only out index goes inside too: vectorised over k, on one thread
  EXPECT_EQ(attr("column_sums", "out", "order"), "b, k");
}

TEST_F(SchedulePass, SharesLoopsWhereReadsStayInTheIteration) {
  EXPECT_EQ(attr("softmax", "m", "nest"), "-");
  EXPECT_EQ(attr("softmax", "e", "nest"), "n");
  EXPECT_EQ(attr("softmax", "t", "nest"), "n");
  EXPECT_EQ(attr("softmax", "p", "nest"), "n");
  EXPECT_EQ(attr("shifted", "b", "nest"), "-");  // reads a at n + 1
  EXPECT_EQ(attr("extents", "b", "nest"), "-");  // (K, N) after (N, K)
  EXPECT_EQ(attr("looped", "y.1", "nest"), "n");
}

TEST_F(SchedulePass, NestsFollowEachStatementsOuterLoops) {
  EXPECT_EQ(attr("step", "e", "nest"), "b, t");
  EXPECT_EQ(attr("step", "s", "order"), "b, t, k, e");
  EXPECT_EQ(attr("step", "s", "nest"), "b");  // its only outer loop
  EXPECT_EQ(attr("step", "n2", "nest"), "b");
  EXPECT_EQ(attr("step", "v", "nest"), "b, k");  // reads s, which shares only b with n2
  EXPECT_EQ(attr("step", "vw", "nest"), "-");    // a GEMM
  EXPECT_EQ(attr("step", "vw", "order"), "-");
  EXPECT_EQ(attr("step", "a", "nest"), "-");  // after the GEMM: a new nest
  EXPECT_EQ(attr("step", "total", "nest"), "b");
}

TEST_F(SchedulePass, JamsTheAccumulatorsOfLongSums) {
  EXPECT_EQ(attr("jammed", "mean", "jam"), "j by 8");
  EXPECT_EQ(attr("jammed", "centred", "nest"), "b");  // not the jammed loop over j
  EXPECT_EQ(attr("jammed", "var", "jam"), "j by 8");
  EXPECT_EQ(attr("jammed", "var", "nest"), "b");
  EXPECT_EQ(attr("jammed", "peak", "jam"), "j by 4");  // 12 rows: a tile of 4
  EXPECT_EQ(attr("jammed", "short", "jam"), "-");      // 5 terms
  EXPECT_EQ(attr("jammed", "batch", "jam"), "j by 8");
  EXPECT_EQ(attr("jammed", "window", "jam"), "-");     // a condition on j
  EXPECT_EQ(attr("jammed", "relu", "jam"), "j by 8");  // a condition on x(b, j, r) only
  // batch and relu: the same tile, out extents and reduce ranges, neither
  // reading the other: one pass, sharing the jammed loop over j too.
  EXPECT_EQ(attr("jammed", "batch", "nest"), "-");
  EXPECT_EQ(attr("jammed", "relu", "nest"), "j");
  EXPECT_EQ(attr("jammed", "peak", "nest"), "b");  // a tile of 4 after one of 8: its own pass
  EXPECT_EQ(attr("step", "n2", "jam"), "-");       // 10 classes: no tile of 4 or 8
  EXPECT_EQ(attr("softmax", "t", "jam"), "-");     // a symbolic extent
}

TEST_F(SchedulePass, SplitsMaximaAndFloat32SumsAlongAContiguousRowIntoLanes) {
  for (const char* stmt : {"peak", "low", "ints", "total"}) {
    EXPECT_EQ(attr("lanes", stmt, "lanes"), "r by 16") << stmt;
    EXPECT_EQ(attr("lanes", stmt, "jam"), "-") << stmt;  // lanes rather than rows jammed
  }
  EXPECT_EQ(attr("lanes", "column", "lanes"), "-");  // r strided: j accumulates inside instead
  EXPECT_EQ(attr("lanes", "column", "order"), "b, r, j");
  EXPECT_EQ(attr("lanes", "short", "lanes"), "-");   // 5 terms
  EXPECT_EQ(attr("lanes", "border", "lanes"), "-");  // a condition on r
  EXPECT_EQ(attr("lanes", "wide", "lanes"), "-");    // a float64 sum: its order is fixed
  EXPECT_EQ(attr("lanes", "wide", "jam"), "j by 8");
}

TEST_F(SchedulePass, LoopsWithAWindowsBorderAreNotShared) {
  EXPECT_EQ(attr("padded_pool", "z", "nest"), "i, j");  // not k, l: y peels them
  EXPECT_EQ(attr("lanes", "border", "nest"), "b, j");   // j's interior is j = 0 only: not peeled
}

TEST_F(SchedulePass, TrianglesScanTheirMovingIndexInnermostAndUnshared) {
  EXPECT_EQ(attr("scans", "s", "scan"), "i");
  EXPECT_EQ(attr("scans", "t", "nest"), "b");
  EXPECT_EQ(attr("scans", "r", "scan"), "j");
  EXPECT_EQ(attr("scans", "w", "scan"), "-");
}

TEST_F(SchedulePass, RunningTwiceGivesTheSameSchedule) {
  Module again = after_;
  for (Function& f : again.functions) {
    f = f.clone();
    passes::schedule(f);
  }
  EXPECT_EQ(print(again), print(after_));
}

}  // namespace
}  // namespace tenet::ir
