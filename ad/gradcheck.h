/// \file
/// Gradient checking: AD gradients (differentiate() run in the interpreter in
/// float64) against central finite differences of the original function
/// (also float64). Used by the AD tests and by `tenet gradcheck`.
///
/// The checked scalar is L = sum over differentiated outputs o of
/// <c_o, o(x)>: with a scalar request (no vjp) c = 1 for the one output; in
/// vector-Jacobian mode the cotangents c_o are random (seeded). For each
/// checked entry x_e of each differentiated input, with h = step * max(1, |x_e|):
///   fd = (L(x_e + h) - L(x_e - h)) / 2h,   one-sided: (L(x+h) - L(x)) / h, (L(x) - L(x-h)) / h
///   rel = |fd - ad| / max(|fd|, |ad|, 1e-3 * scale)   scale: the input's largest |fd| or |ad|
/// An entry whose one-sided derivatives disagree (by more than kink_tolerance
/// relative) lies at or near a non-differentiable point: a ReLU/abs kink, an
/// fmax/fmin or max-reduction tie. There the central difference is no
/// derivative at all, so the entry is not compared with it; it passes when the
/// AD value lies between the two one-sided derivatives (a valid one-sided
/// gradient), and the report carries a warning naming the entry.
///
/// Nothing non-finite passes: an entry whose gradient or any of its finite
/// differences is NaN or infinite fails (its relative error is infinite, and
/// InputCheck::problem names it), and a loss L that is not finite at the
/// checked inputs fails the whole check (GradcheckReport::errors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::ad {

struct GradcheckOptions {
  GradRequest request;
  /// Sizes for random inputs (every size parameter); unused with `inputs`.
  ir::SizeBindings sizes;
  uint64_t seed = 1;
  /// Inputs to check at (all of fn's inputs, in order); empty: random ones
  /// from ir::random_inputs(fn, sizes, seed), uniform in [-1, 1).
  std::vector<Tensor> inputs;
  double step = 1e-6;
  /// On the max relative error. Central differences in float64 with h = 1e-6
  /// are accurate to ~1e-8 of an input's gradient scale, i.e. ~1e-5 at the
  /// 1e-3 floor of the denominator; an AD mistake is far larger.
  double tolerance = 1e-4;
  double kink_tolerance = 1e-3;  // relative gap between one-sided derivatives
  /// Check at most this many entries per input (0: all), evenly spread.
  int64_t max_entries = 0;
  /// A gradient function to check instead of differentiate(fn, request), with
  /// the same interface (tests plant wrong ones; a pipeline may pass an
  /// optimised gradient).
  const ir::Function* gradient = nullptr;
};

struct InputCheck {
  std::string input;
  int64_t checked = 0;  // entries compared
  int64_t kinks = 0;    // entries at non-differentiable points
  double max_abs = 0;
  double max_rel = 0;
  int64_t worst = -1;  // flat index of the worst entry
  double worst_ad = 0, worst_fd = 0;
  /// The first entry with a non-finite gradient or finite difference, e.g.
  /// "x[2]: gradient 0.5, finite differences nan (central), nan and nan
  /// (one-sided)"; empty when every value was finite.
  std::string problem;
  bool pass = true;
};

struct GradcheckReport {
  std::vector<InputCheck> inputs;
  std::vector<std::string> warnings;
  /// Why the check failed beyond the table: a loss that is not finite, each
  /// input's `problem`.
  std::vector<std::string> errors;
  bool pass = true;
};

/// Throws what differentiate() and the interpreter throw (CompileError, BindError),
/// and a BindError for options out of range (a step that is not a positive
/// finite number, a NaN or negative tolerance, a negative max_entries).
GradcheckReport gradcheck(const ir::Function& fn, const GradcheckOptions& options);

/// The report as a table: input, entries, max abs err, max rel err, pass;
/// then the warnings and the errors, one per line ("warning: ...", "error: ...").
std::string format_report(const GradcheckReport& report);

}  // namespace tenet::ad
