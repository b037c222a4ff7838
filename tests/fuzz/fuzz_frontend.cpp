// libFuzzer target: the front end on arbitrary bytes.
//
// Expected outcomes are a module or a user error (CompileError, BindError).
// An InternalError is a broken compiler invariant and aborts, so the fuzzer
// records the input; so do crashes, sanitizer reports and any other escaping
// exception. When the input parses, printing must also be a fixed point of
// parse . print (the contract ast::print documents).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lang/ast.h"
#include "lang/check.h"
#include "lang/parser.h"
#include "support/diagnostics.h"
#include "support/error.h"

namespace {

void check_print_round_trip(const tenet::SourceFile& file) {
  std::string printed;
  try {
    printed = tenet::ast::print(tenet::lang::parse(file));
  } catch (const tenet::CompileError&) {
    return;  // a syntax error: nothing to print
  }
  std::string reprinted;
  try {
    reprinted = tenet::ast::print(tenet::lang::parse(tenet::SourceFile("printed.tn", printed)));
  } catch (const tenet::CompileError& e) {
    std::fprintf(stderr, "printed program does not parse:\n%s\n%s\n", printed.c_str(), e.what());
    std::abort();
  }
  if (reprinted != printed) {
    std::fprintf(stderr, "print is not a fixed point:\n%s\n---\n%s\n", printed.c_str(),
                 reprinted.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tenet::SourceFile file("fuzz.tn", std::string(reinterpret_cast<const char*>(data), size));
  check_print_round_trip(file);
  try {
    tenet::lang::compile_source(file);
  } catch (const tenet::CompileError&) {
  } catch (const tenet::BindError&) {
  } catch (const tenet::InternalError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::abort();
  }
  return 0;
}
