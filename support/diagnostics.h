/// \file
/// Source files, spans and user-facing diagnostics.
///
/// A user error is reported as
///
///     file.tn:3:12: error: message
///       v(i) = q(i) + 1
///              ^~~~
///     file.tn:1:5: note: ...
///
/// and thrown as a CompileError once the phase that found it gives up. Internal
/// compiler bugs are InternalError (see error.h) and look different on purpose.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tenet {

/// A half-open byte range [begin, end) in the one SourceFile of a compilation.
/// A default Span (begin == end == 0 and !valid) means "no location".
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool valid = false;

  static Span of(uint32_t b, uint32_t e) { return Span{b, e < b ? b : e, true}; }
  /// The smallest span covering both (either may be invalid).
  static Span join(Span a, Span b);
};

class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  /// Reads a file; throws CompileError("cannot open ...") if it cannot.
  static SourceFile read(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  std::string_view slice(Span s) const;

  /// 1-based line and column (columns count bytes) of a byte offset.
  struct LineCol {
    int line;
    int col;
  };
  LineCol line_col(uint32_t offset) const;
  /// The text of a 1-based line, without its newline.
  std::string_view line_text(int line) const;

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

enum class Severity { Error, Warning, Note };

struct Note {
  Span span;
  std::string message;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  Span span;
  std::string message;
  std::vector<Note> notes;
};

/// Renders one diagnostic: the header line, the source line with a caret and
/// underline under the span, then each note the same way.
std::string render(const SourceFile& file, const Diagnostic& d);
/// Every diagnostic rendered, in order, separated by newlines ("" for none).
std::string render_all(const SourceFile& file, const std::vector<Diagnostic>& list);

/// Collects diagnostics for one source file.
class Diagnostics {
 public:
  explicit Diagnostics(const SourceFile& file) : file_(&file) {}

  Diagnostic& error(Span span, std::string message);
  Diagnostic& warning(Span span, std::string message);
  /// A note of its own (not attached to an error or warning): something the
  /// user may want to know about a program that is fine, e.g. a rule of the
  /// language that chose a smaller range.
  Diagnostic& note(Span span, std::string message);

  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return list_; }
  const SourceFile& file() const { return *file_; }
  /// Every diagnostic rendered, in order, separated by newlines.
  std::string render_all() const;
  /// Throws CompileError with render_all() if any error was reported.
  void throw_if_errors() const;

 private:
  const SourceFile* file_;
  std::vector<Diagnostic> list_;
};

/// A user-facing error. what() is the fully rendered text (one or more
/// diagnostics); it ends without a trailing newline.
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& rendered) : std::runtime_error(rendered) {}
};

/// Throws CompileError for one diagnostic at a span.
[[noreturn]] void fail_at(const SourceFile& file, Span span, const std::string& message,
                          std::vector<Note> notes = {});

}  // namespace tenet
