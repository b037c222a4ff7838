// Reading the `order` and `fuse` attributes of the schedule pass (schedule.h).
#include "codegen/schedule.h"

#include <string>

#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

/// "b, t, y" as its names.
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(at, comma - at);
    const size_t first = name.find_first_not_of(' ');
    const size_t last = name.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? "" : name.substr(first, last - first + 1));
    at = comma + 1;
  }
  return out;
}

const std::string* attribute(const ir::Stmt& s, const char* key) {
  auto it = s.attrs.find(key);
  return it == s.attrs.end() ? nullptr : &it->second;
}

[[noreturn]] void malformed(const ir::Stmt& s, const char* key, const std::string& what) {
  TENET_ASSERT(false, "statement " << s.compute.result->name << ": attribute " << key << " = \""
                                   << *attribute(s, key) << "\" " << what);
  TENET_UNREACHABLE("malformed schedule attribute");
}

}  // namespace

LoopSchedule loop_schedule(const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  LoopSchedule out;
  const std::string* order = attribute(s, "order");
  if (!order) {
    for (size_t p = 0; p < c.out.size(); ++p) out.outer.push_back(p);
  } else {
    // Outer out indices (a prefix), the reduce indices in order, then the
    // remaining out indices in order.
    const std::vector<std::string> names = split_names(*order);
    if (names.size() != c.out.size() + c.reduce.size() || c.reduce.empty())
      malformed(s, "order", "does not list every index once");
    size_t at = 0;
    while (at < names.size() && at < c.out.size() && names[at] == c.out[at].index)
      out.outer.push_back(at++);
    for (const ir::Dim& d : c.reduce)
      if (names[at++] != d.index)
        malformed(s, "order", "does not list the reduce indices in order");
    for (size_t p = out.outer.size(); p < c.out.size(); ++p)
      if (names[at++] == c.out[p].index)
        out.inner.push_back(p);
      else
        malformed(s, "order", "does not end with the remaining out indices in order");
  }
  out.shared = shared_loops(s);
  if (out.shared > out.outer.size())
    malformed(s, "fuse", "shares more loops than the statement has outside its reduction");
  return out;
}

size_t shared_loops(const ir::Stmt& s) {
  const std::string* fuse = attribute(s, "fuse");
  if (!fuse || s.kind != ir::StmtKind::Compute) return 0;
  const std::vector<std::string> names = split_names(*fuse);
  const ir::Compute& c = s.compute;
  if (names.size() > c.out.size()) malformed(s, "fuse", "names more indices than the result has");
  for (size_t p = 0; p < names.size(); ++p)
    if (names[p] != c.out[p].index) malformed(s, "fuse", "is not a prefix of the out indices");
  return names.size();
}

}  // namespace tenet::codegen::detail
