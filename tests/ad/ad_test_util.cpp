#include "tests/ad/ad_test_util.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "lang/check.h"

namespace tenet::ad::testing {

ir::Function compile_fn(const std::string& source, const std::string& name) {
  SourceFile file("test.tn", source);
  ir::Module m = lang::compile_source(file);
  const ir::Function* fn = m.find(name);
  if (!fn) throw std::runtime_error("no function " + name);
  return *fn;
}

std::string grad_ir(const std::string& source, const std::string& name, const GradRequest& req) {
  return ir::print(differentiate(compile_fn(source, name), req));
}

GradcheckReport expect_gradcheck(const std::string& source, const std::string& name,
                                 const GradcheckOptions& options) {
  ir::Function fn = compile_fn(source, name);
  GradcheckReport report = gradcheck(fn, options);
  EXPECT_TRUE(report.pass) << name << ":\n"
                           << format_report(report) << "gradient IR:\n"
                           << ir::print(differentiate(fn, options.request));
  return report;
}

Tensor tensor(std::vector<int64_t> shape, std::vector<double> values) {
  Tensor t(ElemType::F32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
  return t;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

}  // namespace tenet::ad::testing
