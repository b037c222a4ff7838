/// \file
/// Helpers for the operator-zoo suite: the table of zoo programs, inputs at
/// chosen scales, and the comparison of a compiled gradient with the
/// interpreter's.
///
/// Expects: programs under models/zoo/ that compile. Guarantees: inputs are
/// deterministic in the seed, so a failure reproduces exactly.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::zoo {

/// Float input `input` is drawn uniformly from [lo, hi) instead of [-1, 1).
struct InputRange {
  std::string input;
  double lo, hi;
};

/// One row of the zoo table: a function of a models/zoo/ file, the sizes to
/// check it at, and what to differentiate.
struct ZooCase {
  std::string file;  // stem: models/zoo/<file>.tn
  std::string fn;
  ir::SizeBindings sizes;
  ad::GradRequest request;
  std::vector<InputRange> ranges;  // default [-1, 1) for every float input
  int64_t int_hi = 10;             // integer inputs (labels) in [0, int_hi)
  int64_t max_entries = 0;         // finite-difference entries per input (0: all)
};

/// GoogleTest prints a parameter with this: "models/zoo/<file>.tn, <fn>".
void PrintTo(const ZooCase& c, std::ostream* os);

/// The zoo table (zoo_table.cpp), one row per program.
const std::vector<ZooCase>& zoo_table();

/// A unique C identifier for a case: "<file>" or "<file>_<fn>" when the file
/// has another function name (used for test names and the compiled symbols).
std::string case_id(const ZooCase& c);

/// models/zoo/<file>.tn compiled by the front end (cached per file).
const ir::Module& zoo_module(const std::string& file);

/// Float inputs uniform in their range (default [-1, 1)), integers in
/// [0, int_hi); input i uses seed + i, like ir::random_inputs.
std::vector<Tensor> make_inputs(const ir::Function& fn, const ir::SizeBindings& sizes,
                                uint64_t seed, const std::vector<InputRange>& ranges = {},
                                int64_t int_hi = 10);

/// The inputs of `grad` (a gradient of `primal`): the primal `inputs`, then
/// a random float cotangent (uniform in [-1, 1)) for each further input.
std::vector<Tensor> with_cotangents(const ir::Function& primal, const ir::Function& grad,
                                    const std::vector<Tensor>& inputs, uint64_t seed);

/// max |actual - expected| / max |expected| over the tensor (0 for an
/// all-zero expected tensor that is matched exactly; NaN anywhere gives
/// infinity). Shapes must match.
double max_rel_to_peak(const Tensor& actual, const Tensor& expected);
/// The same values bit for bit (NaN matching NaN).
bool bitwise_equal(const Tensor& a, const Tensor& b);

/// The case's request as vector-Jacobian products of the same outputs.
ad::GradRequest vjp_request(const ZooCase& c);

}  // namespace tenet::zoo
