/// \file
/// Internals of the unparser (unparse.h), shared by its implementation files.
/// Not a public interface. The unparser works in rounds:
///
///   unparse_lines.cpp  IR statements -> source statements (Lines), choosing
///                      which values share a source name ("merges": `T += e`
///                      onto the previous version, loop-carried tensors) and
///                      adding copies where a merge was refused;
///   unparse_names.cpp  one valid, unique identifier per group of values, per
///                      index and loop variable; fresh size names for input
///                      dimensions the language cannot declare;
///   unparse_scope.cpp  replays the checker's scoping and range inference on
///                      the Lines: every read must see the value the IR reads,
///                      every index the IR's range (else it gets a `where`);
///                      a violation refuses the merges of one group and the
///                      round starts again;
///   unparse_expr.cpp   expressions, index expressions and sizes as text;
///   unparse.cpp        the driver and the final text.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace tenet::lang::unparse_detail {

using ValueKey = const ir::Value*;

/// Disjoint sets of values that print under one source name.
class Groups {
 public:
  ValueKey find(ValueKey v) const;
  void join(ValueKey a, ValueKey b);

 private:
  mutable std::map<ValueKey, ValueKey> parent_;
};

/// A loop-carried tensor as the printed loop carries it (init and param are
/// null for a live-out: a body value used after the loop).
struct Carry {
  ir::ValuePtr init, param, next, result;
};

/// One source statement: an assignment or a loop.
struct Line {
  enum class Kind { Assign, Loop };
  Kind kind = Kind::Assign;
  std::string source;              // the IR statement's source text, if any
  std::vector<std::string> attrs;  // "key: value", printed as comments
  // Assign: target(out) op body, reducing `reduce`.
  ir::ValuePtr target;
  std::string op;  // "=", "+=!", "max=!", "min=!", "+="
  std::vector<ir::Dim> out, reduce;
  ir::Expr body;
  ir::ValuePtr init;  // "+=": the version it updates (same source name as target)
  // `target = reshape(source, sizes...)`: body is the reshape read of the
  // source (ir/reshape.h), the sizes are the target's shape.
  bool reshape = false;
  // Filled by the scope replay: the type the checker gives a right side of
  // literals only (the target's type when it exists, else float32).
  ElemType statement_type = ElemType::F32;
  // Filled by the scope replay: a new float16 tensor, whose right side is
  // written `float16(...)` (that cast makes the checker store float16).
  bool declares_half = false;
  // Filled by the scope replay: which of out ++ reduce get a where clause.
  std::vector<bool> where;
  // Loop
  std::string var;
  int64_t trip = 0;
  std::vector<Carry> carries;
  std::vector<Line> body_lines;
};

struct OutputSlot {
  ir::ValuePtr value;
  std::string name;  // the output's user-facing name
};

/// The function as source statements, for one choice of merges.
struct Lowered {
  std::vector<Line> lines;
  std::vector<OutputSlot> outputs;
  Groups groups;
  /// Values made for copies (never part of an IR function; kept alive here).
  std::vector<ir::ValuePtr> made;
  /// Each merge made, keyed by the value that identifies it, with its members.
  std::map<ValueKey, std::vector<ValueKey>> merges;
  /// The output name each group must print under.
  std::map<ValueKey, std::string> claimed;
};

/// Lowers `fn` to Lines, making every merge whose key is not in `refused`.
Lowered lower_lines(const ir::Function& fn, const std::set<ValueKey>& refused);

/// Source identifiers.
struct Names {
  std::string function;
  std::map<ValueKey, std::string> tensor;    // every value of the Lines
  std::map<std::string, std::string> index;  // IR index or loop variable -> source name
  /// Declared shapes of the inputs (fresh size names for composite dimensions).
  std::map<ValueKey, std::vector<ir::SizeExpr>> input_shape;
  /// Fresh size name -> the IR size it stands for, in order of creation.
  std::vector<std::pair<std::string, ir::SizeExpr>> fresh;

  const std::string& of(const ir::ValuePtr& v) const { return tensor.at(v.get()); }
  const std::string& of_index(const std::string& ir_name) const;
};

Names assign_names(const ir::Function& fn, const Lowered& lowered);

/// Choices that survive from one round to the next.
struct Decisions {
  std::set<const ir::ExprNode*> guard;                     // unguarded IR reads printed guarded
  std::set<std::pair<ValueKey, std::string>> force_where;  // (target, IR index)
};

/// What went wrong in a replay: the value whose group must give up its merges.
struct Violation {
  ValueKey value = nullptr;
  std::string why;
};

/// Replays the checker on the Lines (see the file comment); fills Line::where
/// and may add to `decisions`. Returns a violation, or nullopt when the Lines
/// mean what the IR means.
std::optional<Violation> replay(const ir::Function& fn, Lowered& lowered, const Names& names,
                                Decisions& decisions);

/// Text of expressions for one function's names.
class ExprText {
 public:
  ExprText(const Names& names, const std::set<const ir::ExprNode*>& guard)
      : names_(names), guard_(guard) {}
  /// A right side whose statement type, as the checker would give a right
  /// side of literals only, is `statement_type`.
  std::string body(const ir::Expr& e, ElemType statement_type) const;
  std::string affine(const ir::Affine& a) const;

 private:
  struct Text {
    std::string s;
    int level;  // 1 || . 2 && . 3 comparisons . 4 + - . 5 * / . 6 unary . 7 primary
  };
  Text expr(const ir::Expr& e, bool anchor) const;
  Text binary(const ir::ExprNode& e) const;
  std::string operand(const ir::Expr& e, bool anchor, int min_level, bool right = false) const;

  const Names& names_;
  const std::set<const ir::ExprNode*>& guard_;
};

/// A size as source text ("(H - 9) / 2 + 1"); CompileError for min/max.
std::string size_text(const ir::SizeExpr& s, const std::string& function);
/// True when e prints as literals only (its type then comes from context).
bool literal_only(const ir::Expr& e);
/// The size symbols e uses as values or in index offsets.
void collect_symbols(const ir::Expr& e, std::set<std::string>& out);

}  // namespace tenet::lang::unparse_detail
