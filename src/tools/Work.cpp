// Bytes and dot FLOPs of a kernel: buffer sizes from the parameters, FLOPs by a walk of every
// instance through the scalar control flow (the tile values themselves are never computed).
#include "tools/Work.h"

#include "ir/Analysis.h"
#include "ir/Walk.h"

#include <algorithm>
#include <optional>
#include <set>

namespace dtsim {

namespace {

int64_t wrap(int64_t v, Scalar t) {
  if (t == Scalar::I32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (t == Scalar::I1) return v != 0;
  return v;
}

using Opt = std::optional<int64_t>;

// One program instance's walk through the scalar control flow.
struct Walker {
  explicit Walker(const Kernel& kernel) : k(kernel) {}
  const Kernel& k;
  std::array<int64_t, 3> grid{};
  std::array<int64_t, 3> pid{};
  std::vector<Opt> slots;
  double flops = 0;
  bool known = true;
  std::string note;
  int64_t steps = 0, max_steps = 0;

  Opt eval(const Expr& e) {
    if (e.type.is_tile() || e.type.ptr || is_float(e.type.elem)) return std::nullopt;
    switch (e.kind) {
      case ExprKind::Const: return e.is_float ? Opt{} : Opt{e.ival};
      case ExprKind::Var: return e.slot >= 0 && static_cast<size_t>(e.slot) < slots.size() ? slots[static_cast<size_t>(e.slot)] : Opt{};
      case ExprKind::ProgramId: return pid[static_cast<size_t>(e.axis)];
      case ExprKind::NumPrograms: return grid[static_cast<size_t>(e.axis)];
      case ExprKind::Unary: {
        Opt x = eval(*e.args[0]);
        if (!x) return x;
        switch (e.uop) {
          case UnOp::Neg: return wrap(-*x, e.type.elem);
          case UnOp::Not: return e.type.elem == Scalar::I1 ? Opt{*x == 0} : Opt{wrap(~*x, e.type.elem)};
          case UnOp::Abs: return wrap(*x < 0 ? -*x : *x, e.type.elem);
          DT_MATH_UNOP_CASES return std::nullopt;
        }
        return std::nullopt;
      }
      case ExprKind::Binary: {
        Opt a = eval(*e.args[0]), c = eval(*e.args[1]);
        if (!a || !c) return std::nullopt;
        int64_t x = *a, y = *c;
        Scalar t = e.type.elem;
        switch (e.bop) {
          case BinOp::Add: return wrap(x + y, t);
          case BinOp::Sub: return wrap(x - y, t);
          case BinOp::Mul: return wrap(x * y, t);
          case BinOp::FloorDiv: return y == 0 ? Opt{} : Opt{wrap(x / y, t)};
          case BinOp::Mod: return y == 0 ? Opt{} : Opt{wrap(x % y, t)};
          case BinOp::Cdiv: return y == 0 ? Opt{} : Opt{wrap((x + y - 1) / y, t)};
          case BinOp::And: return x & y;
          case BinOp::Or: return x | y;
          case BinOp::Xor: return x ^ y;
          case BinOp::Shl: return wrap(x << (y & (t == Scalar::I64 ? 63 : 31)), t);
          case BinOp::Shr: return wrap(x >> (y & (t == Scalar::I64 ? 63 : 31)), t);
          case BinOp::Lt: return x < y;
          case BinOp::Le: return x <= y;
          case BinOp::Gt: return x > y;
          case BinOp::Ge: return x >= y;
          case BinOp::Eq: return x == y;
          case BinOp::Ne: return x != y;
          case BinOp::LAnd: return x != 0 && y != 0;
          case BinOp::LOr: return x != 0 || y != 0;
          case BinOp::Min: return std::min(x, y);
          case BinOp::Max: return std::max(x, y);
          case BinOp::MinNum: return std::min(x, y);
          case BinOp::MaxNum: return std::max(x, y);
          case BinOp::Div: DT_MATH_BINOP_CASES return std::nullopt;
        }
        return std::nullopt;
      }
      case ExprKind::Where: {
        Opt c = eval(*e.args[0]);
        if (!c) return c;
        return eval(*e.args[*c ? 1 : 2]);
      }
      case ExprKind::Cast: {
        Opt x = eval(*e.args[0]);
        if (!x) return x;
        return e.dtype == Scalar::I1 ? Opt{*x != 0} : Opt{wrap(*x, e.dtype)};
      }
      case ExprKind::Arange:
      case ExprKind::Full:
      case ExprKind::ExpandDims:
      case ExprKind::Reshape:
      case ExprKind::Trans:
      case ExprKind::Broadcast:
      case ExprKind::Load:
      case ExprKind::Dot:
      case ExprKind::Reduce:
      case ExprKind::Scan:
      case ExprKind::Bitcast:
      case ExprKind::Swizzle2d:
      case ExprKind::CombineArg:
      case ExprKind::IntToPtr:
      case ExprKind::PtrToInt:
      case ExprKind::Machine:
      case ExprKind::Gather:
      case ExprKind::Histogram:
        return std::nullopt;
    }
    return std::nullopt;
  }

  void unknown(const Stmt& s, const std::string& why) {
    if (!known) return;
    known = false;
    note = format_loc(s.loc) + ": " + why;
  }

  // Runs a block; returns false when the instance ended (return) or the walk gave up.
  bool run(const std::vector<StmtP>& body) {
    for (const StmtP& sp : body) {
      const Stmt& s = *sp;
      if (!known) return false;
      if (++steps > max_steps) {
        unknown(s, "too many statements to walk");
        return false;
      }
      for (const ExprP& a : s.args)
        if (a) flops += dot_flops_in(*a);
      switch (s.kind) {
        case StmtKind::Assign: {
          const Expr& v = *s.args[0];
          if (s.slots.size() == 2) {
            Opt x[5];
            bool all = true;
            for (size_t i = 0; i < 5; ++i) all = all && (x[i] = eval(*v.args[i])).has_value();
            if (all && *x[4] * *x[3] != 0) {
              int64_t ij = *x[0] * *x[3] + *x[1], gj = *x[4] * *x[3], gid = ij / gj, off = gid * *x[4];
              int64_t g = std::min(*x[2] - off, *x[4]);
              ij %= gj;
              slots[static_cast<size_t>(s.slots[0])] = g ? Opt{off + ij % g} : Opt{};
              slots[static_cast<size_t>(s.slots[1])] = g ? Opt{ij / g} : Opt{};
            } else {
              slots[static_cast<size_t>(s.slots[0])] = slots[static_cast<size_t>(s.slots[1])] = std::nullopt;
            }
          } else {
            slots[static_cast<size_t>(s.slots[0])] = eval(v);
          }
          break;
        }
        case StmtKind::For: {
          Opt lo = eval(*s.args[0]), hi = eval(*s.args[1]), st = eval(*s.args[2]);
          if (!lo || !hi || !st || *st <= 0) {
            unknown(s, "a loop bound depends on data");
            return false;
          }
          size_t var = static_cast<size_t>(s.slots[0]);
          for (int64_t i = *lo; i < *hi; i += *st) {
            slots[var] = i;
            if (!run(s.body)) return false;
          }
          break;
        }
        case StmtKind::If: {
          Opt c = eval(*s.args[0]);
          if (!c) {
            unknown(s, "a branch depends on data");
            return false;
          }
          if (!run(*c ? s.body : s.orelse)) return false;
          break;
        }
        case StmtKind::While:
          for (;;) {
            Opt c = eval(*s.args[0]);
            if (!c) {
              unknown(s, "a loop condition depends on data");
              return false;
            }
            if (!*c) break;
            if (++steps > max_steps) {  // each trip counts, so an empty body cannot spin forever
              unknown(s, "too many statements to walk");
              return false;
            }
            if (!run(s.body)) return false;
          }
          break;
        case StmtKind::Return: return false;
        case StmtKind::Atomic:  // the old value depends on other instances
          if (!s.slots.empty()) slots[static_cast<size_t>(s.slots[0])] = std::nullopt;
          break;
        case StmtKind::Store:
        case StmtKind::Print:
        case StmtKind::Assert: break;
      }
    }
    return known;
  }
};

}  // namespace

double dot_flops_in(const Expr& e) {
  double f = 0;
  for_each_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Dot && x.args[0]->type.rank() == 2 && x.args[1]->type.rank() == 2) {
      const Shape& a = x.args[0]->type.shape;
      f += 2.0 * static_cast<double>(a[0]) * static_cast<double>(a[1]) * static_cast<double>(x.args[1]->type.shape[1]);
    }
  });
  return f;
}

KernelWork kernel_work(const Kernel& k, const Bindings& b, int64_t max_steps) {
  KernelWork w;
  for_each_expr(k, [&](const Expr& x) {
    if (x.kind == ExprKind::Dot && !w.has_dot) {
      w.has_dot = true;
      w.dot_dtype = x.args[0]->type.elem;
    }
  });
  // Buffers by pointer provenance: a load through `a_ptrs = a + ...` reads a.
  std::set<std::pair<std::string, int64_t>> reads, writes;  // by name, as reported
  for (const BufferUse& u : kernel_buffers(k, b)) {
    if (u.read) reads.insert({u.name, u.bytes});
    if (u.written) writes.insert({u.name, u.bytes});
  }
  for (const auto& [name, bytes] : reads) {
    w.reads.push_back(name);
    w.bytes_read += bytes;
  }
  for (const auto& [name, bytes] : writes) {
    w.writes.push_back(name);
    w.bytes_written += bytes;
  }
  if (!w.has_dot) return w;

  Walker wk(k);
  wk.max_steps = max_steps;
  wk.grid = grid_extents(k, b);
  std::vector<Opt> init(static_cast<size_t>(std::max(k.num_slots, 0)));
  for (const Param& p : k.params)
    if (p.kind != ParamKind::Pointer && p.slot >= 0 && !is_float(p.dtype)) {
      auto it = b.find(p.name);
      if (it != b.end()) init[static_cast<size_t>(p.slot)] = it->second.as_int();
    }
  for (int64_t z = 0; z < wk.grid[2] && wk.known; ++z)
    for (int64_t y = 0; y < wk.grid[1] && wk.known; ++y)
      for (int64_t x = 0; x < wk.grid[0] && wk.known; ++x) {
        wk.pid = {x, y, z};
        wk.slots = init;
        wk.run(k.body);
      }
  w.dot_flops = wk.flops;
  w.flops_known = wk.known;
  w.flops_note = wk.note;
  return w;
}

}  // namespace dtsim
