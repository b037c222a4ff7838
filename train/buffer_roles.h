/// \file
/// What each buffer of a model's two programs is to a trainer: the roles of
/// standalone/model_info.h (a parameter, the images, the labels, a dropout
/// mask, the loss, the scores, the gradient of a parameter, or nothing it
/// reads). Both trainers bind their buffers by them: TrainableModel (the JIT)
/// and the table of a standalone project (standalone_project.h).
///
/// Expects: a spec from parse_model_spec and one of its functions as
/// compiled (the training function differentiated: its gradients are marked
/// by AD, ir::Function::gradient_of). Guarantees: a gradient's role comes
/// from that mark, never from the output's name; an input the directives give
/// no role is Other (the standalone emitter refuses it; the spec's checks
/// keep it from the JIT trainer).
#pragma once

#include <vector>

#include "ir/ir.h"
#include "standalone/model_info.h"
#include "train/model_spec.h"

namespace tenet::train {

using standalone::Role;

struct BufferRole {
  Role role = Role::Other;
  int param = -1;        // Parameter, Gradient: the position in ModelSpec::params
  double dropout_p = 0;  // Dropout
};

struct ProgramRoles {
  std::vector<BufferRole> inputs, outputs;  // as fn.inputs, fn.outputs
};

/// The roles of `fn`'s buffers, as the training program (`training`: the
/// loss is spec.train's, gradients count) or the evaluation program (the
/// scores are spec.eval's).
ProgramRoles program_roles(const ModelSpec& spec, const ir::Function& fn, bool training);

/// The Role's enumerator ("Parameter"), for generated tables.
const char* role_name(Role role);

}  // namespace tenet::train
