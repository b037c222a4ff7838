/// \file
/// What the Python module binds: a checked program and the functions derived
/// from it (the entry as declared, its float64 variant, its gradients), each
/// compiled by the JIT or run by the interpreter.
///
/// Expects: source text in the Tenet language. Guarantees: a CheckedProgram exists
/// only for source that parses and checks (else CompileError with the rendered
/// diagnostics); every Variant names an entry of it (else CompileError listing
/// the functions); a request to differentiate it is checked against the
/// source (CompileError pointing at the function or value).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "ad/gradcheck.h"
#include "driver/driver.h"
#include "ir/ir.h"
#include "jit/jit.h"
#include "support/diagnostics.h"
#include "support/tensor.h"

namespace tenet::python {

/// Which function of a program to run: the entry, in float64 or as declared,
/// optionally differentiated.
struct Variant {
  std::string entry;
  /// Every float value (inputs, intermediates, constants, casts) in float64:
  /// the language's `float` follows the dtype of the caller's tensors.
  bool float64 = false;
  std::optional<ad::GradRequest> grad;
  /// Size parameters compiled in as constants (driver::Request::static_sizes).
  ir::SizeBindings static_sizes = {};
};

/// A tensor of a function's interface: name, element type, symbolic shape.
struct TensorInfo {
  std::string name;
  std::string type;                 // "float32"
  std::vector<std::string> shape;   // SizeExpr::str() per dimension: "B", "(H - 9) / 2 + 1"
  std::vector<ir::SizeExpr> sizes;  // the same, as the compiler holds them (for Python: trees)
  /// An output that updates an input in place (ir::Function::updated_input):
  /// that input's position; -1 otherwise.
  int updates = -1;
  /// An output that is the gradient of an input (ir::Function::gradient_of,
  /// set by AD): that input's position; -1 otherwise.
  int gradient_of = -1;
};

struct FunctionInfo {
  std::string name;
  std::vector<std::string> size_params;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

class Kernel;

class CheckedProgram {
 public:
  /// Parses and checks; throws CompileError.
  CheckedProgram(const std::string& source, const std::string& filename);

  std::vector<std::string> function_names() const;
  /// The entry when the caller names none (driver::default_entry: the one def
  /// no other def calls); a UsageError saying why there is none.
  std::string default_entry() const;
  /// The checker's warnings and notes, each rendered as the CLI prints it
  /// ("file:line:col: warning: ...", the source line and a caret); Python
  /// issues them as tenet.CompileWarning.
  std::vector<std::string> warnings() const;

  /// The IR of a variant, as the checker and AD make it (before optimisation).
  ir::Function derive(const Variant& v) const;
  FunctionInfo info(const Variant& v) const;
  /// The variant as source in the language (lang/unparse.h).
  std::string unparse(const Variant& v) const;
  /// Optimises and JIT-compiles the variant (a cache hit runs no compiler).
  /// The variant printed by the `cuda` target (its kernels: CppUnit::kernels).
  codegen::CppUnit cuda_unit(const Variant& v) const;
  std::unique_ptr<Kernel> compile(const Variant& v, const jit::JitOptions& options,
                                  const std::string& target = driver::kDefaultTarget) const;
  /// Runs the variant in the reference interpreter (float64 math for a float64 variant).
  std::vector<Tensor> interpret(const Variant& v, const std::vector<Tensor>& inputs,
                                const ir::SizeBindings& given) const;
  /// ir::random_inputs for the variant: input i uniform in [-1, 1) from seed + i.
  std::vector<Tensor> random_inputs(const Variant& v, const ir::SizeBindings& sizes,
                                    uint64_t seed) const;
  /// Finite differences against AD in the float64 interpreter (ad/gradcheck.h).
  ad::GradcheckReport gradcheck(const std::string& entry,
                                const ad::GradcheckOptions& options) const;

 private:
  /// The variant through the driver's stages after `check`, up to `stop_after`
  /// (empty: every optimisation pass).
  driver::Request request(const Variant& v, const std::string& stop_after) const;
  driver::Compilation compile_variant(const Variant& v, const std::string& stop_after) const;

  driver::Compilation front_;  // parsed and checked
};

FunctionInfo describe(const ir::Function& fn);

}  // namespace tenet::python
