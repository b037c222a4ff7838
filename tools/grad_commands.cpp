// The gradient commands (grad_commands.h): `print --grad`, `run --grad`,
// `gradcheck`. The driver differentiates the checker's IR of the chosen
// function and optimises the gradient like any function before it runs.
#include "tools/grad_commands.h"

#include <cmath>
#include <cstdio>
#include <iostream>

#include "ad/grad.h"
#include "ad/gradcheck.h"
#include "driver/driver.h"
#include "driver/front_end.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "jit/jit.h"
#include "lang/ast.h"
#include "lang/unparse.h"
#include "lower/loops.h"
#include "support/npy.h"
#include "tools/program.h"

namespace tenet::cli {

namespace {

/// Compiled float32 gradients must agree with the interpreter's float32 ones
/// to this fraction of the tensor's largest magnitude. Both run the same
/// program in float32; they differ where the C++ math library rounds
/// exp/log/tanh/pow differently from the interpreter's (an ulp, ~6e-8
/// relative) and where the optimiser gives a contraction to a blocked GEMM
/// that sums in another order (an error growing like sqrt(n) ulps for n
/// terms: ~1e-6 for the sums of these tests). 1e-4 leaves a wide margin for
/// that, while a wrong index, a lost term or a race shows up at 1e-2 or more.
constexpr double kCompiledTolerance = 1e-4;
/// Tensors smaller than this in magnitude are compared to it instead, so that
/// gradients that are zero up to rounding (e.g. of a sum of a softmax) do not
/// turn one ulp of noise into a relative error of 1.
constexpr double kMagnitudeFloor = 1e-6;

struct Gradient {
  driver::Compilation front;              // parsed and checked
  const ir::Function* forward = nullptr;  // in front.checked
  /// The gradient: `derived` as AD made it, `optimised` what runs.
  driver::Request request;
  driver::Compilation compiled;
  const ir::Function& fn() const { return compiled.optimised.functions.at(0); }
};

ad::GradRequest grad_request(const Args& a) {
  ad::GradRequest req;
  req.wrt = parse_list(a.get("wrt"));
  req.output = a.get("output");
  req.vjp = a.is_set("vjp");
  if (a.is_set("half")) {  // `tenet print` only
    const std::string half = a.get("half");
    if (half == "forward") {
      req.half = ad::VjpHalf::Forward;
    } else if (half == "backward") {
      req.half = ad::VjpHalf::Backward;
    } else {
      throw UsageError("--half " + half + ": expected forward or backward");
    }
  }
  return req;
}

Gradient load_gradient(const Args& a, const std::string& fn_name,
                       const std::string& stop_after = "") {
  const std::string path = require_file(a);
  // print's --target, or the --backend of the commands that run code.
  const std::string target = code_target(a);
  Gradient g;
  g.front = front_end(path, a.get("dump-after"), target);
  g.forward = &select_function(g.front, fn_name);
  driver::Request r = request(path, a.get("dump-after"), target);
  r.functions = {{g.forward->name, grad_request(a)}};
  r.static_sizes = static_sizes(a);
  r.stop_after = stop_after;
  r.emit_code =
      !stop_after.empty() && driver::find_stage(stop_after, target).form == driver::Form::Code;
  r.cpp.origin = path;
  g.compiled = compile_after(g.front, r);
  g.request = std::move(r);
  return g;
}

std::vector<Tensor> gradient_inputs(const Args& a, const ir::Function& grad,
                                    const ir::SizeBindings& given) {
  std::vector<Tensor> inputs;
  if (a.is_set("inputs")) {
    for (const auto& in : grad.inputs)
      inputs.push_back(read_npy(a.get("inputs") + "/" + in->name + ".npy"));
    return inputs;
  }
  require_sizes(grad, given, true);
  // Input i (cotangents last) is random_tensor(seed + i): the forward inputs
  // are the ones plain `run` draws for the same seed.
  return ir::random_inputs(grad, given, parse_seed(a.get("seed")));
}

struct Comparison {
  std::string name;
  double max_abs = 0;
  double rel = 0;       // max_abs over the reference's largest magnitude (floored)
  std::string problem;  // a value that is not finite, or shapes that differ
  bool pass = true;
};

std::string sci(double v) {
  if (std::isnan(v)) return "nan";  // printf may say "-nan"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// A NaN or infinity in either tensor fails the comparison: agreeing on
/// them says nothing of the gradient, and an infinite magnitude would make
/// every relative error 0.
Comparison compare_tensors(const std::string& name, const Tensor& got, const Tensor& want) {
  Comparison c;
  c.name = name;
  if (got.shape() != want.shape())
    c.problem =
        "the compiled program gives " + got.describe() + ", the interpreter " + want.describe();
  double magnitude = 0;
  for (int64_t i = 0; i < want.numel() && c.problem.empty(); ++i) {
    double w = want.get(i), x = got.get(i);
    if (!std::isfinite(w) || !std::isfinite(x)) {
      c.problem = "not finite at flat index " + std::to_string(i) + ": compiled " + sci(x) +
                  ", interpreted " + sci(w);
      break;
    }
    c.max_abs = std::max(c.max_abs, std::fabs(x - w));
    magnitude = std::max(magnitude, std::fabs(w));
  }
  if (!c.problem.empty()) c.max_abs = INFINITY;
  c.rel = c.max_abs / std::max(magnitude, kMagnitudeFloor);
  c.pass = c.problem.empty() && c.rel <= kCompiledTolerance;
  return c;
}

/// One row of the compiled-versus-interpreter table, laid out like
/// ad::format_report's rows.
std::string row(const std::string& name, const std::string& abs, const std::string& rel,
                const std::string& pass) {
  char line[200];
  std::snprintf(line, sizeof line, "%-16s %12s %12s  %s\n", name.c_str(), abs.c_str(), rel.c_str(),
                pass.c_str());
  return line;
}

}  // namespace

void add_grad_request_options(Args& a) {
  a.option("wrt", "A,B", "differentiate with respect to these inputs (default: every float input)");
  a.option("output", "NAME",
           "the output to differentiate (default: the only output, or the only float scalar "
           "among several)");
  a.flag("vjp", "vector-Jacobian products: one cotangent input d_<output> per output");
}

int print_gradient(const Args& a) {
  std::string stage = a.is_set("stage") ? a.get("stage") : "source";
  if (stage == "loops") stage = "lower_loops";  // the loop tree's short name
  bool whole = stage == "source" || stage == "ir";
  const std::string target = a.get("target");
  if (!whole) driver::find_stage(stage, target);  // an unknown stage before any work
  Gradient g = load_gradient(a, a.get("grad"), whole ? "" : stage);
  const driver::Compilation& c = g.compiled;
  if (stage == "source" && a.is_set("half")) {
    // The half as cut (after the optimisation passes, which chose what it saves).
    std::cout << lang::unparse(c.optimised.functions.at(0));
  } else if (stage == "source") {
    // What AD derived, before the optimiser annotates or rewrites it.
    std::cout << lang::unparse(c.derived.functions.at(0));
  } else if (stage == driver::stage::kParse) {
    std::cout << ast::print(*c.ast);
  } else if (g.request.emit_code) {
    std::cout << driver::find_target(target).print(c);
  } else if (c.lowered && driver::find_stage(stage, target).form == driver::Form::Loops) {
    for (const lower::LoweredFunction& f : c.lowered->functions)
      std::cout << lower::print(f.loops, *f.function);
  } else if (c.lowered) {
    for (const lower::LoweredFunction& f : c.lowered->functions) std::cout << lower::print(f);
  } else {
    // check shows FN as the checker made it; later stages the one function requested.
    const ir::Module& m = c.ir();
    std::cout << ir::print(stage == driver::stage::kCheck ? *m.find(g.forward->name)
                                                          : m.functions.at(0));
  }
  return 0;
}

int run_gradient(const Args& a) {
  Gradient g = load_gradient(a, a.get("fn"));
  const ir::Function& grad = g.fn();
  ir::SizeBindings given = parse_sizes(a.get("sizes"));
  std::vector<Tensor> inputs = gradient_inputs(a, grad, given);

  std::string backend = a.get("backend");
  std::vector<Tensor> outputs;
  if (backend == "interp") {
    ir::InterpOptions options;
    if (a.is_set("float64")) options.float_type = ElemType::F64;
    outputs = ir::interpret(grad, inputs, given, options);
  } else {
    if (a.is_set("float64")) throw UsageError("--float64 applies to --backend interp only");
    jit::JitOptions options;
    options.verbose = a.is_set("verbose");
    outputs = driver::load(g.request, g.compiled, options).at(0).run(inputs, given);
  }

  size_t n_forward_inputs = g.forward->inputs.size();
  size_t n_forward_outputs = g.forward->outputs.size();
  std::cout << "function " << grad.name << " (backend " << backend << ")\n";
  for (size_t i = 0; i < grad.inputs.size(); ++i)
    std::cout << (i < n_forward_inputs ? "input " : "cotangent ") << grad.inputs[i]->name << ": "
              << inputs[i].describe() << "\n";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = grad.output_names[i];
    print_tensor_summary(std::cout, i < n_forward_outputs ? "output" : "gradient", name,
                         outputs[i]);
    if (a.is_set("save")) write_npy(a.get("save") + "/" + name + ".npy", outputs[i]);
  }
  return 0;
}

int cmd_gradcheck(const std::vector<std::string>& argv) {
  Args a("gradcheck", "FILE [options]",
         "Checks the gradients of a function on random inputs (from --seed):\n"
         "  1. the interpreter's gradients in float64 against central finite\n"
         "     differences (entries at kinks and ties are warned about, and pass\n"
         "     when they lie between the one-sided derivatives);\n"
         "  2. the compiled float32 program (C++ JIT, or --backend's) against the\n"
         "     interpreter in float32: every output and gradient within 1e-4 of its\n"
         "     largest value.\n"
         "Prints a table for each; the exit status is 1 if anything fails.");
  a.option("fn", "NAME", "the function (needed when FILE has several entry functions)");
  a.option("sizes", "N=V,...", "size parameters, e.g. B=2,N=3");
  a.option("seed", "S", "seed of the random inputs (and cotangents)", "1");
  add_grad_request_options(a);
  a.option("max-entries", "N", "check at most N entries per input, evenly spread (0: all)", "0");
  a.option("tolerance", "T", "largest relative error against finite differences", "1e-4");
  a.option("backend", "NAME", "the code target of step 2: " + driver::target_names(),
           driver::kDefaultTarget);
  a.flag("verbose", "print compiler commands and cache hits");
  add_common_options(a);
  if (!a.parse(argv)) return 0;
  if (a.get("backend") == "interp")
    throw UsageError("--backend of gradcheck is a code target (" + driver::target_names() +
                     "): the interpreter is what it checks against");

  // Differentiating first reports a bad request (integer input, non-scalar
  // output, unknown name) with its source location before anything runs.
  Gradient g = load_gradient(a, a.get("fn"));
  const ir::Function& fn = *g.forward;
  ir::SizeBindings sizes = parse_sizes(a.get("sizes"));
  require_sizes(g.fn(), sizes, false);

  ad::GradcheckOptions options;
  options.request = grad_request(a);
  options.sizes = sizes;
  options.seed = parse_seed(a.get("seed"));
  char* end = nullptr;
  std::string max_entries = a.get("max-entries");
  options.max_entries = std::strtoll(max_entries.c_str(), &end, 10);
  if (max_entries.empty() || *end != '\0' || options.max_entries < 0)
    throw UsageError("--max-entries expects a non-negative integer");
  std::string tolerance = a.get("tolerance");
  options.tolerance = std::strtod(tolerance.c_str(), &end);
  if (tolerance.empty() || *end != '\0' || !(options.tolerance > 0))
    throw UsageError("--tolerance expects a positive number");

  ad::GradcheckReport report = ad::gradcheck(fn, options);
  std::cout << "gradcheck " << fn.name << ": interpreter (float64) against central differences\n"
            << ad::format_report(report);

  // The compiled float32 program against the interpreter's float32 run.
  const ir::Function& grad = g.fn();
  std::vector<Tensor> inputs = ir::random_inputs(grad, sizes, options.seed);
  std::vector<Tensor> want = ir::interpret(grad, inputs, sizes);
  jit::JitOptions jit;
  jit.verbose = a.is_set("verbose");
  std::vector<Tensor> got = driver::load(g.request, g.compiled, jit).at(0).run(inputs, sizes);
  const std::string& target = g.request.target;
  std::cout << "\ncompiled (" << (target == driver::kDefaultTarget ? "C++" : target)
            << ", float32) against the interpreter (float32)\n"
            << row("output/gradient", "max abs err", "rel to max", "pass");
  bool compiled_pass = true;
  std::vector<std::string> problems;
  for (size_t i = 0; i < want.size(); ++i) {
    Comparison c = compare_tensors(grad.output_names[i], got[i], want[i]);
    compiled_pass &= c.pass;
    std::cout << row(c.name, sci(c.max_abs), sci(c.rel), c.pass ? "yes" : "NO");
    if (!c.problem.empty()) problems.push_back(c.name + ": " + c.problem);
  }
  for (const std::string& p : problems) std::cout << "error: " << p << "\n";
  bool pass = report.pass && compiled_pass;
  std::cout << "\ngradcheck " << fn.name << ": " << (pass ? "ok" : "FAILED") << "\n";
  return pass ? 0 : 1;
}

}  // namespace tenet::cli
