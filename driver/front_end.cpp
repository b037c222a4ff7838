// The front end callers run first (front_end.h).
#include "driver/front_end.h"

#include <set>

#include "support/error.h"

namespace tenet::driver {

namespace {

void collect_calls(const std::vector<ast::StmtPtr>& body, std::set<std::string>& called) {
  for (const auto& s : body) {
    if (s->kind == ast::StmtKind::Call) called.insert(s->callee.name);
    if (s->kind == ast::StmtKind::For) collect_calls(s->body, called);
  }
}

}  // namespace

Compilation front_end(Request request) {
  request.stop_after = stage::kCheck;
  return compile(request);
}

const ir::Function& default_entry(const Compilation& front, const std::string& how_to_name) {
  const ir::Module& checked = *front.checked;
  if (checked.functions.empty()) throw UsageError(front.file->path() + " defines no function");
  std::set<std::string> called;
  for (const auto& f : front.ast->functions) collect_calls(f.body, called);
  std::vector<const ir::Function*> entries;
  for (const ir::Function& f : checked.functions)
    if (!called.count(f.name)) entries.push_back(&f);
  if (entries.size() == 1) return *entries[0];
  std::string names;
  for (const ir::Function* f : entries) names += (names.empty() ? "" : ", ") + f->name;
  throw UsageError(front.file->path() + " has several entry functions (" + names +
                   "): name one with " + how_to_name);
}

}  // namespace tenet::driver
