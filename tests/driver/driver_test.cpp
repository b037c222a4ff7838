// The driver: its stage table, dumps after every stage (IR sections parse
// back), stop and resume, the request options, and the trainer's one request
// (a gradient and an unchanged function compiled together, against the
// interpreter).
#include "driver/driver.h"
#include "driver/target.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "driver/front_end.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "jit/jit.h"
#include "lower/loops.h"
#include "lower/lowered.h"
#include "support/error.h"

namespace tenet::driver {
namespace {

const char* const kModel = R"(def model(float(B, I) x, float(O, I) w, int32(B) label) -> (p, loss) {
  z(b, o) +=! x(b, i) * w(o, i)
  m(b) max=! z(b, o)
  e(b, o) = exp(z(b, o) - m(b))
  s(b) +=! e(b, o)
  p(b, o) = e(b, o) / s(b)
  loss +=! select(label(b) == o, -log(p(b, o)), 0)
}
def predict(float(B, I) x, float(O, I) w) -> (z) {
  z(b, o) +=! x(b, i) * w(o, i)
}
)";

Request request(std::vector<FunctionRequest> functions = {}) {
  Request r;
  r.path = "model.tn";
  r.text = kModel;
  r.functions = std::move(functions);
  return r;
}

std::vector<std::string> stage_list() {
  std::vector<std::string> names;
  for (const Stage& s : stages()) names.push_back(s.name);
  return names;
}

TEST(Driver, ListsTheStagesInOrder) {
  EXPECT_EQ(stage_list(),
            (std::vector<std::string>{"parse", "check", "retype", "ad", "simplify", "dce", "hoist",
                                      "index_split", "contraction", "fuse", "split", "schedule",
                                      "liveness", "lower_gemm", "lower_scatter", "lower_conv",
                                      "plan_memory", "lower_loops", "cpp"}));
  EXPECT_EQ(
      stage_names(),
      "parse, check, retype, ad, simplify, dce, hoist, index_split, contraction, fuse, split, "
      "schedule, liveness, lower_gemm, lower_scatter, lower_conv, plan_memory, lower_loops, cpp");
}

// The default target is cpp; its table is the shared stages with its own
// pass (schedule) after the shared passes and its printer (cpp) last.
TEST(Driver, TargetsChooseTheirStages) {
  EXPECT_EQ(target_names(), "cpp, cuda-emulated, cuda");
  EXPECT_EQ(std::string(Request{}.target), "cpp");
  EXPECT_EQ(&stages("cpp"), &stages());
  EXPECT_EQ(std::string(stages().back().name), "cpp");
  EXPECT_EQ(stages().back().form, Form::Code);
  EXPECT_EQ(find_stage("schedule", "cpp").form, Form::Optimised);
  // The GPU targets: no CPU schedule; their kernels mapped, then printed.
  for (const char* gpu : {"cuda", "cuda-emulated"}) {
    EXPECT_THROW(find_stage("schedule", gpu), UsageError) << gpu;
    EXPECT_EQ(find_stage("map_kernels", gpu).form, Form::Loops) << gpu;
    EXPECT_EQ(stages(gpu).back().form, Form::Code) << gpu;
  }
  EXPECT_EQ(std::string(stages("cuda").back().name), "cuda");
  EXPECT_EQ(std::string(stages("cuda-emulated").back().name), "emulate");
  const std::string listed = " (targets: cpp, cuda-emulated, cuda)";
  try {
    find_target("metal");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown target 'metal'" + listed);
  }
  Request r = request({{"model", std::nullopt}});
  r.target = "metal";
  EXPECT_THROW(compile(r), UsageError);
  EXPECT_THROW(stages("metal"), UsageError);
}

// --dump-after=all: one section per stage; the source's and the C++'s are
// what `print --stage parse|cpp` shows, every other one parses back as IR.
TEST(Driver, DumpsAfterEveryStage) {
  std::ostringstream dump;
  Request r = request({{"model", ad::GradRequest{}}});
  r.dump_after = {"all"};
  r.dump_to = &dump;
  Compilation c = compile(r);
  ASSERT_TRUE(c.cpp);
  EXPECT_EQ(c.stage, "cpp");

  std::vector<std::string> sections;
  const std::string text = dump.str();
  for (size_t at = text.find("// ----- "); at != std::string::npos;) {
    size_t title_end = text.find(" -----\n", at);
    ASSERT_NE(title_end, std::string::npos);
    std::string title = text.substr(at + 9, title_end - at - 9);  // "IR after dce"
    size_t next = text.find("\n// ----- ", title_end);
    if (title.starts_with("C++ after ")) next = std::string::npos;  // the unit's own markers
    std::string body = text.substr(
        title_end + 7, next == std::string::npos ? std::string::npos : next + 1 - (title_end + 7));
    sections.push_back(title.substr(title.rfind(' ') + 1));
    if (title.starts_with("IR after ")) {
      ir::Module parsed = ir::parse_ir(SourceFile(sections.back() + ".ir", body));
      EXPECT_EQ(parsed.functions.size(), title == "IR after check" ? 2u : 1u) << title;
    } else if (title.starts_with("source after ")) {
      EXPECT_EQ(body, ast::print(*c.ast));
    } else if (title.starts_with("lowered after ")) {
      EXPECT_TRUE(body.starts_with("lowered model_grad:")) << title << "\n" << body;
      if (title == "lowered after plan_memory") {
        EXPECT_EQ(body, lower::print(c.lowered->functions.at(0)));
      }
    } else if (title.starts_with("loops after ")) {
      const lower::LoweredFunction& f = c.lowered->functions.at(0);
      EXPECT_EQ(body, lower::print(f.loops, *f.function));
    } else {
      EXPECT_EQ(title, "C++ after cpp");
      EXPECT_EQ(body, print_cpp(*c.cpp));
    }
    at = next == std::string::npos ? next : next + 1;
  }
  EXPECT_EQ(sections, stage_list());
  // The last IR section is the optimised gradient.
  EXPECT_NE(text.find("// ----- IR after schedule -----\n" + ir::print(c.optimised)),
            std::string::npos);
}

TEST(Driver, UnknownStageNamesAreUsageErrors) {
  const std::string listed =
      " (stages: parse, check, retype, ad, simplify, dce, hoist, index_split, contraction, fuse, "
      "split, schedule, liveness, lower_gemm, lower_scatter, lower_conv, plan_memory, lower_loops, "
      "cpp)";
  Request r = request();
  r.dump_after = {"simplfy"};
  try {
    compile(r);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown stage 'simplfy'" + listed);
  }
  r.dump_after.clear();
  r.stop_after = "lower";
  EXPECT_THROW(compile(r), UsageError);
  r.stop_after.clear();
  r.skip_passes = {"ad"};
  try {
    compile(r);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "'ad' is not an optimisation pass");
  }
  ::setenv("TENET_DUMP_AFTER", "checkk", 1);
  EXPECT_THROW(compile(request()), UsageError);
  ::unsetenv("TENET_DUMP_AFTER");
}

TEST(Driver, StopsAfterAStageAndResumesFromIt) {
  Request r = request();
  r.stop_after = "check";
  Compilation front = compile(r);
  EXPECT_EQ(front.stage, "check");
  EXPECT_TRUE(front.derived.functions.empty());
  EXPECT_EQ(front.ir().functions.size(), 2u);

  Request rest = request({{"predict", std::nullopt}});
  rest.emit_code = true;
  Compilation resumed = compile(rest, front);
  Compilation whole = compile(rest);
  EXPECT_EQ(resumed.checked, front.checked);  // shared, not recomputed
  EXPECT_EQ(resumed.function_names(), std::vector<std::string>{"predict"});
  EXPECT_EQ(print_cpp(*resumed.cpp), print_cpp(*whole.cpp));
  EXPECT_EQ(ir::print(front.ir()), ir::print(*whole.checked));  // front unchanged

  // A stage already run: nothing more runs.
  Request parse_only = request();
  parse_only.stop_after = "parse";
  EXPECT_EQ(compile(parse_only, front).stage, "check");
}

// Callers name stages through driver::stage (front_end.h): each constant is a
// stage of the table, of the form its callers expect; front_end() stops
// after check whatever the request asks.
TEST(Driver, StageConstantsNameStagesOfTheTable) {
  EXPECT_EQ(find_stage(stage::kParse).form, Form::Ast);
  EXPECT_EQ(find_stage(stage::kCheck).form, Form::Checked);
  EXPECT_EQ(find_stage(stage::kRetype).form, Form::Derived);
  EXPECT_EQ(find_stage(stage::kAd).form, Form::Derived);
  Request r = request({{"model", ad::GradRequest{}}});
  r.stop_after = stage::kAd;
  const Compilation front = front_end(r);
  EXPECT_EQ(front.stage, stage::kCheck);
  EXPECT_TRUE(front.derived.functions.empty());
  EXPECT_EQ(compile(r, front).derived.functions.at(0).name, "model_grad");
}

// The function a caller means when it names none (the CLI's --fn, Python's
// entry): the one def no other def calls.
TEST(Driver, TheDefaultEntryIsTheOneDefNoOtherCalls) {
  auto entry_of = [](const std::string& text) {
    Request r;
    r.path = "f.tn";
    r.text = text;
    return default_entry(front_end(r), "--fn NAME").name;
  };
  const std::string helper = "def helper(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n";
  EXPECT_EQ(entry_of(helper), "helper");
  EXPECT_EQ(entry_of(helper + "def model(float(N) x) -> (z) {\n  for it in 0:2 {\n"
                              "    y = helper(x)\n  }\n  z(i) = y(i)\n}\n"),
            "model");
  try {
    entry_of(kModel);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.tn has several entry functions (model, predict): name one with --fn NAME");
  }
  try {
    entry_of("");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "f.tn defines no function");
  }
}

TEST(Driver, UnknownFunctionIsACompileError) {
  try {
    compile(request({{"nope", std::nullopt}}));
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model.tn: error: no function named 'nope' (functions: model, predict)");
  }
}

// Without an output named, the only float scalar among several outputs.
TEST(Driver, DifferentiatesTheOnlyFloatScalarByDefault) {
  Request r = request({{"model", ad::GradRequest{}}});
  r.stop_after = "ad";
  const Compilation c = compile(r);
  const ir::Function& g = c.derived.functions.at(0);
  EXPECT_EQ(g.name, "model_grad");
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"p", "loss", "d_x", "d_w"}));
}

TEST(Driver, RetypesFloats) {
  Request r = request({{"predict", std::nullopt}});
  r.float_type = ElemType::F64;
  Compilation c = compile(r);
  EXPECT_EQ(c.optimised.functions.at(0).inputs.at(0)->type, ElemType::F64);
  EXPECT_EQ(c.optimised.functions.at(0).outputs.at(0)->type, ElemType::F64);
}

TEST(Driver, SkipsPasses) {
  Request r = request({{"predict", std::nullopt}});
  r.emit_code = true;
  EXPECT_TRUE(compile(r).cpp->uses_gemm);
  r.skip_passes = {"contraction"};
  EXPECT_FALSE(compile(r).cpp->uses_gemm);
}

// The trainer's request: the gradient of `model` for `loss` with respect to
// `w` (not the data), and `predict` unchanged, optimised and compiled into
// one unit; both agree with the interpreter.
TEST(Driver, TrainersRequestCompilesTogether) {
  ad::GradRequest grad;
  grad.wrt = {"w"};
  grad.output = "loss";
  Compilation c = compile(request({{"model", grad}, {"predict", std::nullopt}}));
  ASSERT_EQ(c.function_names(), (std::vector<std::string>{"model_grad", "predict"}));
  jit::JitOptions jit;
  std::vector<jit::CompiledFunction> compiled =
      driver::jit_compile_together(c.optimised, c.function_names(), jit);
  ASSERT_EQ(compiled.size(), 2u);
  const ir::SizeBindings sizes = {{"B", 3}, {"I", 5}, {"O", 4}};
  for (size_t k = 0; k < 2; ++k) {
    const ir::Function& fn = c.optimised.functions[k];
    std::vector<Tensor> inputs = ir::random_inputs(fn, sizes, 7);
    if (k == 0)  // labels in range
      for (int64_t b = 0; b < 3; ++b) inputs[2].set(b, double(b));
    std::vector<Tensor> want = ir::interpret(fn, inputs, sizes);
    std::vector<Tensor> got = compiled[k].run(inputs, sizes);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o)
      for (int64_t i = 0; i < want[o].numel(); ++i)
        EXPECT_NEAR(got[o].get(i), want[o].get(i), 1e-4 * (1 + std::fabs(want[o].get(i))))
            << fn.name << " output " << fn.output_names[o] << " at " << i;
  }
}

}  // namespace
}  // namespace tenet::driver
