#include <gtest/gtest.h>
#include <iostream>
#include <fstream>
#include <sstream>

#include "ir/printer.h"
#include "lang/check.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {

TEST(AdScratch, Print) {
  const char* path = std::getenv("SCRATCH");
  if (!path) GTEST_SKIP();
  std::ifstream in(path);
  std::stringstream ss; ss << in.rdbuf();
  SourceFile file(path, ss.str());
  try {
    ir::Module m = lang::compile_source(file);
    for (auto& f : m.functions) {
      std::cout << ir::print(f);
      GradRequest req; req.vjp = true;
      std::cout << ir::print(differentiate(f, req, &file));
    }
  } catch (std::exception& e) { std::cout << e.what() << "\n"; }
}

}  // namespace tenet::ad::testing
