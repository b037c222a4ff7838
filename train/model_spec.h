/// \file
/// What a model file tells the trainer, in structured comments (the language
/// ignores comments; docs/training.md, "Models", is the reference):
///
///   # @train FN loss=OUTPUT [scores=OUTPUT]   the training entry and its loss
///   # @eval FN scores=OUTPUT [loss=OUTPUT]    the evaluation / prediction entry
///   # @data image=INPUT label=INPUT           the inputs the data fills
///   # @dropout INPUT p=P                      a dropout mask input
///   # @param INPUT INITIALISER                a parameter and its initialiser
///   # @defaults KEY=VALUE ...                 default hyper-parameters (options.h)
///
/// A directive is a line whose first non-blank characters are `#` and then
/// (after optional blanks) `@`. Everything after a further `#` on the line
/// is a comment.
///
/// Expects: the file's text and its checked module (lang::check).
/// Guarantees: parse_model_spec returns a spec in which every input of the
/// training function has exactly one role (data, dropout mask or parameter),
/// every parameter has an initialiser that parses and a constant shape, the
/// evaluation function's inputs are a subset of those roles with the same
/// shapes, the named outputs exist with the right types, and every default
/// is an option of the table (options.h) with a value in its range. Anything else is a CompileError
/// at the directive (or at the function, for an input that has no role), rendered like every other
/// diagnostic: `file:line:col: error: ...`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "train/init.h"
#include "train/options.h"

namespace tenet::train {

/// An entry function and the outputs the trainer reads from it.
struct EntrySpec {
  std::string function;
  std::string loss;    // a float scalar output ("" when not given)
  std::string scores;  // a float32 [B, 10] output: class scores ("" when not given)
};

struct DropoutSpec {
  std::string input;
  double p = 0;  // the probability of dropping an element, in [0, 1)
};

struct ParamSpec {
  std::string input;
  std::vector<int64_t> shape;
  InitSpec init;
};

struct ModelSpec {
  EntrySpec train, eval;
  std::string image, label;  // input names (label may be absent from the eval function)
  std::string batch_size;    // the size parameter of the batch (image's first dimension)
  std::vector<DropoutSpec> dropouts;
  std::vector<ParamSpec> params;  // in the training function's input order
  OptionValues defaults;          // @defaults: valid values of training options

  const DropoutSpec* find_dropout(const std::string& input) const;
  const ParamSpec* find_param(const std::string& input) const;
};

/// Reads and validates the directives of `file` against its checked module.
ModelSpec parse_model_spec(const SourceFile& file, const ir::Module& module);

}  // namespace tenet::train
