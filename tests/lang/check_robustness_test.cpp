// The checker never crashes, hangs or reports an internal error on bad input:
// programs from models/ and the check samples are mutated token by token
// (deleted, repeated, swapped, renamed, numbers replaced) and compiled; every
// outcome must be a module or a CompileError. TENET_CHECK_FUZZ_ITERATIONS
// runs more iterations (the default keeps the suite fast), TENET_CHECK_FUZZ_SEED
// another sequence.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "lang/check.h"
#include "support/error.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

namespace fs = std::filesystem;

struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? size_t(next() % n) : 0; }
};

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// Words, single punctuation characters and whitespace runs.
std::vector<std::string> tokens(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    if (is_word(text[i]))
      while (j < text.size() && is_word(text[j])) ++j;
    else if (std::isspace(static_cast<unsigned char>(text[i])))
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string mutate(const std::vector<std::string>& base, Rng& rng) {
  static const char* kNumbers[] = {
      "0", "1", "-1", "2", "9", "1.5", "1e9", "2147483648", "99999999999999999999", "1e400", "3"};
  static const char* kInserts[] = {"(",    ")",      ",",       "+",      "*",     "/",     "-",
                                   "?",    "=",      "+=!",     "+=",     "max=!", "where", "for",
                                   "in",   ":",      "{",       "}",      "i",     "N",     "x",
                                   "exp",  "select", "float64", "int32",  "<",     "&&",    "!",
                                   "bool", "uint8",  "uint64",  "float16"};
  std::vector<std::string> t = base;
  int edits = 1 + int(rng.below(4));
  for (int e = 0; e < edits && !t.empty(); ++e) {
    size_t at = rng.below(t.size());
    switch (rng.below(7)) {
      case 0:
        t.erase(t.begin() + long(at));
        break;
      case 1:
        t.insert(t.begin() + long(at), t[rng.below(t.size())]);
        break;
      case 2:
        std::swap(t[at], t[rng.below(t.size())]);
        break;
      case 3:
        t[at] = t[rng.below(t.size())];
        break;
      case 4:
        if (!t[at].empty() && std::isdigit(static_cast<unsigned char>(t[at][0])))
          t[at] = kNumbers[rng.below(std::size(kNumbers))];
        else
          t[at] = kInserts[rng.below(std::size(kInserts))];
        break;
      case 5:
        t.insert(t.begin() + long(at), kInserts[rng.below(std::size(kInserts))]);
        break;
      default:
        t.insert(t.begin() + long(at), " ");
        break;
    }
  }
  std::string out;
  for (const std::string& s : t) out += s;
  return out;
}

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const char* dir : {"models", "tests/lang/data/check", "tests/fuzz/corpus-frontend"}) {
    fs::path path = tenet::testing::source_path(dir);
    if (!fs::exists(path)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.path().extension() == ".tn") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) out.push_back(tenet::testing::read_file(f.string()));
  }
  return out;
}

TEST(CheckRobustness, MutatedProgramsGiveModulesOrCompileErrors) {
  std::vector<std::string> texts = corpus();
  ASSERT_FALSE(texts.empty());
  std::vector<std::vector<std::string>> bases;
  for (const std::string& t : texts) bases.push_back(tokens(t));
  long iterations = 1500;
  if (const char* n = std::getenv("TENET_CHECK_FUZZ_ITERATIONS")) iterations = std::atol(n);
  Rng rng{12345};
  if (const char* seed = std::getenv("TENET_CHECK_FUZZ_SEED"))
    rng.state = std::strtoull(seed, nullptr, 10);
  int compiled = 0, rejected = 0;
  for (long it = 0; it < iterations; ++it) {
    std::string text = mutate(bases[rng.below(bases.size())], rng);
    try {
      compile_source(SourceFile("fuzz.tn", text));
      ++compiled;
    } catch (const CompileError&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << it << ": " << e.what() << "\nfor input:\n" << text;
      return;
    }
  }
  // Both outcomes occur: the mutations reach the checker, not just the parser.
  EXPECT_GT(compiled, 0);
  EXPECT_GT(rejected, 0);
}

TEST(CheckRobustness, RandomBytes) {
  Rng rng{99};
  for (int it = 0; it < 300; ++it) {
    std::string text(rng.below(200), ' ');
    for (char& c : text) c = char(rng.below(256));
    try {
      compile_source(SourceFile("bytes.tn", text));
    } catch (const CompileError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << it << ": " << e.what();
      return;
    }
  }
}

}  // namespace
}  // namespace tenet::lang
