// TMA rings (PipelinePlan::Kind::TmaRing, sm_90a): a pipelined K loop whose dot runs on wgmma and
// whose two operand loads are boxes of 2-D row-major tensors fills its ring of shared buffers with
// bulk tensor copies (cp.async.bulk.tensor.2d) instead of cp.async:
//
//   x = load(a + row[:, None] * S + col[None, :], mask=(row[:, None] < ROWS) & (col[None, :] < COLS))
//
// where row and col run over consecutive values (row0 + i, col0 + j; their axis information says so),
// S, ROWS and COLS are runtime scalar parameters, constexprs or literals, and `a` is a pointer
// parameter. The kernel takes one CUtensorMap per operand (128 bytes, by value, __grid_constant__),
// encoded on the host at launch from a's address, [ROWS, COLS] and the row stride S; TMA reads the
// box at (col0, row0) and zero-fills what lies outside [0, COLS) x [0, ROWS), which is the mask.
//
// Boxes are 128 bytes wide with the 128-byte swizzle: 16-byte chunk j of box row r lands at chunk
// j ^ (r % 8) of the row's 128 bytes, boxes 1024-byte aligned: A [M, 64] is one box of M rows, the
// layout wgmma_offset gives A; B [K, N] is N / 64 boxes of K rows x 64 columns, each K * 128 bytes,
// read by wgmma with 64-column atoms K * 128 bytes apart (wgmma_tiles' b_atoms).
//
// One thread (thread 0) initializes the stages' mbarriers, and per stage arrives with the expected
// byte count and issues the copies; every thread waits on the stage's mbarrier (try_wait.parity,
// the parity flipping each time the ring wraps) before its wgmma reads the buffers. A stage is
// refilled after the barrier that follows the next iteration's wgmma issue and its wait for the
// previous group (as the cp.async ring does), so no copy overwrites a buffer a wgmma still reads.
#include <algorithm>
#include <functional>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Printer.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

namespace {

// e as a sum of terms (`a + b + c` -> a, b, c; a broadcast_to of a sum is the sum of its terms, each
// still broadcast where it is used).
void sum_terms(const ExprP& e, std::vector<ExprP>& out) {
  if (e->kind == ExprKind::Broadcast) return sum_terms(e->args[0], out);
  if (e->kind == ExprKind::Binary && e->bop == BinOp::Add) {
    sum_terms(e->args[0], out);
    sum_terms(e->args[1], out);
    return;
  }
  out.push_back(e);
}

void conjuncts(const ExprP& e, std::vector<ExprP>& out) {
  if (e->kind == ExprKind::Broadcast && e->type.elem == Scalar::I1) return conjuncts(e->args[0], out);
  if (e->kind == ExprKind::Binary && e->bop == BinOp::And && e->type.elem == Scalar::I1) {
    conjuncts(e->args[0], out);
    conjuncts(e->args[1], out);
    return;
  }
  out.push_back(e);
}

// The operands of a bulk tensor copy's n coordinates from asm operand $first on: "{$2, $3}"; and their
// constraints and values ("r,r", "i32 a, i32 b").
std::string coord_list(int first, size_t n) {
  std::string s = "{";
  for (size_t i = 0; i < n; ++i) s += (i ? ", $" : "$") + std::to_string(first + static_cast<int>(i));
  return s + "}";
}
std::string coord_constraints(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ",r" : "r";
  return s;
}
std::string coord_values(const std::vector<std::string>& xs) {
  std::string s;
  for (const std::string& x : xs) s += (s.empty() ? "i32 " : ", i32 ") + x;
  return s;
}

std::string join_terms(const std::vector<ExprP>& terms) {
  std::string s;
  for (const ExprP& t : terms) s += (s.empty() ? "" : " + ") + print_expr(t);
  return s;
}

}  // namespace

// A value the host can compute at launch: a literal, a constexpr, or a runtime scalar parameter the
// kernel never assigns.
std::optional<HostInt> KernelEmitter::host_int(const ExprP& e) {
  if (e->kind == ExprKind::Const && !e->is_float) return HostInt{"", e->ival};
  // A widening integer cast (the TTIR reader's `rows.to(i64)`) keeps the value.
  if (e->kind == ExprKind::Cast && e->type.is_scalar() && !is_float(e->type.elem) && e->type.elem != Scalar::I1) {
    const Type& x = e->args[0]->type;
    if (x.is_scalar() && !x.ptr && !is_float(x.elem) && x.elem != Scalar::I1 && scalar_bytes(x.elem) <= scalar_bytes(e->type.elem))
      return host_int(e->args[0]);
  }
  if (e->kind != ExprKind::Var || !e->type.is_scalar() || is_float(e->type.elem)) return std::nullopt;
  const Param* p = k_.find_param(e->name);
  if (!p || p->slot != e->slot || plan_.assigns[static_cast<size_t>(p->slot)] != 1) return std::nullopt;
  if (p->kind == ParamKind::Constexpr) {
    auto it = b_.find(p->name);
    if (it == b_.end()) return std::nullopt;
    return HostInt{"", it->second.as_int()};
  }
  if (p->kind == ParamKind::Scalar) return HostInt{p->name, 0};
  return std::nullopt;
}

// Whether the index terms run over `len` consecutive values along dimension `dim` of the tile (one
// term index + i, the others scalars).
bool KernelEmitter::consecutive_along(const std::vector<ExprP>& terms_in, int dim, int64_t len) {
  // A variable assigned once stands for its definition, and one whose definition is a sum
  // (`tb = rk[:, None] + k`, as the TTIR reader names Triton's subexpressions) for that sum's terms.
  std::vector<ExprP> terms;
  std::function<void(const ExprP&, int)> expand = [&](const ExprP& t, int depth) {
    if (depth < 64 && t->kind == ExprKind::Var && t->slot >= 0 && plan_.assigns[static_cast<size_t>(t->slot)] == 1) {
      if (const ExprP& d = plan_.single_def[static_cast<size_t>(t->slot)]) {
        if (d->kind != ExprKind::Binary || d->bop != BinOp::Add) return expand(d, depth + 1);
        std::vector<ExprP> parts;
        sum_terms(d, parts);
        for (const ExprP& p : parts) expand(p, depth + 1);
        return;
      }
    }
    terms.push_back(t);
  };
  for (const ExprP& t : terms_in) expand(t, 0);
  int tiles = 0;
  for (const ExprP& t : terms) {
    if (t->type.is_scalar()) continue;
    if (++tiles > 1) return false;
    const Shape& s = t->type.shape;
    if (dim == 1 && s.size() == 1 && s[0] == len) {
      if (axis_info(t).contig < len) return false;
      continue;
    }
    if (s.size() != 2) return false;
    if (dim == 1 && s[0] == 1 && s[1] == len && axis_info(t).contig >= len) continue;
    if (t->kind != ExprKind::ExpandDims || t->ints.empty() || t->ints[0] != 1 - dim) return false;
    const ExprP& x = t->args[0];
    if (x->type.rank() != 1 || x->type.shape[0] != len || axis_info(x).contig < len) return false;
  }
  return tiles == 1;
}

// Whether load statement `ld` (in the loop being planned, its variables in loop_info_) reads a box of
// a 2-D row-major tensor, or of a head of a tensor of rank 3 to 5 (TmaOperand::planes), and which: see
// the top of this file. Its map goes into `map`.
std::optional<TmaOperand> KernelEmitter::tma_operand(const Stmt& st, bool b_operand, TmaMap& map, std::string& why) {
  // A load statement `x = load(ptr, mask)`, or a store `store(ptr, value, mask)` (its tile: the pointer's).
  const bool store = st.kind == StmtKind::Store;
  const ExprP& ptr = store ? st.args[0] : st.args[0]->args[0];
  const ExprP& mask = store ? st.args[2] : st.args[0]->args[1];
  const Type& t = ptr->type;
  if (t.rank() != 2) return why = "is not a 2-D tile", std::nullopt;
  const int64_t R = t.shape[0], C = t.shape[1];
  const int eb = scalar_bytes(t.elem);
  if (t.elem != Scalar::F16 && t.elem != Scalar::BF16) return why = "is not f16 or bf16", std::nullopt;
  if (b_operand ? C % 64 != 0 : C * eb != 128) return why = "is not 128 bytes wide (A) or a multiple of 64 columns (B)", std::nullopt;
  if (R > 256 || R % 8) return why = "has more than 256 rows or a number not a multiple of 8", std::nullopt;
  if (!mask) return why = "has no mask giving the tensor's extents", std::nullopt;
  std::vector<ExprP> terms, row, col;
  sum_terms(ptr, terms);
  const Param* buf = nullptr;
  ExprP stride;
  for (ExprP e : terms) {
    if (e->kind == ExprKind::Broadcast && e->args[0]->type.is_scalar()) e = e->args[0];
    if (e->type.ptr) {
      const Param* p = e->kind == ExprKind::Var ? k_.find_param(e->name) : nullptr;
      if (buf || !p || p->kind != ParamKind::Pointer || p->slot != e->slot || plan_.assigns[static_cast<size_t>(p->slot)] != 1)
        return why = "has a pointer that is not a buffer parameter plus integer terms", std::nullopt;
      buf = p;
      continue;
    }
    const Shape& s = e->type.shape;
    if (s.size() == 2 && s[1] == 1 && s[0] == R) {  // a row term: index * stride
      if (e->kind != ExprKind::Binary || e->bop != BinOp::Mul) return why = "has a row term that is not index * stride", std::nullopt;
      int sc = e->args[0]->type.is_scalar() ? 0 : e->args[1]->type.is_scalar() ? 1 : -1;
      if (sc < 0) return why = "has a row term that is not index * stride", std::nullopt;
      const ExprP& sv = e->args[static_cast<size_t>(sc)];
      if (stride && print_expr(stride) != print_expr(sv)) return why = "has rows with two strides", std::nullopt;
      stride = sv;
      sum_terms(e->args[static_cast<size_t>(1 - sc)], row);
      continue;
    }
    if (e->type.is_scalar() || (s.size() == 2 && s[0] == 1 && s[1] == C) || (s.size() == 1 && s[0] == C)) {
      col.push_back(e);
      continue;
    }
    return why = "has a pointer term that varies along both dimensions", std::nullopt;
  }
  if (!buf || buf->dtype != t.elem) return why = "does not read a buffer parameter of its element type", std::nullopt;
  if (!stride) return why = "has no row stride", std::nullopt;
  auto s = host_int(stride);
  if (!s || axis_info(stride).div * eb % 16) return why = "has a row stride that is not a parameter or literal divisible by 16 bytes", std::nullopt;
  // The mask's conjuncts, each with the dimension it bounds where it is a 1-D condition broadcast
  // along the other (`l_mask[:, None]`: rows), -1 where it is a 2-D condition; a condition held in a
  // variable assigned once stands for its definition.
  std::vector<ExprP> conds0;  // as written, for the reasons given
  std::vector<std::pair<ExprP, int>> conds;
  std::function<void(const ExprP&, int, const ExprP&, int)> add = [&](const ExprP& e, int dim, const ExprP& written, int depth) {
    std::vector<ExprP> parts;
    conjuncts(e, parts);
    for (ExprP c : parts) {
      const ExprP& w = written ? written : c;
      int d = dim;
      if (d < 0 && c->kind == ExprKind::ExpandDims && !c->ints.empty() && c->type.rank() == 2) {
        add(c->args[0], 1 - static_cast<int>(c->ints[0]), w, depth + 1);  // `(a & b)[:, None]`: a and b bound the rows
        continue;
      }
      if (depth < 8 && c->kind == ExprKind::Var && c->slot >= 0 && plan_.assigns[static_cast<size_t>(c->slot)] == 1 &&
          plan_.single_def[static_cast<size_t>(c->slot)]) {
        add(plan_.single_def[static_cast<size_t>(c->slot)], d, w, depth + 1);
        continue;
      }
      conds0.push_back(w);
      conds.emplace_back(c, d);
    }
  };
  add(mask, -1, nullptr, 0);
  // Index terms compared as texts: a term broadcast along the other dimension (`i[:, None]` for the
  // rows) as the 1-D index it broadcasts.
  auto texts = [&](const std::vector<ExprP>& ts, int dim) {
    std::vector<std::string> out;
    for (const ExprP& x : ts)
      out.push_back(print_expr(x->kind == ExprKind::ExpandDims && !x->ints.empty() && x->ints[0] == 1 - dim ? x->args[0] : x));
    std::sort(out.begin(), out.end());
    return out;
  };
  // The terms of a comparison's left side, against dimension `dim`'s (a 1-D condition's print as they are).
  auto lhs_texts = [&](const std::pair<ExprP, int>& c, int dim) {
    std::vector<ExprP> lhs;
    sum_terms(c.first->args[0], lhs);
    return texts(lhs, dim);
  };
  auto is_cmp = [](const ExprP& c, BinOp b) { return c->kind == ExprKind::Binary && c->bop == b && c->type.elem == Scalar::I1; };
  const std::vector<std::string> row_t = texts(row, 0);
  std::optional<HostInt> rows, cols;
  ExprP rows_e, cols_e;
  std::vector<bool> used(conds.size());
  // `row < extent`; then `col < extent`, whose terms are the column terms but for scalars that are
  // then the planes' `index * stride`.
  std::vector<ExprP> planes;
  for (size_t i = 0; i < conds.size(); ++i) {
    const auto& c = conds[i];
    if (!is_cmp(c.first, BinOp::Lt) || c.second == 1) continue;
    auto bound = host_int(c.first->args[1]);
    if (bound && !rows && lhs_texts(c, 0) == row_t) rows = bound, rows_e = c.first->args[1], used[i] = true;
  }
  for (size_t i = 0; i < conds.size() && !cols; ++i) {
    const auto& c = conds[i];
    if (used[i] || !is_cmp(c.first, BinOp::Lt) || c.second == 0) continue;
    auto bound = host_int(c.first->args[1]);
    if (!bound) continue;
    std::vector<std::string> want = lhs_texts(c, 1);
    std::vector<ExprP> kept, rest;
    for (const ExprP& x : col) {
      auto it = std::find(want.begin(), want.end(), texts({x}, 1)[0]);
      if (it != want.end()) want.erase(it), kept.push_back(x);
      else if (x->type.is_scalar()) rest.push_back(x);
      else break;
    }
    if (!want.empty() || kept.size() + rest.size() != col.size()) continue;
    cols = bound, cols_e = c.first->args[1], used[i] = true;
    col = kept;
    planes = rest;
  }
  // `index >= 0`: TMA zero-fills negative coordinates as well.
  const std::vector<std::string> col_t = texts(col, 1);
  for (size_t i = 0; i < conds.size(); ++i) {
    const auto& c = conds[i];
    if (used[i]) continue;
    if (is_cmp(c.first, BinOp::Ge) && c.first->args[1]->kind == ExprKind::Const && !c.first->args[1]->is_float && c.first->args[1]->ival == 0) {
      if ((c.second != 1 && lhs_texts(c, 0) == row_t) || (c.second != 0 && lhs_texts(c, 1) == col_t)) continue;
    }
    return why = "has a mask conjunct that is not row < extent or column < extent (" + print_expr(conds0[i]) + ")", std::nullopt;
  }
  if (!rows || !cols) return why = "has a mask that does not bound both the rows and the columns", std::nullopt;
  if (!consecutive_along(row, 0, R) || !consecutive_along(col, 1, C))
    return why = "has row or column indices that are not consecutive values", std::nullopt;
  // Planes: each scalar term the column mask does not name is `index * stride`, the stride a
  // parameter or literal (constexprs and literals multiplied out) divisible by 16 bytes.
  if (planes.size() > 3) return why = "has more than 3 scalar terms the mask does not bound (a tensor map has at most 5 dimensions)", std::nullopt;
  std::vector<TmaMap::Plane> plane_strides;
  std::vector<ExprP> plane_index;
  for (const ExprP& x : planes) {
    std::vector<ExprP> fs;
    std::function<void(const ExprP&)> factors = [&](const ExprP& e) {
      if (e->kind == ExprKind::Binary && e->bop == BinOp::Mul) return factors(e->args[0]), factors(e->args[1]);
      fs.push_back(e);
    };
    factors(x);
    // Literals and constexprs multiply into the stride; of the other factors the index is the one
    // computed in the kernel (`z_index * l_SIZE * k_SIZE`), else the first (`h * M * K`, h a
    // parameter); the rest must be runtime parameters.
    TmaMap::Plane pl;
    std::vector<ExprP> rest, params;
    bool big = false;
    for (const ExprP& f : fs) {
      auto h = host_int(f);
      if (h && h->param.empty()) big = big || h->value <= 0 || __builtin_mul_overflow(pl.value, h->value, &pl.value) || pl.value > (int64_t{1} << 36);
      else rest.push_back(f);
    }
    std::vector<ExprP> idx;
    for (const ExprP& f : rest) (idx.empty() && !host_int(f) ? idx : params).push_back(f);
    if (idx.empty() && !params.empty()) idx.push_back(params[0]), params.erase(params.begin());
    for (const ExprP& f : params) big = big || !host_int(f);
    const std::string what = "has a scalar term the mask does not bound (" + print_expr(x) + ")";
    if (big || idx.empty()) return why = what + " that is not index * stride (literals, constexprs and runtime parameters)", std::nullopt;
    int64_t bytes16 = pl.value * eb % 16;  // what the stride in bytes is known to be a multiple of, modulo 16
    for (const ExprP& f : params) {
      pl.params.push_back(host_int(f)->param);
      bytes16 = bytes16 * (axis_info(f).div % 16) % 16;
    }
    if (bytes16 != 0) return why = what + ": an outer coordinate whose stride (" + pl.str() + " elements) is not known to be a multiple of 16 bytes", std::nullopt;
    plane_strides.push_back(pl);
    plane_index.push_back(idx[0]);
  }
  // Innermost first, where the strides say so at compile time: fewer parameters, then the smaller
  // value (`h * P * Q` inside `z * H * P * Q`).
  std::vector<size_t> order(planes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const TmaMap::Plane &a = plane_strides[x], &b = plane_strides[y];
    return a.params.size() != b.params.size() ? a.params.size() < b.params.size() : a.value < b.value;
  });
  std::vector<TmaMap::Plane> ps;
  std::vector<ExprP> pi;
  for (size_t i : order) ps.push_back(plane_strides[i]), pi.push_back(plane_index[i]);
  plane_strides = ps, plane_index = pi;
  map = TmaMap{buf, t.elem, *rows, *cols, *s, plane_strides, R, b_operand ? 64 : C};
  TmaOperand o;
  o.load = &st;
  o.b_operand = b_operand;
  o.row = row;
  o.col = col;
  o.planes = plane_index;
  o.rows_e = rows_e;
  o.cols_e = cols_e;
  return o;
}

// i1: whether the tensor of `o` is not empty (the host encodes no map for an empty one); its extents
// are evaluated as parts of o's statement.
std::string KernelEmitter::tma_nonempty(const TmaOperand& o) {
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = o.load;
  std::string all = "true";
  for (const ExprP& e : {o.rows_e, o.cols_e}) {
    if (e->kind == ExprKind::Const) {
      if (e->ival <= 0) {
        all = "false";
        break;
      }
      continue;
    }
    std::string c = op("icmp sgt " + reg_type(e->type.elem) + " " + eval_scalar(e) + ", 0");
    all = all == "true" ? c : op("and i1 " + all + ", " + c);
  }
  cur_stmt_ = outer;
  return all;
}

// Planning stage `loops`: a wgmma cp.async ring on sm_90a becomes a TMA ring where both operand
// loads qualify (the ring's buffers and stages stay as planned).
void KernelEmitter::plan_tma(const Stmt& f, PipelinePlan& pp) {
  if (opt_.arch != "sm_90a" || pp.fma || !pp.mma.wgmma) return;
  if (checking()) {
    pp.not_tma = "bounds checks: the copies are checked lane by lane";
    return;
  }
  const int slot = f.slots[0];
  loop_info_[slot] = AxisInfo::scalar(std::min(axis_info(f.args[0]).div, axis_info(f.args[2]).div));
  std::vector<TmaOperand> ops;
  std::vector<TmaMap> maps;
  for (const Stmt* l : {pp.lx, pp.ly}) {
    TmaMap m;
    std::string w;
    auto o = tma_operand(*l, l == pp.ly, m, w);
    if (!o) {
      pp.not_tma = "the load of " + l->targets[0] + (l->loc.valid() ? " (line " + std::to_string(l->loc.line) + ")" : "") + " " + w;
      loop_info_.erase(slot);
      return;
    }
    ops.push_back(*o);
    maps.push_back(m);
  }
  loop_info_.erase(slot);
  if (!pp.carried.empty()) {
    pp.not_tma = "the operands' pointers are carried by the loop";
    return;
  }
  for (size_t i = 0; i < ops.size(); ++i) ops[i].map = plan_.map_for(ops[i].load, maps[i]);
  pp.kind = PipelinePlan::Kind::TmaRing;
  pp.tma = std::move(ops);
  pp.not_tma.clear();
  plan_specialize(f, pp);
  plan_cluster(f, pp);
}

namespace {

// Whether a node of kind k reads memory, moves values between threads (dot, reduce, scan and their
// combine arguments) or converts between pointers and integers: such a value is neither pure in a
// producer warp nor known to be the same in the two CTAs of a cluster.
bool reads_memory_or_threads(ExprKind k) {
  switch (k) {
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: return true;
    default: return false;
  }
}

// Whether e holds nothing but scalars and none of them is read from memory or moved between threads.
bool pure_scalar(const ExprP& e) {
  return !e || !any_expr(e, [](const Expr& x) { return reads_memory_or_threads(x.kind) || !x.type.is_scalar(); });
}

}  // namespace

// Planning stage `loops`, after plan_tma: the TMA ring gets a producer warp of its own when the
// kernel lets one more warp run beside the planned ones. That warp (num_warps, the one after the
// last consumer warpgroup) runs the statements before the loop with the others, so these may only
// compute values in registers (no memory, no data moved between threads: their tiles must be
// recomputable, their scalars pure); at the loop it issues every copy of the ring and leaves. The
// consumers' barriers from then on name their own threads (bar.sync 1, num_warps * 32); a device
// assert or print, whose reports meet at CTA-wide barriers, keeps the loop unspecialized.
void KernelEmitter::plan_specialize(const Stmt& f, PipelinePlan& pp) {
  if (!plan_.asks.warp_specialize.on) return;  // not asked for (--warp-specialize, the kernel's warp_specialize)
  pp.not_specialized = specialize_blocker(f, pp);
  pp.specialized = pp.not_specialized.empty();
}

std::string KernelEmitter::specialize_blocker(const Stmt& f, const PipelinePlan& pp) {
  if (opt_.bounds_checks) return "bounds checks (a hoisted loop is emitted twice, under a test)";
  if (threads_ + 32 > 1024) return "the kernel has 32 warps already";
  // One more warp costs the registers of 32 threads: only where the ring alone leaves room for one
  // CTA per SM, so the extra warp cannot cost a CTA (measured: two 128x128 CTAs of 8 + 1 warps do not
  // fit the register file where two of 8 do; bench/NOTES.md 33).
  const int64_t per_sm = max_dynamic_smem(plan_.arch) + 1024;
  if (2 * (pp.ring_bytes() + 1024) <= per_sm)
    return "the ring (" + std::to_string(pp.ring_bytes()) + " bytes) leaves room for two CTAs per SM, whose registers one more warp each would not leave";
  for (const auto& [key, lp] : plan_.loops)
    if (lp.pipeline && lp.pipeline->specialized && lp.loop != &f) return "an earlier loop of the kernel has the producer warp";
  if (reports_at_run_time()) return "the kernel asserts or prints (their reports meet at CTA-wide barriers)";
  for (const StmtP& s : k_.body) {
    if (s.get() == &f) return "";
    if (s->kind != StmtKind::Assign) return "a statement before the loop is not an assignment (line " + std::to_string(s->loc.line) + ")";
    for (const ExprP& v : s->args)
      if (v && !(v->type.is_scalar() ? pure_scalar(v) : recomputable(v, true)))
        return "a statement before the loop reads memory or moves data between threads (line " + std::to_string(s->loc.line) + ")";
  }
  return "the loop is inside another statement";
}

// Whether e has the same value in the two CTAs of a cluster along grid axis `axis` (program ids 2c
// and 2c + 1 there, equal on the other axes): it reads no program_id(axis) and no memory, or it is
// the second result of a swizzle2d whose j is program_id(axis) and whose other arguments are
// invariant. That result, (i * nj + j) % (group * nj) / min(ni - off_i, group), is the same for j = 2c
// and 2c + 1 when nj and the group's size are even; where they are not (an odd last group), the
// emitted kernel finds the boxes differ at run time and copies whole boxes (emit_tma_cluster).
bool KernelEmitter::pair_invariant(const ExprP& e, int axis, int loop_slot, int depth) {
  if (!e) return true;
  if (depth > 64 || reads_memory_or_threads(e->kind)) return false;
  switch (e->kind) {
    case ExprKind::ProgramId: return e->axis != axis;
    case ExprKind::Var: {
      if (e->slot < 0) return false;
      if (e->slot == loop_slot) return true;  // the loop variable: the same iterations in both
      const size_t s = static_cast<size_t>(e->slot);
      if (const Param* p = k_.find_param(e->name); p && p->slot == e->slot) return plan_.assigns[s] == 1;
      if (plan_.assigns[s] != 1) return false;
      if (plan_.single_def[s]) return pair_invariant(plan_.single_def[s], axis, loop_slot, depth + 1);
      bool ok = false, found = false;
      for_each_stmt(k_.body, [&](const Stmt& st) {
        if (found || st.kind != StmtKind::Assign || st.slots.size() != 2 || !st.args[0] || st.args[0]->kind != ExprKind::Swizzle2d) return;
        for (size_t t = 0; t < 2; ++t) {
          if (st.slots[t] != e->slot) continue;
          found = true;
          const ExprP& sw = st.args[0];
          ExprP j = sw->args[1];
          while (j->kind == ExprKind::Var && j->slot >= 0 && plan_.assigns[static_cast<size_t>(j->slot)] == 1 &&
                 plan_.single_def[static_cast<size_t>(j->slot)])
            j = plan_.single_def[static_cast<size_t>(j->slot)];
          bool rest = pair_invariant(sw->args[0], axis, loop_slot, depth + 1) && pair_invariant(sw->args[2], axis, loop_slot, depth + 1) &&
                      pair_invariant(sw->args[3], axis, loop_slot, depth + 1) && pair_invariant(sw->args[4], axis, loop_slot, depth + 1);
          ok = rest && (t == 1 ? (j->kind == ExprKind::ProgramId && j->axis == axis) || pair_invariant(j, axis, loop_slot, depth + 1)
                               : pair_invariant(j, axis, loop_slot, depth + 1));
        }
      });
      return found && ok;
    }
    default:
      for (const ExprP& a : e->args)
        if (!pair_invariant(a, axis, loop_slot, depth + 1)) return false;
      return true;
  }
}

// Planning stage `loops`, after plan_specialize (`--cluster`): the TMA ring runs in clusters of two
// CTAs along the first grid axis on which one operand's box is the same for both (the larger operand
// first). Every thread of both CTAs must reach the cluster barriers around the loop exactly once:
// the loop is a statement of the kernel's body, after assignments only, and nothing makes a CTA
// leave early (device asserts).
void KernelEmitter::plan_cluster(const Stmt& f, PipelinePlan& pp) {
  // Only where asked for (--cluster, the kernel's cluster(2)): on an H100 the clustered 128x256
  // matmuls ran at the plain ring's time within the spread of back-to-back timings, 2% slower in
  // one launch under ncu, and the 256x128 and 128x128 ones 8-30% slower (bench/NOTES.md 51).
  auto no = [&](const std::string& why) { pp.not_cluster = why; };
  if (!plan_.asks.cluster.on) return;
  if (!pp.specialized && pp.stages < 3) return no("the ring has fewer than 3 stages (thread 0 refills a stage an iteration late)");
  if (opt_.bounds_checks) return no("bounds checks (a hoisted loop is emitted twice, under a test)");
  for (const auto& [key, lp] : plan_.loops)
    if (lp.pipeline && lp.pipeline->cluster_axis >= 0) return no("an earlier loop of the kernel runs in clusters");
  if (reports_at_run_time()) return no("the kernel asserts or prints (a failing CTA leaves early, its peer would wait for it)");
  bool top = false;
  for (const StmtP& s : k_.body) {
    if (s.get() == &f) {
      top = true;
      break;
    }
    bool holds = false;
    for_each_stmt(std::vector<StmtP>{s}, [&](const Stmt& x) { holds = holds || &x == &f; });
    if (holds) return no("the loop is inside another statement (line " + std::to_string(s->loc.line) + ")");
    if (s->kind != StmtKind::Assign) return no("a statement before the loop is not an assignment (line " + std::to_string(s->loc.line) + ")");
  }
  if (!top) return no("the loop is inside another statement");
  std::vector<size_t> order{0, 1};
  auto bytes = [&](size_t i) { return pp.tma[i].load->args[0]->type.numel(); };
  if (bytes(0) > bytes(1)) std::swap(order[0], order[1]);
  const int rank = static_cast<int>(std::max<size_t>(1, k_.grid.size()));
  for (int axis = 0; axis < rank; ++axis)
    for (size_t i : order) {
      const TmaOperand& o = pp.tma[i];
      const int64_t R = o.load->args[0]->type.shape[0];
      if (R % 16) continue;  // halves of whole 8-row swizzle atoms
      bool inv = true;
      for (const auto* terms : {&o.row, &o.col, &o.planes})
        for (const ExprP& t : *terms) inv = inv && pair_invariant(t, axis, f.slots[0]);
      if (!inv) continue;
      pp.cluster_axis = axis;
      pp.cluster_operand = static_cast<int>(i);
      plan_.tma_maps[static_cast<size_t>(o.map)].box_rows = R / 2;
      pp.not_cluster.clear();
      return;
    }
  no("no operand's box is the same for program ids 2c and 2c + 1 on a grid axis");
}

std::string TmaMap::Plane::str() const {
  std::string s = value != 1 || params.empty() ? std::to_string(value) : "";
  for (const std::string& p : params) s += (s.empty() ? "" : " * ") + p;
  return s;
}

std::string describe(const TmaOperand& o, const TmaMap& m) {
  std::string who = o.load->targets.empty() ? std::string() : (o.b_operand ? "B " : "A ") + o.load->targets[0] + ": ";
  std::string planes;
  for (size_t p = 0; p < m.planes.size(); ++p)
    planes += (p ? ", " : " of plane ") + print_expr(o.planes[p]) + " (planes " + m.planes[p].str() + " apart)";
  return who + scalar_name(m.elem) + " tensor " + m.buf->name + "[" + m.rows.str() +
         ", " + m.cols.str() + "], rows " + m.stride.str() + " apart, box " + std::to_string(m.box_rows) + "x" + std::to_string(m.box_cols) +
         " at (" + join_terms(o.row) + ", " + join_terms(o.col) + ")" + planes;
}

// The i32 sum of index terms at the tile's element (0, 0).
std::string KernelEmitter::index_origin(const std::vector<ExprP>& terms) {
  std::string sum;
  for (const ExprP& t : terms) {
    std::string v = t->type.is_scalar() ? eval_scalar(t) : at(t, std::vector<std::string>(t->type.shape.size(), "0"));
    v = cast(t->type.elem, Scalar::I32, v);
    sum = sum.empty() ? v : op("add i32 " + sum + ", " + v);
  }
  return sum;
}

// The i32 shared-memory address of stage `st`'s mbarrier: the full one (copies landed) or, where the
// loop is specialized, the empty one (the consumers are done with the stage), 512 bytes above.
std::string KernelEmitter::tma_bar(const PipelinePlan& pp, const std::string& st, bool empty) {
  return op("add i32 " + smem_addr32() + ", " +
            op("add i32 " + op("mul i32 " + st + ", 8") + ", " + std::to_string(pp.stages * pp.stage_bytes + (empty ? 512 : 0))));
}

// Waits (every thread of the caller) until the phase of mbarrier `bar` with parity `parity` completed
// (acquire at CTA scope, also where a cluster's peer arrives on it: see cluster_arrive).
void KernelEmitter::tma_wait(const std::string& bar, const std::string& parity) {
  std::string wait = label("tma.wait"), ready = label("tma.ready");
  br(wait);
  start_block(wait);
  std::string r = op("call i32 asm sideeffect \"{\\0A\\09.reg .pred p;\\0A\\09mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\\0A\\09"
                     "selp.u32 $0, 1, 0, p;\\0A\\09}\", \"=r,r,r,~{memory}\"(i32 " + bar + ", i32 " + parity + ")");
  line("br i1 " + op("icmp eq i32 " + r + ", 0") + ", label %" + wait + ", label %" + ready);
  start_block(ready);
}

// Round r >= 1 refills the stage once the consumers released it in round r - 1 (the empty barrier's
// phase r - 1, of parity (r - 1) & 1).
void KernelEmitter::tma_wait_empty(const PipelinePlan& pp, const std::string& st, const std::string& round) {
  guarded(op("icmp ugt i32 " + round + ", 0"), [&] { tma_wait(tma_bar(pp, st, true), op("and i32 " + op("add i32 " + round + ", 1") + ", 1")); });
}

void KernelEmitter::tma_free(const PipelinePlan& pp, const std::string& stage) {
  line("call void asm sideeffect \"mbarrier.arrive.shared::cta.b64 _, [$0];\", \"r,~{memory}\"(i32 " + tma_bar(pp, stage, true) + ")");
}

std::string KernelEmitter::stage_before(const std::string& stage, int S) {
  return op("urem i32 " + op("add i32 " + stage + ", " + std::to_string(S - 1)) + ", " + std::to_string(S));
}

KernelEmitter::RingCounters KernelEmitter::ring_counters(const std::string& prefix, bool rounds) {
  RingCounters c{"%" + prefix + "st" + std::to_string(tmp_++), "%" + prefix + (rounds ? "rd" : "ph") + std::to_string(tmp_++)};
  prelude_ << "  " << c.stage << " = alloca i32\n  " << c.wraps << " = alloca i32\n";
  line("store i32 0, i32* " + c.stage);
  line("store i32 0, i32* " + c.wraps);
  return c;
}

// The copies of iteration `it` into stage `st`, completing on its full mbarrier: issued by the calling
// thread alone, the loop variable holding `it` (the operands' indices read it). In a clustered ring
// the shared operand's map has boxes of half its rows: where `mc` (i1) holds, this CTA (cluster rank
// `rank`) copies its half of each box and multicasts it to both CTAs (whose full mbarriers expect the
// whole operand, the other half coming from the peer); else it copies both halves itself. `mc` may be
// the constant "true" or "false" where the caller knows it.
void KernelEmitter::tma_issue(const PipelinePlan& pp, const std::string& st, const std::string& mc, const std::string& rank) {
  int64_t tx = 0;
  for (const TmaOperand& o : pp.tma) tx += o.load->args[0]->type.numel() * scalar_bytes(o.load->args[0]->type.elem);
  std::string bar = tma_bar(pp, st, false);
  line("call void asm sideeffect \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\", \"r,r,~{memory}\"(i32 " + bar + ", i32 " +
       std::to_string(tx) + ")");
  std::string off = op("add i32 " + smem_addr32() + ", " + op("mul i32 " + st + ", " + std::to_string(pp.stage_bytes)));
  for (const TmaOperand& o : pp.tma) {
    const bool shared = !mc.empty() && &o == &pp.tma[static_cast<size_t>(pp.cluster_operand)];
    tma_copy(o, o.b_operand ? op("add i32 " + off + ", " + std::to_string(pp.a_bytes)) : off, bar, shared ? mc : "", rank);
  }
}

// The copies of one operand's tile to shared address `dst` (i32), completing on mbarrier `bar`: one
// box, or (B, ring operands) one per 64 columns. With `mc` (the operand a 2-CTA cluster shares; i1,
// or the constant "true"/"false"), this CTA (rank `rank`) copies its half of each box, multicast to
// both CTAs, where mc holds, and both halves itself where it does not.
void KernelEmitter::tma_copy(const TmaOperand& o, const std::string& dst, const std::string& bar, const std::string& mc,
                             const std::string& rank) {
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = o.load;
  const TmaMap& m = plan_.tma_maps[static_cast<size_t>(o.map)];
  std::string row = index_origin(o.row), col = index_origin(o.col);
  std::string map = op("ptrtoint %dtsim.tmap* %tm." + std::to_string(o.map) + " to i64");
  const bool shared = !mc.empty();
  // A shared operand's map has boxes of half the tile's rows: its 64-column boxes lie twice
  // box_rows * 128 bytes apart in the stage.
  const int64_t boxes = m.box_cols < o.load->args[0]->type.shape[1] ? o.load->args[0]->type.shape[1] / m.box_cols : 1, box_stride = (shared ? 2 : 1) * m.box_rows * 128;
  // Planes: the box's outer coordinates, after the column and the row.
  std::vector<std::string> planes;
  for (const ExprP& p : o.planes) planes.push_back(index_origin({p}));
  auto copy = [&](const std::string& d, const std::string& c, const std::string& r, bool multicast) {
    std::vector<std::string> xs = {c, r};
    xs.insert(xs.end(), planes.begin(), planes.end());
    const size_t n = xs.size();
    const std::string b = "$" + std::to_string(2 + n);
    line("call void asm sideeffect \"cp.async.bulk.tensor." + std::to_string(n) + "d.shared::cluster.global.mbarrier::complete_tx::bytes" +
         (multicast ? ".multicast::cluster" : "") + " [$0], [$1, " + coord_list(2, n) + "], [" + b + "]" +
         (multicast ? ", $" + std::to_string(3 + n) : "") + ";\", \"r,l," + coord_constraints(n) + ",r" + (multicast ? ",h" : "") +
         ",~{memory}\"(i32 " + d + ", i64 " + map + ", " + coord_values(xs) + ", i32 " + bar + (multicast ? ", i16 3" : "") + ")");
  };
  std::string half_rows, half_bytes;
  if (shared) {  // this CTA's half: rows rank * R / 2 on, rank * R / 2 * 128 bytes into each box
    half_rows = op("add i32 " + row + ", " + op("mul i32 " + rank + ", " + std::to_string(m.box_rows)));
    half_bytes = op("mul i32 " + rank + ", " + std::to_string(m.box_rows * 128));
  }
  for (int64_t j = 0; j < boxes; ++j) {
    std::string d = j ? op("add i32 " + dst + ", " + std::to_string(j * box_stride)) : dst;
    std::string c = j ? op("add i32 " + col + ", " + std::to_string(j * 64)) : col;
    if (!shared) {
      copy(d, c, row, false);
      continue;
    }
    auto half = [&] { copy(op("add i32 " + d + ", " + half_bytes), c, half_rows, true); };
    auto whole = [&] {
      copy(d, c, row, false);
      copy(op("add i32 " + d + ", " + std::to_string(m.box_rows * 128)), c, op("add i32 " + row + ", " + std::to_string(m.box_rows)), false);
    };
    if (mc == "true") half();
    else if (mc == "false") whole();
    else {
      guarded(mc, half);
      guarded(op("xor i1 " + mc + ", true"), whole);
    }
  }
  cur_stmt_ = outer;
}

// A store TMA writes (KernelPlan::tma_stores): the value, in the layout it is computed in, written
// to shared memory at the floor in the boxes' layout (64-column boxes of R rows, R * 128 bytes apart,
// the 128-byte swizzle: conflict-free for an mma/wgmma accumulator's element pairs); a proxy fence
// and a barrier; thread 0 stores each box (cp.async.bulk.tensor, clipped by the tensor's extents,
// which is the mask), commits the group and waits until the boxes were read; a barrier before the
// memory is reused.
void KernelEmitter::emit_tma_store(const Stmt& s, const TmaOperand& o) {
  const Type& pt = s.args[0]->type;
  const int64_t R = pt.shape[0], C = pt.shape[1];
  TV v = eval(s.args[1]);
  const Dist& d = v.dist;
  note("store " + shape_str(pt.shape) + " by TMA: written from " + d.str() + " to shared memory in " + std::to_string(C / 64) +
       " 64-column box(es) of " + std::to_string(R) + " rows, stored by thread 0");
  use_smem(R * C * 2);
  barrier();
  int run = std::min(vector_run(d), 4);
  while (run > 1 && d.nregs() % run) run /= 2;
  std::string base = smem_gep("0");
  guarded(owner(d), [&] {
    for (int r0 = 0; r0 < d.nregs(); r0 += run) {
      if (first_copy(d, r0) != r0) continue;
      auto c = coords(d, r0);
      // box (col / 64) of R rows, then the swizzled row of the box (A's layout at K = 64)
      std::string box = op("mul i32 " + op("lshr i32 " + c[1] + ", 6") + ", " + std::to_string(R * 128));
      std::string in = wgmma_offset(c[0], op("and i32 " + c[1] + ", 63"), Shape{R, 64}, false);
      std::string p8 = op("getelementptr inbounds i8, i8 addrspace(3)* " + base + ", i32 " + op("add i32 " + box + ", " + in));
      std::string vt = "<" + std::to_string(run) + " x i16>", acc = "undef";
      for (int j = 0; j < run; ++j)
        acc = op("insertelement " + vt + " " + acc + ", i16 " + to_mem(pt.elem, cast(v.type.elem, pt.elem, v.at(r0 + j))) + ", i32 " +
                 std::to_string(j));
      std::string vp = op("bitcast i8 addrspace(3)* " + p8 + " to " + vt + " addrspace(3)*");
      line("store " + vt + " " + acc + ", " + vt + " addrspace(3)* " + vp + ", align " + std::to_string(2 * run));
    }
  });
  line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
  barrier();
  std::string nonempty = tma_nonempty(o);  // else every element is masked off
  guarded(nonempty == "true" ? op("icmp eq i32 %tid, 0") : op("and i1 " + op("icmp eq i32 %tid, 0") + ", " + nonempty), [&] {
    const TmaMap& m = plan_.tma_maps[static_cast<size_t>(o.map)];
    std::string row = index_origin(o.row), col = index_origin(o.col);
    std::vector<std::string> planes;
    for (const ExprP& p : o.planes) planes.push_back(index_origin({p}));
    std::string map = op("ptrtoint %dtsim.tmap* %tm." + std::to_string(o.map) + " to i64");
    for (int64_t j = 0; j < C / m.box_cols; ++j) {
      std::string src = op("add i32 " + smem_addr32() + ", " + std::to_string(j * R * 128));
      std::string cj = j ? op("add i32 " + col + ", " + std::to_string(j * m.box_cols)) : col;
      std::vector<std::string> xs = {cj, row};
      xs.insert(xs.end(), planes.begin(), planes.end());
      const size_t n = xs.size();
      line("call void asm sideeffect \"cp.async.bulk.tensor." + std::to_string(n) + "d.global.shared::cta.bulk_group [$0, " + coord_list(1, n) +
           "], [$" + std::to_string(1 + n) + "];\", \"l," + coord_constraints(n) + ",r,~{memory}\"(i64 " + map + ", " + coord_values(xs) +
           ", i32 " + src + ")");
    }
    line("call void asm sideeffect \"cp.async.bulk.commit_group;\", \"~{memory}\"()");
    line("call void asm sideeffect \"cp.async.bulk.wait_group.read 0;\", \"~{memory}\"()");
  });
  barrier();
}

// Thread 0 initializes the ring's mbarriers (full: one arrival, the copies' bytes; empty, where
// specialized: one arrival per consumer warp; where clustered: one arrival per CTA of the cluster)
// after a barrier of every thread (the ring's memory may hold another statement's data), and a
// second barrier publishes them.
void KernelEmitter::tma_init(const PipelinePlan& pp, const std::string& leader) {
  barrier();
  guarded(leader, [&] {
    for (int s = 0; s < pp.stages; ++s) {
      line("call void asm sideeffect \"mbarrier.init.shared::cta.b64 [$0], 1;\", \"r,~{memory}\"(i32 " + tma_bar(pp, std::to_string(s), false) + ")");
      if (pp.specialized || pp.cluster_axis >= 0)
        line("call void asm sideeffect \"mbarrier.init.shared::cta.b64 [$0], " +
             std::to_string(pp.specialized ? k_.num_warps * (pp.cluster_axis >= 0 ? 2 : 1) : 2) +
             ";\", \"r,~{memory}\"(i32 " + tma_bar(pp, std::to_string(s), true) + ")");
    }
    line("call void asm sideeffect \"fence.mbarrier_init.release.cluster;\", \"~{memory}\"()");
  });
  barrier();
}

// After the loop: the last group.
void KernelEmitter::tma_drain(const Stmt& f, const PipelinePlan& pp) {
  const Stmt* dot = pp.dot;
  loop_info_.erase(f.slots[0]);
  TV acc = eval(dot->args[0]->args[2]);
  assign(dot->slots[0], TV{dot->args[0]->type, acc.dist, wgmma_wait(acc.v, 0)});
}

// The mbarriers are invalidated before their memory is used for anything else.
void KernelEmitter::tma_release(const PipelinePlan& pp, const std::string& leader) {
  barrier();
  guarded(leader, [&] {
    for (int s = 0; s < pp.stages; ++s)
      for (bool empty : {false, true})
        if (!empty || pp.specialized || pp.cluster_axis >= 0)
          line("call void asm sideeffect \"mbarrier.inval.shared::cta.b64 [$0];\", \"r,~{memory}\"(i32 " + tma_bar(pp, std::to_string(s), empty) +
               ")");
  });
  barrier();
}

// The body of a TMA-ring iteration, by the consumers, once stage `cur` is full: the statements other
// than the two loads, the dot reading the stage (its previous group complete when it returns).
void KernelEmitter::tma_body(const Stmt& f, const PipelinePlan& pp, const std::string& cur) {
  const MmaPlan& p = pp.mma;
  const Expr& de = *pp.dot->args[0];
  std::string off = op("mul i32 " + cur + ", " + std::to_string(pp.stage_bytes));
  int64_t ring_floor = smem_floor_;
  for (auto& st : f.body) {
    if (st.get() == pp.lx || st.get() == pp.ly) continue;
    if (st.get() != pp.dot) {
      smem_floor_ = ring_floor + pp.ring_bytes();
      emit_stmt(*st);
      smem_floor_ = ring_floor;
      continue;
    }
    std::string boff = op("add i32 " + off + ", " + std::to_string(pp.a_bytes));
    TV acc = eval(de.args[2]);
    // Swizzled B: 64-column boxes K * 128 bytes apart.
    const int64_t K = de.args[0]->type.shape[1];
    int64_t b_atoms = wgmma_swizzled({K, p.N}, true) ? K * 128 : 0;
    TV r = wgmma_tiles(p, off, boff, acc, 1, false, b_atoms);
    ++info.mma_dots;
    assign(pp.dot->slots[0], TV{de.type, r.dist, r.v});
  }
}

// What every TMA-ring loop's emission starts with: the ring's shared memory, the loop counted in
// info, the plan's notes on f and its dot; returns thread 0's i1 (the thread that issues the copies
// where no producer warp does).
std::string KernelEmitter::tma_begin(const Stmt& f, const PipelinePlan& pp) {
  use_smem(pp.ring_bytes());
  ++info.pipelined_loops;
  ++info.tma_loops;
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = &f;
  note("pipelined: " + std::to_string(pp.stages) + " shared buffers, TMA copies of " + pp.lx->targets[0] + " and " + pp.ly->targets[0] + " " +
       std::to_string(pp.stages - 1) + " iteration(s) ahead, " +
       (pp.specialized ? "issued by a producer warp (warp " + std::to_string(k_.num_warps) + "), full and empty mbarriers per buffer" +
                             (pp.cluster_axis >= 0 ? ", in clusters of 2 CTAs along grid axis " + std::to_string(pp.cluster_axis) : std::string())
        : pp.cluster_axis >= 0
            ? "in clusters of 2 CTAs along grid axis " + std::to_string(pp.cluster_axis) + ", " +
                  pp.tma[static_cast<size_t>(pp.cluster_operand)].load->targets[0] + " multicast (half a box per CTA), full and empty mbarriers per buffer"
            : std::string("one mbarrier per buffer")));
  cur_stmt_ = pp.dot;
  note(describe(pp.mma) + ", operands from the TMA buffers");
  cur_stmt_ = outer;
  return op("icmp eq i32 %tid, 0");
}

// A loop over the ring's iterations: i from lo by step while i < hi, with the stage (0 .. S-1) and a
// counter of the stage's wraps: its parity (flipped each time the stage wraps to 0) or, with
// `rounds`, the number of wraps. `body` gets i, the stage and that counter.
void KernelEmitter::tma_loop(const LoopBounds& lb, int S, const std::string& prefix, bool rounds,
                             const std::function<void(const std::string&, const std::string&, const std::string&)>& body,
                             const RingCounters* counters) {
  const std::string& ty = lb.ty;
  std::string ctr = "%" + prefix + "ctr" + std::to_string(tmp_++);
  prelude_ << "  " << ctr << " = alloca " << ty << "\n";
  line("store " + ty + " " + lb.lo + ", " + ty + "* " + ctr);
  const RingCounters own = counters ? *counters : ring_counters(prefix, rounds);
  const std::string &sc = own.stage, &wr = own.wraps;
  std::string head = label(prefix == "w" ? "ws.head" : "tma.head"), bl = label(prefix == "w" ? "ws.body" : "tma.body"),
              exit = label(prefix == "w" ? "ws.exit" : "tma.exit");
  br(head);
  start_block(head);
  std::string i = op("load " + ty + ", " + ty + "* " + ctr);
  line("br i1 " + op("icmp slt " + ty + " " + i + ", " + lb.hi) + ", label %" + bl + ", label %" + exit);
  start_block(bl);
  std::string cur = op("load i32, i32* " + sc), w = op("load i32, i32* " + wr);
  body(i, cur, w);
  std::string next = op("urem i32 " + op("add i32 " + cur + ", 1") + ", " + std::to_string(S));
  line("store i32 " + next + ", i32* " + sc);
  std::string wrapped = op("zext i1 " + op("icmp eq i32 " + next + ", 0") + " to i32");
  line("store i32 " + op((rounds ? "add i32 " : "xor i32 ") + w + ", " + wrapped) + ", i32* " + wr);
  line("store " + ty + " " + op("add " + ty + " " + i + ", " + lb.step) + ", " + ty + "* " + ctr);
  br(head);
  start_block(exit);
}

// Emits loop f as planned by plan_tma (a TmaRing of plan_pipeline's buffers).
void KernelEmitter::emit_tma_for(const Stmt& f, const PipelinePlan& pp) {
  if (pp.specialized) return emit_tma_specialized(f, pp);
  if (pp.cluster_axis >= 0) return emit_tma_cluster(f, pp);
  const int S = pp.stages;
  const LoopBounds lb = loop_bounds(f);
  const std::string &ty = lb.ty, &kvar = lb.kvar, &lo = lb.lo, &hi = lb.hi, &step = lb.step;
  std::string leader = tma_begin(f, pp);
  // Copies of iteration `it` into buffer `st`, by thread 0.
  auto issue = [&](const std::string& it, const std::string& st) {
    line("store " + ty + " " + it + ", " + ty + "* " + kvar);
    guarded(op("and i1 " + leader + ", " + op("icmp slt " + ty + " " + it + ", " + hi)), [&] { tma_issue(pp, st); });
  };
  // A loop that runs zero times skips the pipeline (wgmma's accumulators: see emit_pipelined_for).
  std::string run = label("tma.run"), done = label("tma.done");
  line("br i1 " + op("icmp slt " + ty + " " + lo + ", " + hi) + ", label %" + run + ", label %" + done);
  start_block(run);
  tma_init(pp, leader);
  for (int s = 0; s < S - 1; ++s)
    issue(s ? op("add " + ty + " " + lo + ", " + op("mul " + ty + " " + step + ", " + std::to_string(s))) : lo, std::to_string(s));
  tma_loop(lb, S, "p", false, [&](const std::string& i, const std::string& cur, const std::string& phase) {
    tma_wait(tma_bar(pp, cur, false), phase);  // every thread waits for the buffer's copies
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
    tma_body(f, pp, cur);
    // Every warpgroup's previous group has completed: its buffer is refilled.
    barrier();
    std::string ahead = op("add " + ty + " " + i + ", " + op("mul " + ty + " " + step + ", " + std::to_string(S - 1)));
    std::string nst = stage_before(cur, S);
    issue(ahead, nst);
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  });
  tma_drain(f, pp);
  tma_release(pp, leader);
  br(done);
  start_block(done);
}

// Emits loop f with its producer warp (plan_specialize). Once the mbarriers are set up, warp
// num_warps leaves the consumers: its first thread walks the loop's iterations, waiting for stage s
// to be empty (from the second round on: every consumer warp arrived once its group reading the
// stage completed), then issuing the stage's copies; then the warp exits the kernel. The consumers
// walk the same iterations waiting only for full stages: wgmma on stage s, wait for the previous
// group, and each warp's lane 0 arrives on the previous stage's empty mbarrier. From the split on,
// barriers name the consumers' threads (bar.sync 1).
void KernelEmitter::emit_tma_specialized(const Stmt& f, const PipelinePlan& pp) {
  const int S = pp.stages;
  const LoopBounds lb = loop_bounds(f);
  const std::string &ty = lb.ty, &lo = lb.lo, &hi = lb.hi;
  ++info.specialized_loops;
  std::string leader = tma_begin(f, pp);
  // The split comes first, whether the loop runs or not: the producer warp never reaches the
  // statements after the loop.
  before_split_ = false;
  tma_init(pp, leader);
  const bool clustered = pp.cluster_axis >= 0;
  ClusterPair cp;
  if (clustered) {
    ++info.cluster_loops;
    cp = cluster_agree(pp, lb, leader);
  }
  std::string prod = label("ws.producer"), cons = label("ws.consumer");
  line("br i1 " + op("icmp sge i32 %tid, " + std::to_string(threads_)) + ", label %" + prod + ", label %" + cons);
  start_block(prod);
  guarded(op("icmp eq i32 %tid, " + std::to_string(threads_)), [&] {
    tma_loop(lb, S, "w", true, [&](const std::string& it, const std::string& st, const std::string& round) {
      tma_wait_empty(pp, st, round);
      line("store " + ty + " " + it + ", " + ty + "* " + lb.kvar);
      if (clustered) tma_issue(pp, st, cp.mc, cp.rank);
      else tma_issue(pp, st);
    });
  });
  if (clustered) cluster_sync();  // the whole producer warp, once the consumers of both CTAs are done
  br("exit");
  start_block(cons);
  bar_threads_ = threads_;
  // A loop that runs zero times skips the pipeline (wgmma's accumulators: see emit_pipelined_for).
  std::string run = label("tma.run"), done = label("tma.done");
  line("br i1 " + op("icmp slt " + ty + " " + lo + ", " + hi) + ", label %" + run + ", label %" + done);
  start_block(run);
  tma_loop(lb, S, "p", false, [&](const std::string& i, const std::string& cur, const std::string& phase) {
    tma_wait(tma_bar(pp, cur, false), phase);
    line("store " + ty + " " + i + ", " + ty + "* " + lb.kvar);
    tma_body(f, pp, cur);
    // The previous iteration's group has completed: its stage is released, once per warp.
    std::string prev = stage_before(cur, S);
    guarded(op("and i1 " + op("icmp sgt " + ty + " " + i + ", " + lo) + ", " + op("icmp eq i32 " + op("and i32 %tid, 31") + ", 0")), [&] {
      tma_free(pp, prev);
      // Clustered: the peer's producer multicasts into this stage too, so the warp releases it there
      // as well (without mc, a second arrival here: the empty mbarriers count both CTAs' warps).
      if (clustered) cluster_arrive(tma_bar(pp, prev, true), op("select i1 " + cp.mc + ", i32 " + cp.peer + ", i32 " + cp.rank));
    });
  });
  tma_drain(f, pp);
  br(done);
  start_block(done);
  if (clustered) cluster_sync();
  tma_release(pp, leader);
}


// The two CTAs of a cluster agree whether they multicast (after tma_init, every thread of both
// CTAs, whether the loop runs or not, so that both meet the same cluster barriers): every thread
// computes the shared operand's box origin at the loop's first iteration and the loop's bounds,
// thread 0 writes them at 768 bytes into the barrier area, a cluster barrier publishes mbarriers and
// values, and every thread reads the peer's (mapa + ld.shared::cluster). `mc` holds, the same in
// both CTAs, where the launch made clusters of two and the values agree.
KernelEmitter::ClusterPair KernelEmitter::cluster_agree(const PipelinePlan& pp, const LoopBounds& lb, const std::string& leader) {
  const std::string& ty = lb.ty;
  auto sreg = [&](const std::string& r) { return op("call i32 asm sideeffect \"mov.u32 $0, %" + r + ";\", \"=r\"()"); };
  ClusterPair cp;
  cp.rank = sreg("cluster_ctarank");
  std::string nranks = sreg("cluster_nctarank");
  cp.peer = op("xor i32 " + cp.rank + ", " + op("sub i32 " + nranks + ", 1"));
  const TmaOperand& so = pp.tma[static_cast<size_t>(pp.cluster_operand)];
  line("store " + ty + " " + lb.lo + ", " + ty + "* " + lb.kvar);
  const Stmt* outer = cur_stmt_;
  cur_stmt_ = so.load;
  std::vector<std::string> mine = {op("sext i32 " + index_origin(so.row) + " to i64"), op("sext i32 " + index_origin(so.col) + " to i64")};
  for (const ExprP& p : so.planes) mine.push_back(op("sext i32 " + index_origin({p}) + " to i64"));
  cur_stmt_ = outer;
  for (const std::string& v : {lb.lo, lb.hi}) mine.push_back(ty == "i64" ? v : op("sext " + ty + " " + v + " to i64"));
  std::string xbase = op("add i32 " + smem_addr32() + ", " + std::to_string(pp.stages * pp.stage_bytes + 768));
  guarded(leader, [&] {
    for (size_t w = 0; w < mine.size(); ++w)
      line("call void asm sideeffect \"st.shared.b64 [$0], $1;\", \"r,l,~{memory}\"(i32 " + op("add i32 " + xbase + ", " + std::to_string(8 * w)) +
           ", i64 " + mine[w] + ")");
  });
  cluster_sync();
  cp.mc = op("icmp eq i32 " + nranks + ", 2");
  std::string pbase = op("call i32 asm sideeffect \"mapa.shared::cluster.u32 $0, $1, $2;\", \"=r,r,r\"(i32 " + xbase + ", i32 " + cp.peer + ")");
  for (size_t w = 0; w < mine.size(); ++w) {
    std::string theirs = op("call i64 asm sideeffect \"ld.shared::cluster.b64 $0, [$1];\", \"=l,r,~{memory}\"(i32 " +
                            op("add i32 " + pbase + ", " + std::to_string(8 * w)) + ")");
    cp.mc = op("and i1 " + cp.mc + ", " + op("icmp eq i64 " + theirs + ", " + mine[w]));
  }
  return cp;
}

// Every thread of the cluster: barrier.cluster, arrive (release) and wait (acquire).
void KernelEmitter::cluster_sync() {
  line("call void asm sideeffect \"barrier.cluster.arrive.release;\", \"~{memory}\"()");
  line("call void asm sideeffect \"barrier.cluster.wait.acquire;\", \"~{memory}\"()");
}

// Arrives on mbarrier `bar` of cluster CTA `rank` (its address in that CTA's shared memory, mapped by
// mapa), with the arrive's default release at CTA scope: what it orders are the caller's wgmma reads of
// a stage, complete once wgmma.wait_group returned, before the peer's copies overwrite the stage (the
// handshake CUTLASS's cluster pipelines use). The cluster-scope forms (arrive.release.cluster, and
// try_wait.acquire.cluster on the other side) cost a fence each: on an H100 they made the clustered
// 128x256 matmul 1.7x slower than the plain ring (bench/NOTES.md 50).
void KernelEmitter::cluster_arrive(const std::string& bar, const std::string& rank) {
  line("call void asm sideeffect \"{\\0A\\09.reg .b32 ra;\\0A\\09mapa.shared::cluster.u32 ra, $0, $1;\\0A\\09"
       "mbarrier.arrive.shared::cluster.b64 _, [ra];\\0A\\09}\", \"r,r,~{memory}\"(i32 " + bar + ", i32 " + rank + ")");
}

// Emits loop f as a TMA ring in a 2-CTA cluster (plan_cluster), thread 0 issuing the copies. After
// cluster_agree: with `mc`, thread 0 copies half of the shared operand's boxes per stage and
// multicasts them. A stage is released once this CTA's threads finished the wgmma group reading it:
// in iteration t, after the CTA barrier that follows the wait for iteration t - 1's group, thread 0
// arrives on the empty mbarrier of t - 1's stage in its CTA and in the peer's. It refills one
// iteration later than the plain ring, so that the peer's arrival has had an iteration to land:
// in iteration t it waits for both releases of iteration t - 2's stage (made in iteration t - 1) and
// copies iteration t + S - 2 into it (the copies run S - 2 iterations ahead; the plan asks S >= 3).
// Without mc each CTA runs the plain ring (whole boxes, S - 1 ahead). A cluster barrier after the
// loop keeps each CTA alive until its peer stopped arriving on its mbarriers; the mbarriers are then
// invalidated.
void KernelEmitter::emit_tma_cluster(const Stmt& f, const PipelinePlan& pp) {
  const int S = pp.stages;
  const LoopBounds lb = loop_bounds(f);
  const std::string &ty = lb.ty, &kvar = lb.kvar, &lo = lb.lo, &hi = lb.hi, &step = lb.step;
  ++info.cluster_loops;
  std::string leader = tma_begin(f, pp);
  tma_init(pp, leader);
  ClusterPair cp = cluster_agree(pp, lb, leader);
  // `known`: mc where the caller is under a test of it ("true" or "false"), else empty.
  auto issue = [&](const std::string& it, const std::string& st, const std::string& extra, const std::string& known) {
    line("store " + ty + " " + it + ", " + ty + "* " + kvar);
    std::string c = op("and i1 " + leader + ", " + op("icmp slt " + ty + " " + it + ", " + hi));
    guarded(extra.empty() ? c : op("and i1 " + c + ", " + extra), [&] { tma_issue(pp, st, known.empty() ? cp.mc : known, cp.rank); });
  };
  std::string run = label("tma.run"), done = label("tma.done");
  line("br i1 " + op("icmp slt " + ty + " " + lo + ", " + hi) + ", label %" + run + ", label %" + done);
  start_block(run);
  for (int s = 0; s < S - 1; ++s)
    issue(s ? op("add " + ty + " " + lo + ", " + op("mul " + ty + " " + step + ", " + std::to_string(s))) : lo, std::to_string(s), "", "");
  tma_loop(lb, S, "p", false, [&](const std::string& i, const std::string& cur, const std::string& phase) {
    tma_wait(tma_bar(pp, cur, false), phase);
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
    tma_body(f, pp, cur);
    // Every warpgroup's previous group has completed: this CTA is done with iteration t - 1's stage.
    barrier();
    auto ahead = [&](int n) { return op("add " + ty + " " + i + ", " + op("mul " + ty + " " + step + ", " + std::to_string(n))); };
    auto stage = [&](int n) { return op("urem i32 " + op("add i32 " + cur + ", " + std::to_string(n)) + ", " + std::to_string(S)); };
    std::string later = op("icmp sgt " + ty + " " + i + ", " + lo);
    std::string plain = op("xor i1 " + cp.mc + ", true");
    guarded(op("and i1 " + op("and i1 " + leader + ", " + cp.mc) + ", " + later), [&] {
      std::string eb = tma_bar(pp, stage(S - 1), true);
      line("call void asm sideeffect \"mbarrier.arrive.shared::cta.b64 _, [$0];\", \"r,~{memory}\"(i32 " + eb + ")");
      cluster_arrive(eb, cp.peer);
      // Iteration t - 2's stage: its release number (t - 2) / S, parity `phase` flipped where t % S < 2.
      std::string nst = stage(S - 2), it = ahead(S - 2);
      guarded(op("and i1 " + op("icmp sgt " + ty + " " + i + ", " + op("add " + ty + " " + lo + ", " + step)) + ", " +
                 op("icmp slt " + ty + " " + it + ", " + hi)),
              [&] {
                tma_wait(tma_bar(pp, nst, true), op("xor i32 " + phase + ", " + op("zext i1 " + op("icmp ult i32 " + cur + ", 2") + " to i32")));
              });
      issue(it, nst, "", "true");
    });
    issue(ahead(S - 1), stage(S - 1), plain, "false");
    line("store " + ty + " " + i + ", " + ty + "* " + kvar);
  });
  tma_drain(f, pp);
  br(done);
  start_block(done);
  cluster_sync();
  tma_release(pp, leader);
}

}  // namespace dtsim::nvvm
