/// \file
/// What a standalone training project knows of its model: the table that
/// `tenet emit --train` generates (<model>_model.cpp) from the model file's
/// directives and its compiled functions, read by standalone/model.h.
///
/// Two programs, each a function of the generated code (codegen/cpp.h, the
/// packed entry points): the gradient of the training loss (its outputs
/// include the loss and the gradient of every parameter) and the evaluation
/// function (its outputs include the class scores). Their only size
/// parameter is the batch size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/types.h"

namespace tenet::standalone {

/// What a buffer of a program is to the model.
enum class Role {
  Parameter,  // input: the parameter `param`
  Image,      // input: the images, float32 [B, 1, 28, 28]
  Label,      // input: the labels, int32 [B]
  Dropout,    // input: a dropout mask with drop probability `dropout_p`
  Loss,       // output: the loss, a float32 scalar
  Scores,     // output: the class scores, float32 [B, classes]
  Gradient,   // output: the gradient of the parameter `param`
  Other,      // output the model does not read
};

/// A dimension of kBatch is the batch size.
inline constexpr int64_t kBatch = -1;

struct BufferInfo {
  std::string name;
  Role role = Role::Other;
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;  // kBatch for the batch dimension
  int param = -1;              // Parameter, Gradient
  double dropout_p = 0;        // Dropout
};

struct ProgramInfo {
  std::string name;  // the function's name in the model file
  /// The packed entry points (codegen/cpp.h): sizes = {batch}; buffers: the
  /// inputs, then the outputs, in the order of the tables below.
  int (*run)(const int64_t* sizes, void* const* buffers, void* workspace) = nullptr;
  int64_t (*workspace_bytes)(const int64_t* sizes) = nullptr;
  const char* (*error)() = nullptr;  // the message of the last failure
  std::vector<BufferInfo> inputs, outputs;
};

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string init;  // the @param initialiser (train/init.h)
};

struct ModelInfo {
  std::string name;  // the model file's stem
  std::vector<ParamInfo> params;
  int64_t classes = 0;  // the scores' second dimension
  ProgramInfo train, eval;
};

/// The table of the project's model (<model>_model.cpp).
const ModelInfo& model_info();

}  // namespace tenet::standalone
