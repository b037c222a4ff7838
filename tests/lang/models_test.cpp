// Every example program in models/ compiles through the whole front end;
// the flagship ones have the signatures they promise, and dynamic routing
// computes what Sabour et al. describe.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "lang/check.h"
#include "support/tensor.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

namespace fs = std::filesystem;

ir::Module compile_model(const std::string& name) {
  std::string relative = "models/" + name;
  return compile_source(
      SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative))));
}

TEST(Models, EveryModelCompiles) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path("models")))
    if (entry.path().extension() == ".tn") names.push_back(entry.path().filename().string());
  EXPECT_GE(names.size(), 10u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    try {
      ir::Module m = compile_model(name);
      EXPECT_FALSE(m.functions.empty());
    } catch (const CompileError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

std::string shape(const ir::ValuePtr& v) {
  std::string out = std::string(type_name(v->type)) + "[";
  for (size_t i = 0; i < v->shape.size(); ++i) out += (i ? ", " : "") + v->shape[i].str();
  return out + "]";
}

TEST(Models, CapsNetSignature) {
  ir::Module m = compile_model("capsnet.tn");
  const ir::Function* f = m.find("capsnet");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->size_params, (std::vector<std::string>{"B"}));
  ASSERT_EQ(f->outputs.size(), 3u);
  EXPECT_EQ(shape(f->outputs[0]), "float32[B, 10]");
  EXPECT_EQ(shape(f->outputs[1]), "float32[B, 28, 28]");
  EXPECT_EQ(shape(f->outputs[2]), "float32[]");
  // Inlined routing: one loop of 3 iterations carrying the logits.
  int loops = 0;
  for (const ir::Stmt& s : f->body) {
    if (s.kind != ir::StmtKind::Loop) continue;
    ++loops;
    EXPECT_EQ(s.loop->trip, 3);
    ASSERT_GE(s.loop->carried.size(), 1u);
    EXPECT_EQ(shape(s.loop->carried[0].init), "float32[B, 32, 6, 6, 10]");
  }
  EXPECT_EQ(loops, 1);
  // The capsule predictions: 1152 input capsules x 10 digit capsules x 16.
  bool found = false;
  for (const ir::Stmt& s : f->body)
    if (s.kind == ir::StmtKind::Compute && s.compute.result->name == "uh") {
      found = true;
      EXPECT_EQ(shape(s.compute.result), "float32[B, 32, 6, 6, 10, 16]");
    }
  EXPECT_TRUE(found);
}

TEST(Models, RoutingMatchesTheAlgorithm) {
  const int64_t B = 2, I = 3, J = 2, E = 4;
  Tensor uh = random_tensor(ElemType::F32, {B, I, J, E}, 7);
  ir::Module m = compile_model("routing.tn");
  const ir::Function* f = m.find("routing");
  ASSERT_NE(f, nullptr);
  std::vector<Tensor> out = ir::interpret(*f, {uh}, {}, {ElemType::F64});
  ASSERT_EQ(out.size(), 1u);
  auto U = [&](int64_t b, int64_t i, int64_t j, int64_t e) {
    return uh.get(((b * I + i) * J + j) * E + e);
  };
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> logit(I * J, 0.0), v(J * E, 0.0);
    for (int it = 0; it < 3; ++it) {
      std::vector<double> s(J * E, 0.0);
      for (int64_t i = 0; i < I; ++i) {
        double mx = -INFINITY, total = 0;
        for (int64_t j = 0; j < J; ++j) mx = std::max(mx, logit[i * J + j]);
        for (int64_t j = 0; j < J; ++j) total += std::exp(logit[i * J + j] - mx);
        for (int64_t j = 0; j < J; ++j) {
          double c = std::exp(logit[i * J + j] - mx) / total;
          for (int64_t e = 0; e < E; ++e) s[j * E + e] += c * U(b, i, j, e);
        }
      }
      for (int64_t j = 0; j < J; ++j) {
        double n2 = 0;
        for (int64_t e = 0; e < E; ++e) n2 += s[j * E + e] * s[j * E + e];
        for (int64_t e = 0; e < E; ++e)
          v[j * E + e] = s[j * E + e] * std::sqrt(n2 + 1e-7) / (1 + n2);
      }
      for (int64_t i = 0; i < I; ++i)
        for (int64_t j = 0; j < J; ++j)
          for (int64_t e = 0; e < E; ++e) logit[i * J + j] += U(b, i, j, e) * v[j * E + e];
    }
    for (int64_t j = 0; j < J; ++j)
      for (int64_t e = 0; e < E; ++e)
        EXPECT_NEAR(out[0].get((b * J + j) * E + e), v[j * E + e], 1e-6);
  }
}

}  // namespace
}  // namespace tenet::lang
