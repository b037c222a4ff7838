/// \file
/// Lines of generated C++: two-space indentation, and lines longer than the
/// column limit broken the way clang-format would (after a comma, aligned
/// with the open parenthesis; or after a binary operator, indented four).
///
/// Internal to codegen/.
#pragma once

#include <sstream>
#include <string>

namespace tenet::codegen::detail {

class Code {
 public:
  static constexpr int kColumnLimit = 100;
  /// Blocks nested deeper are indented no further: a rank-300 loop nest would
  /// otherwise spend most of its text on spaces (and break every line of its
  /// body at each operator), quadratic in the depth.
  static constexpr int kMaxIndentDepth = 24;

  explicit Code(int depth = 0) : depth_(depth) {}

  /// One statement or declaration; broken over several lines when too long.
  void line(const std::string& text);
  /// "// text" for each line of text (never broken: source text stays intact).
  void comment(const std::string& text);
  /// A comment of the generator's own, wrapped at spaces to fit the limit.
  void note(const std::string& text);
  /// Appends text that is already indented (ends with a newline).
  void raw(const std::string& text) { out_ << text; }
  void open(const std::string& head) {  // "for (...) {", or "{" for an empty head
    line(head.empty() ? "{" : head + " {");
    ++depth_;
  }
  void close(const std::string& tail = "}") {
    --depth_;
    line(tail);
  }
  /// Closes a block and opens the next at the same depth: "} else {".
  void reopen(const std::string& text) {
    --depth_;
    line(text);
    ++depth_;
  }
  std::string str() const { return out_.str(); }
  /// How deep the next line is indented, in blocks.
  int depth() const { return depth_; }

 private:
  int indent() const { return 2 * (depth_ < kMaxIndentDepth ? depth_ : kMaxIndentDepth); }

  std::ostringstream out_;
  int depth_ = 0;
};

/// `text` indented by `indent` spaces and broken into lines of at most
/// `limit` columns where it has a break point (a line with none stays long).
std::string break_line(const std::string& text, int indent, int limit);

}  // namespace tenet::codegen::detail
