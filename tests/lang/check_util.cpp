#include "tests/lang/check_util.h"

#include <gtest/gtest.h>

#include "ir/interp.h"
#include "ir/printer.h"
#include "lang/check.h"
#include "support/error.h"

namespace tenet::testing {

ir::Module check_ok(const std::string& text, const std::string& path) {
  try {
    return lang::compile_source(SourceFile(path, text));
  } catch (const CompileError& e) {
    ADD_FAILURE() << "unexpected compile error:\n" << e.what();
  }
  return {};
}

std::vector<Tensor> check_run(const std::string& text, const std::vector<Tensor>& inputs) {
  ir::Module m = check_ok(text);
  if (m.functions.empty()) return {};
  return ir::interpret(m.functions.back(), inputs, {}, {ElemType::F64});
}

std::string check_error(const std::string& text, const std::string& path) {
  try {
    lang::compile_source(SourceFile(path, text));
  } catch (const CompileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a compile error for:\n" << text;
  return "";
}

std::string check_print(const std::string& text, const std::string& name) {
  ir::Module m = check_ok(text);
  const ir::Function* f = m.find(name);
  if (!f) {
    ADD_FAILURE() << "no function " << name;
    return "";
  }
  return ir::print(*f);
}

}  // namespace tenet::testing
