/// \file
/// Helpers for the checker tests: compile source text, or compile it
/// expecting a CompileError and get its rendered text.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::testing {

/// compile_source on `text` (reported as file `path`); fails the test on a
/// CompileError and returns an empty module.
ir::Module check_ok(const std::string& text, const std::string& path = "test.tn");
/// The CompileError text of compiling `text`; fails the test if it compiles.
std::string check_error(const std::string& text, const std::string& path = "test.tn");
/// ir::print of the function `name` after compiling `text`.
std::string check_print(const std::string& text, const std::string& name);
/// The outputs of the last function of `text`, interpreted in float64.
std::vector<Tensor> check_run(const std::string& text, const std::vector<Tensor>& inputs);

}  // namespace tenet::testing

/// Compiling `source` fails with an error whose text contains `message`.
#define EXPECT_ERROR(source, message)                                      \
  do {                                                                     \
    std::string text_ = ::tenet::testing::check_error(source);             \
    EXPECT_NE(text_.find(message), std::string::npos) << "in:\n" << text_; \
  } while (0)
