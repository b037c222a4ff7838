#include "codegen/code_writer.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace tenet::codegen::detail {

namespace {

/// Columns an aligned continuation line keeps free (a third of the limit when
/// that is less), or it is indented instead.
constexpr int kMinimumRoom = 40;

struct BreakPoint {
  size_t at;        // the continuation starts here (the space before it is dropped)
  int depth;        // parenthesis depth: breaking outer levels first reads best
  int binding;      // how tightly the operator binds: break loose ones first
  size_t align_to;  // index of the text just inside the enclosing '(' (0: none)
  bool after_comma;
};

/// Binary operators a line may break after, with how tightly each binds
/// (assignment and ',' loosest, '*' and '/' tightest).
struct Operator {
  const char* text;
  int binding;
};
constexpr Operator kOperators[] = {
    {" = ", 0},  {" += ", 0}, {" ? ", 1}, {" : ", 1},  {" || ", 2}, {" && ", 3},
    {" == ", 4}, {" != ", 4}, {" < ", 5}, {" <= ", 5}, {" > ", 5},  {" >= ", 5},
    {" + ", 6},  {" - ", 6},  {" * ", 7}, {" / ", 7},
};

/// Candidate break points of a line: after ", " and after binary operators,
/// outside string and character literals and before any trailing comment.
std::vector<BreakPoint> break_points(const std::string& s) {
  std::vector<BreakPoint> points;
  std::vector<size_t> open;  // positions just after each unclosed '(' / '[' / '{'
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') break;  // a trailing comment stays whole
    if (c == '(' || c == '[' || c == '{') open.push_back(i + 1);
    if ((c == ')' || c == ']' || c == '}') && !open.empty()) open.pop_back();
    const int depth = int(open.size());
    const size_t align = open.empty() ? 0 : open.back();
    if (c == ',' && i + 1 < s.size() && s[i + 1] == ' ') {
      points.push_back({i + 2, depth, 0, align, true});
      continue;
    }
    if (c != ' ') continue;
    for (const Operator& op : kOperators) {
      const size_t length = std::char_traits<char>::length(op.text);
      if (s.compare(i, length, op.text) == 0) {
        points.push_back(
            {i + length, depth, op.binding, align, false});  // the operator ends the line
        break;
      }
    }
  }
  return points;
}

}  // namespace

std::string break_line(const std::string& text, int indent, int limit) {
  const std::vector<BreakPoint> points = break_points(text);
  std::vector<int> column_of(text.size() + 1, 0);  // output column of each emitted character
  std::string out;
  size_t start = 0;     // the current line starts at text[start]
  int column = indent;  // ... in this column
  for (;;) {
    const size_t rest = text.size() - start;
    const BreakPoint* best = nullptr;
    if (column + int(rest) > limit) {
      // The shallowest, loosest break that fits, and the last of those; if
      // none fits, the first one there is.
      for (const BreakPoint& p : points) {
        if (p.at <= start + 1 || p.at >= text.size()) continue;
        bool fits = column + int(p.at - start) - 1 <= limit;
        if (!fits) {
          if (!best) best = &p;
          break;
        }
        // Breaking after an assignment pays only when the whole right side
        // then fits on the next line; otherwise it is the last resort.
        auto rank = [&](const BreakPoint& b) {
          bool assignment = b.binding == 0 && !b.after_comma;
          if (assignment && indent + 4 + int(text.size() - b.at) > limit)
            return std::make_pair(std::numeric_limits<int>::max(), 0);
          return std::make_pair(b.depth, b.binding);
        };
        if (!best || rank(p) < rank(*best) || (rank(p) == rank(*best) && p.at > best->at))
          best = &p;
      }
    }
    const size_t end = best ? best->at : text.size();
    for (size_t i = start; i < end; ++i) column_of[i] = column + int(i - start);
    std::string segment = text.substr(start, end - start);
    while (!segment.empty() && segment.back() == ' ') segment.pop_back();
    out += std::string(size_t(column), ' ') + segment + "\n";
    if (!best) return out;
    // Continue just inside the innermost open bracket (clang-format's
    // AlignAfterOpenBracket) when that leaves room, else four spaces in.
    int next = indent + 4;
    if (best->align_to > 0 && best->align_to < end &&
        column_of[best->align_to] <= limit - std::min(kMinimumRoom, limit / 3))
      next = column_of[best->align_to];
    start = end;
    column = next;
  }
}

void Code::line(const std::string& text) {
  if (text.empty()) {
    out_ << '\n';
    return;
  }
  // A preprocessor line (#pragma omp ...) ends at its newline: never break it.
  if (text[0] == '#') {
    out_ << std::string(size_t(indent()), ' ') << text << '\n';
    return;
  }
  out_ << break_line(text, indent(), kColumnLimit);
}

void Code::note(const std::string& text) {
  const size_t width = size_t(std::max(20, kColumnLimit - indent() - 3));
  std::string line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      comment(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) comment(line);
}

void Code::comment(const std::string& text) {
  std::istringstream lines(text);
  std::string l;
  while (std::getline(lines, l)) {
    // A trailing backslash would splice the next line into the comment.
    while (!l.empty() && (l.back() == '\\' || l.back() == ' ' || l.back() == '\r')) l.pop_back();
    out_ << std::string(size_t(indent()), ' ') << (l.empty() ? "//" : "// " + l) << '\n';
  }
}

}  // namespace tenet::codegen::detail
