/// \file
/// The training side of the `tenet` command line: `train`, `eval` and
/// `predict` for models that declare their roles in '# @...' directives
/// (train/model_spec.h, docs/training.md). Each takes the arguments after its name
/// and returns the exit status; user errors are thrown (CompileError,
/// BindError, UsageError) for main() to report.
#pragma once

#include <string>
#include <vector>

namespace tenet::cli {

/// `tenet train MODEL.tn [--data DIR] [--epochs N] [--batch B] ...`
int cmd_train(const std::vector<std::string>& args);
/// `tenet eval MODEL.tn --checkpoint CKPT [--data DIR]`: test accuracy and loss.
int cmd_eval(const std::vector<std::string>& args);
/// `tenet predict MODEL.tn --checkpoint CKPT (--images FILE | --data DIR) [--limit N]`
int cmd_predict(const std::vector<std::string>& args);

}  // namespace tenet::cli
