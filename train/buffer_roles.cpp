// The roles of a model's buffers (buffer_roles.h), for both trainers.
#include "train/buffer_roles.h"

namespace tenet::train {

namespace {

int param_index(const ModelSpec& spec, const std::string& input) {
  for (size_t i = 0; i < spec.params.size(); ++i)
    if (spec.params[i].input == input) return int(i);
  return -1;
}

BufferRole input_role(const ModelSpec& spec, const std::string& name) {
  if (name == spec.image) return {Role::Image};
  if (name == spec.label) return {Role::Label};
  if (const DropoutSpec* d = spec.find_dropout(name)) return {Role::Dropout, -1, d->p};
  if (int i = param_index(spec, name); i >= 0) return {Role::Parameter, i};
  return {Role::Other};
}

}  // namespace

ProgramRoles program_roles(const ModelSpec& spec, const ir::Function& fn, bool training) {
  ProgramRoles roles;
  for (const ir::ValuePtr& in : fn.inputs) roles.inputs.push_back(input_role(spec, in->name));
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const std::string& name = fn.output_names[i];
    BufferRole role;
    if (training && name == spec.train.loss) {
      role.role = Role::Loss;
    } else if (!training && name == spec.eval.scores) {
      role.role = Role::Scores;
    } else if (const int k = fn.gradient_of(i); training && k >= 0) {
      const BufferRole& of = roles.inputs[size_t(k)];
      if (of.role == Role::Parameter) role = {Role::Gradient, of.param};
    }
    roles.outputs.push_back(role);
  }
  return roles;
}

const char* role_name(Role role) {
  switch (role) {
    case Role::Parameter:
      return "Parameter";
    case Role::Image:
      return "Image";
    case Role::Label:
      return "Label";
    case Role::Dropout:
      return "Dropout";
    case Role::Loss:
      return "Loss";
    case Role::Scores:
      return "Scores";
    case Role::Gradient:
      return "Gradient";
    case Role::Other:
      return "Other";
  }
  return "Other";
}

}  // namespace tenet::train
