#include "support/diagnostics.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/error.h"
#include "support/read_file.h"

namespace tenet {

Span Span::join(Span a, Span b) {
  if (!a.valid) return b;
  if (!b.valid) return a;
  return Span::of(std::min(a.begin, b.begin), std::max(a.end, b.end));
}

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

SourceFile SourceFile::read(const std::string& path) {
  // Only a regular file: /dev/zero or a FIFO would be read without end.
  std::string why;
  std::optional<std::string> text = read_regular_file(path, why);
  if (!text) throw CompileError("error: cannot open '" + path + "': " + why);
  return SourceFile(path, std::move(*text));
}

std::string_view SourceFile::slice(Span s) const {
  if (!s.valid || s.begin > text_.size()) return {};
  uint32_t end = std::min<uint32_t>(s.end, text_.size());
  return std::string_view(text_).substr(s.begin, end - s.begin);
}

SourceFile::LineCol SourceFile::line_col(uint32_t offset) const {
  offset = std::min<uint32_t>(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  int line = int(it - line_starts_.begin());  // 1-based
  return {line, int(offset - line_starts_[line - 1]) + 1};
}

std::string_view SourceFile::line_text(int line) const {
  if (line < 1 || line > int(line_starts_.size())) return {};
  uint32_t b = line_starts_[line - 1];
  uint32_t e = line < int(line_starts_.size()) ? line_starts_[line] - 1 : text_.size();
  std::string_view s = std::string_view(text_).substr(b, e - b);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

namespace {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Note:
      return "note";
  }
  return "error";
}

// "path:line:col: kind: message" then the line and "^~~~" under the span
// (clipped to the first line of a multi-line span).
void render_one(std::ostringstream& os, const SourceFile& file, Span span, Severity sev,
                const std::string& message) {
  if (!span.valid) {
    os << file.path() << ": " << severity_name(sev) << ": " << message;
    return;
  }
  auto lc = file.line_col(span.begin);
  os << file.path() << ':' << lc.line << ':' << lc.col << ": " << severity_name(sev) << ": "
     << message;
  std::string_view line = file.line_text(lc.line);
  os << "\n  ";
  for (char c : line) os << (c == '\t' ? ' ' : c);
  os << "\n  " << std::string(lc.col - 1, ' ') << '^';
  size_t line_end = size_t(lc.col - 1) + (line.size() - std::min<size_t>(line.size(), lc.col - 1));
  size_t width = std::min<size_t>(span.end - span.begin, line_end - (lc.col - 1));
  if (width > 1) os << std::string(width - 1, '~');
}

}  // namespace

std::string render(const SourceFile& file, const Diagnostic& d) {
  std::ostringstream os;
  render_one(os, file, d.span, d.severity, d.message);
  for (const Note& n : d.notes) {
    os << '\n';
    render_one(os, file, n.span, Severity::Note, n.message);
  }
  return os.str();
}

std::string render_all(const SourceFile& file, const std::vector<Diagnostic>& list) {
  std::string out;
  for (const Diagnostic& d : list) {
    if (!out.empty()) out += '\n';
    out += render(file, d);
  }
  return out;
}

Diagnostic& Diagnostics::error(Span span, std::string message) {
  list_.push_back(Diagnostic{Severity::Error, span, std::move(message), {}});
  return list_.back();
}

Diagnostic& Diagnostics::warning(Span span, std::string message) {
  list_.push_back(Diagnostic{Severity::Warning, span, std::move(message), {}});
  return list_.back();
}

Diagnostic& Diagnostics::note(Span span, std::string message) {
  list_.push_back(Diagnostic{Severity::Note, span, std::move(message), {}});
  return list_.back();
}

bool Diagnostics::has_errors() const {
  return std::any_of(list_.begin(), list_.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

std::string Diagnostics::render_all() const {
  return tenet::render_all(*file_, list_);
}

void Diagnostics::throw_if_errors() const {
  if (has_errors()) throw CompileError(render_all());
}

void fail_at(const SourceFile& file, Span span, const std::string& message,
             std::vector<Note> notes) {
  Diagnostic d{Severity::Error, span, message, std::move(notes)};
  throw CompileError(render(file, d));
}

}  // namespace tenet
