// The interpreter's dispatch: evaluates verified expressions and executes statements of one program
// instance (IR.h semantics). Variables live in frame slots resolved by the verifier.
#include <omp.h>

#include <chrono>
#include <cstring>
#include <ostream>
#include <sstream>

#include "interp/Elem.h"

namespace dtsim::exec {

namespace {

// Evaluates `x` converted to element type `to`; literals are built directly in that type.
const Value& operand(Ctx& c, const Expr& x, Scalar to, Value& tmp, Value& tmp2) {
  if (x.kind == ExprKind::Const) {
    tmp = scalar_value(to, x.fval, x.ival, x.is_float);
    return tmp;
  }
  const Value& v = eval_expr(c, x, tmp);
  if (!v.type.ptr && v.type.elem == to) return v;
  tmp2 = convert(v, to);
  return tmp2;
}

int64_t scalar_int(const Value& v) {
  return std::visit([](const auto& a) -> int64_t {
    using T = typename std::decay_t<decltype(a)>::value_type;
    if constexpr (std::is_floating_point_v<T>) return conv_elem<int64_t>(a.data()[0]);
    else return static_cast<int64_t>(a.data()[0]);
  }, v.data);
}

bool scalar_truth(const Value& v) {
  return std::visit([](const auto& a) { return a.data()[0] != 0; }, v.data);
}

int64_t eval_int(Ctx& c, const Expr& e) {
  if (c.fast && scalar_form(e)) return raw_int(eval_sv(c, e).r, e.type);
  Value t;
  return scalar_int(eval_expr(c, e, t));
}

// A value with the same elements and a new shape (no copy when `x` is the temporary).
const Value& reshaped(const Value& x, Value& tmp, const Type& rt) {
  if (&x != &tmp) tmp = x;
  XShape xs(rt.shape.size());
  for (size_t i = 0; i < rt.shape.size(); ++i) xs[i] = static_cast<size_t>(rt.shape[i]);
  std::visit([&](auto& a) { a.reshape(xs); }, tmp.data);
  tmp.type = rt;
  return tmp;
}

const Value& eval_binary(Ctx& c, const Expr& e, Value& tmp) {
  const Expr& A = *e.args[0];
  const Expr& B = *e.args[1];
  Value t1, t2, t3, t4;
  if (A.type.ptr && B.type.ptr) {
    const Value& a = eval_expr(c, A, t1);
    const Value& b = eval_expr(c, B, t3);
    tmp = ptr_compare(e.bop, a, b, e.type);
    return tmp;
  }
  if (A.type.ptr || B.type.ptr) {
    const Expr& P = A.type.ptr ? A : B;
    const Expr& I = A.type.ptr ? B : A;
    const Value& p = eval_expr(c, P, t1);
    const Value& off = operand(c, I, Scalar::I64, t3, t4);
    tmp = ptr_arith(e.bop, p, off, e.type, A.type.ptr);
    return tmp;
  }
  Scalar ct = e.type.elem;
  if (binop_is_compare(e.bop)) ct = promote_operands(A, B);
  else if (e.bop == BinOp::LAnd || e.bop == BinOp::LOr) ct = Scalar::I1;
  const Value& a = operand(c, A, ct, t1, t2);
  const Value& b = operand(c, B, ct, t3, t4);
  tmp = binary_op(e.bop, a, b, e.type, e.loc);
  return tmp;
}

const Value& eval_where(Ctx& c, const Expr& e, Value& tmp) {
  Value t0, t1, t2, t3, t4;
  const Value& cond = eval_expr(c, *e.args[0], t0);
  if (e.type.ptr) {
    const Value& a = eval_expr(c, *e.args[1], t1);
    const Value& b = eval_expr(c, *e.args[2], t3);
    where_ptr_into(tmp, cond, a, b, e.type);
    return tmp;
  }
  const Value& a = operand(c, *e.args[1], e.type.elem, t1, t2);
  const Value& b = operand(c, *e.args[2], e.type.elem, t3, t4);
  tmp = where_op(cond, a, b, e.type);
  return tmp;
}

std::array<int64_t, 2> eval_swizzle(Ctx& c, const Expr& e) {
  int64_t v[5];
  for (size_t i = 0; i < 5; ++i) v[i] = eval_int(c, *e.args[i]);
  return swizzle2d(v[0], v[1], v[2], v[3], v[4], e.loc);
}

}  // namespace

// A reading of the machine (IR.h's DT_FOR_EACH_MACHINE_REG): the host's clocks in ns, the OpenMP
// thread running the instance as its "SM".
static int64_t machine_reading(MachineReg r) {
  using namespace std::chrono;
  switch (r) {
    case MachineReg::GlobalTimer: return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
    case MachineReg::GlobalTimerLo: return static_cast<int32_t>(static_cast<uint32_t>(machine_reading(MachineReg::GlobalTimer)));
    case MachineReg::GlobalTimerHi: return static_cast<int32_t>(static_cast<uint64_t>(machine_reading(MachineReg::GlobalTimer)) >> 32);
    case MachineReg::Clock64: return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
    case MachineReg::Clock: return static_cast<int32_t>(static_cast<uint32_t>(machine_reading(MachineReg::Clock64)));
    case MachineReg::SmId: return omp_get_thread_num();
    case MachineReg::NSmId: return omp_get_num_threads();
  }
  return 0;
}

const Value& eval_expr(Ctx& c, const Expr& e, Value& tmp) {
  if (c.fast && e.kind != ExprKind::Var && e.kind != ExprKind::Const && scalar_form(e)) {
    tmp = box(e.type, eval_sv(c, e));
    return tmp;
  }
  switch (e.kind) {
    case ExprKind::Const:
      tmp = scalar_value(e.type.elem, e.fval, e.ival, e.is_float);
      return tmp;
    case ExprKind::Var: {
      c.flush(e.slot);
      const Value& v = c.f->slots[static_cast<size_t>(e.slot)];
      if (!v.defined()) throw RuntimeFault(e.loc, "'" + e.name + "' is used before it is assigned");
      return v;
    }
    case ExprKind::ProgramId:
      tmp = scalar_value(Scalar::I32, 0, c.f->pid[static_cast<size_t>(e.axis)], false);
      return tmp;
    case ExprKind::NumPrograms:
      tmp = scalar_value(Scalar::I32, 0, c.f->grid[static_cast<size_t>(e.axis)], false);
      return tmp;
    case ExprKind::Arange:
      tmp = arange_op(e.ints[0], e.ints[1]);
      return tmp;
    case ExprKind::Full: {
      Value t1, t2;
      tmp = full_op(operand(c, *e.args.back(), e.type.elem, t1, t2), e.type);
      return tmp;
    }
    case ExprKind::Unary: {
      Value t1, t2;
      tmp = unary_op(e.uop, operand(c, *e.args[0], e.type.elem, t1, t2), e.type);
      return tmp;
    }
    case ExprKind::Binary: return eval_binary(c, e, tmp);
    case ExprKind::Where: return eval_where(c, e, tmp);
    case ExprKind::Cast: {
      Value t1;
      tmp = convert(eval_expr(c, *e.args[0], t1), e.dtype);
      return tmp;
    }
    case ExprKind::Bitcast: {
      Value t1;
      tmp = bitcast_op(eval_expr(c, *e.args[0], t1), e.dtype);
      return tmp;
    }
    case ExprKind::ExpandDims:
    case ExprKind::Reshape: return reshaped(eval_expr(c, *e.args[0], tmp), tmp, e.type);
    case ExprKind::Trans: {
      Value t1;
      tmp = trans_op(eval_expr(c, *e.args[0], t1), e.ints);
      return tmp;
    }
    case ExprKind::Broadcast: {
      Value t1;
      tmp = broadcast_op(eval_expr(c, *e.args[0], t1), e.type.shape);
      return tmp;
    }
    case ExprKind::Load: {
      Value tp, tm, to1, to2;
      const Value& p = eval_expr(c, *e.args[0], tp);
      const Value* m = e.args[1] ? &eval_expr(c, *e.args[1], tm) : nullptr;
      const Value* o = e.args[2] ? &operand(c, *e.args[2], e.type.elem, to1, to2) : nullptr;
      tmp = load_op(c, e, p, m, o);
      return tmp;
    }
    case ExprKind::Dot: {
      Value ta, tb, tc;
      const Value& a = eval_expr(c, *e.args[0], ta);
      const Value& b = eval_expr(c, *e.args[1], tb);
      const Value* acc = e.args[2] ? &eval_expr(c, *e.args[2], tc) : nullptr;
      tmp = dot_op(a, b, acc, e.type, e.tf32);
      return tmp;
    }
    case ExprKind::Reduce: {
      Value t1;
      if (!e.fns.empty()) return tmp = combine_n_op(c, e, operands(c, e));
      const Value& x = eval_expr(c, *e.args[0], t1);
      tmp = e.fn ? combine_op(c, e, x) : reduce_op(e.rop, x, static_cast<int>(e.ints[0]), e.type);
      return tmp;
    }
    case ExprKind::Scan: {
      Value t1;
      if (!e.fns.empty()) return tmp = combine_n_op(c, e, operands(c, e));
      const Value& x = eval_expr(c, *e.args[0], t1);
      tmp = e.fn ? combine_op(c, e, x) : scan_op(e.sop, x, static_cast<int>(e.ints[0]), e.reverse, e.type);
      return tmp;
    }
    case ExprKind::CombineArg:
      if (static_cast<size_t>(e.axis) >= c.combine_args.size() || !c.combine_args[static_cast<size_t>(e.axis)])
        internal_error("Interp", "a combine argument outside its function");
      return *c.combine_args[static_cast<size_t>(e.axis)];
    case ExprKind::Swizzle2d:
      tmp = scalar_value(Scalar::I32, 0, eval_swizzle(c, e)[0], false);
      return tmp;
    case ExprKind::IntToPtr: {
      Value t1;
      tmp = int_to_ptr_op(c, e, eval_expr(c, *e.args[0], t1));
      return tmp;
    }
    case ExprKind::PtrToInt: {
      Value t1;
      tmp = ptr_to_int_op(c, eval_expr(c, *e.args[0], t1));
      return tmp;
    }
    case ExprKind::Machine:
      tmp = scalar_value(e.type.elem, 0, machine_reading(static_cast<MachineReg>(e.axis)), false);
      return tmp;
    case ExprKind::Gather: {
      Value ts, ti;
      const Value& src = eval_expr(c, *e.args[0], ts);
      tmp = gather_op(src, eval_expr(c, *e.args[1], ti), static_cast<int>(e.ints[0]), e.type);
      return tmp;
    }
    case ExprKind::Histogram: {
      Value tx, tm;
      const Value& x = eval_expr(c, *e.args[0], tx);
      const Value* m = e.args.size() > 2 && e.args[2] ? &eval_expr(c, *e.args[2], tm) : nullptr;
      tmp = histogram_op(x, m, e.ints[0]);
      return tmp;
    }
  }
  internal_error("Interp", "bad expression kind");
}

// A reduce's line of n values folded as a tree of adjacent pairs, the order kept: (0, 1), (2, 3) ...,
// then (0, 2), (4, 6) ..., each pair's result in its lower slot, slot 0 the whole line's. For an
// associative combine this is the same value as a left-to-right fold, with a rounding error that
// grows with log n, as the GPU's reduction (each thread's elements, then lanes by shuffles) has.
template <class F> void pair_tree(int64_t n, F&& combine) {
  for (int64_t step = 1; step < n; step *= 2)
    for (int64_t lo = 0; lo + step < n; lo += 2 * step) combine(lo, lo + step);
}

Value combine_op(Ctx& c, const Expr& e, const Value& x) {
  const bool scan = e.kind == ExprKind::Scan;
  const Shape& s = x.type.shape;
  const int axis = static_cast<int>(e.ints[0]);
  int64_t outer = 1, inner = 1, n = s[static_cast<size_t>(axis)];
  for (int i = 0; i < axis; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
  const Scalar t = x.type.elem;
  Value out = alloc(Type{t, false, scan ? s : e.type.shape});
  Value a = alloc(Type{t, false, {}}), b = alloc(Type{t, false, {}});
  std::vector<const Value*> saved = c.combine_args;
  c.combine_args = {&a, &b};
  with_storage(storage_of(t, false), [&](auto tag) {
    using T = decltype(tag);
    const T* px = data<T>(x);
    T* po = data<T>(out);
    std::vector<T> line;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t base = o * n * inner + j;
        auto at = [&](int64_t k) { return base + ((scan && e.reverse) ? n - 1 - k : k) * inner; };
        if (!scan) {  // a reduce: the line folded as a tree of adjacent pairs (see pair_tree)
          line.resize(static_cast<size_t>(n));
          for (int64_t k = 0; k < n; ++k) line[static_cast<size_t>(k)] = px[at(k)];
          pair_tree(n, [&](int64_t lo, int64_t hi) {
            data<T>(a)[0] = line[static_cast<size_t>(lo)];
            data<T>(b)[0] = line[static_cast<size_t>(hi)];
            Value tmp;
            line[static_cast<size_t>(lo)] = data<T>(eval_expr(c, *e.fn, tmp))[0];
          });
          po[o * inner + j] = line[0];
          continue;
        }
        T acc = px[at(0)];
        po[at(0)] = acc;
        for (int64_t k = 1; k < n; ++k) {
          data<T>(a)[0] = acc;
          data<T>(b)[0] = px[at(k)];
          Value tmp;
          const Value& r = eval_expr(c, *e.fn, tmp);
          acc = data<T>(r)[0];
          po[at(k)] = acc;
        }
      }
    return 0;
  });
  c.combine_args = saved;
  return out;
}

// The operands of a reduce / scan of several (Expr::fns), evaluated.
std::vector<Value> operands(Ctx& c, const Expr& e) {
  std::vector<Value> xs(e.args.size());
  for (size_t i = 0; i < e.args.size(); ++i) {
    Value t;
    const Value& v = eval_expr(c, *e.args[i], t);
    xs[i] = &v == &t ? std::move(t) : v;
  }
  return xs;
}

// Component e.part of the reduce / scan of several operands, each line folded as combine_op folds
// one operand (a reduce by pair_tree, a scan left to right): every step computes all N components
// from the left values (CombineArg 0..N-1) and the right ones (N..2N-1).
Value combine_n_op(Ctx& c, const Expr& e, const std::vector<Value>& xs) {
  const bool scan = e.kind == ExprKind::Scan;
  const size_t N = xs.size();
  const Shape& s = xs[0].type.shape;
  const int axis = static_cast<int>(e.ints[0]);
  int64_t outer = 1, inner = 1, n = s[static_cast<size_t>(axis)];
  for (int i = 0; i < axis; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
  const size_t part = static_cast<size_t>(e.part);
  Value out = alloc(Type{xs[part].type.elem, false, scan ? s : e.type.shape});
  // the arguments: a0..aN-1 (the values so far), b0..bN-1 (the next elements), as scalars
  std::vector<Value> args;
  for (size_t i = 0; i < 2 * N; ++i) args.push_back(alloc(Type{xs[i % N].type.elem, false, {}}));
  std::vector<const Value*> saved = c.combine_args;
  c.combine_args.clear();
  for (Value& a : args) c.combine_args.push_back(&a);
  // copies element k of operand i into scalar v (same storage type)
  auto get = [&](const Value& x, int64_t k, Value& v) {
    with_storage(storage_of(x.type.elem, false), [&](auto tag) {
      using T = decltype(tag);
      data<T>(v)[0] = data<T>(x)[k];
      return 0;
    });
  };
  auto put = [&](Value& o, int64_t k, const Value& v) {
    with_storage(storage_of(o.type.elem, false), [&](auto tag) {
      using T = decltype(tag);
      data<T>(o)[k] = data<T>(v)[0];
      return 0;
    });
  };
  std::vector<Value> next(N);
  // a reduce: per operand, the line's values (one scalar each), folded by pair_tree
  std::vector<std::vector<Value>> line(scan ? 0 : N);
  for (size_t i = 0; i < line.size(); ++i)
    for (int64_t k = 0; k < n; ++k) line[i].push_back(alloc(Type{xs[i].type.elem, false, {}}));
  auto assign = [&](Value& to, const Value& from) {
    with_storage(storage_of(to.type.elem, false), [&](auto tag) {
      using T = decltype(tag);
      data<T>(to)[0] = data<T>(from)[0];
      return 0;
    });
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t base = o * n * inner + j;
      auto at = [&](int64_t k) { return base + ((scan && e.reverse) ? n - 1 - k : k) * inner; };
      if (!scan) {
        for (size_t i = 0; i < N; ++i)
          for (int64_t k = 0; k < n; ++k) get(xs[i], at(k), line[i][static_cast<size_t>(k)]);
        pair_tree(n, [&](int64_t lo, int64_t hi) {
          for (size_t i = 0; i < N; ++i) {
            assign(args[i], line[i][static_cast<size_t>(lo)]);
            assign(args[N + i], line[i][static_cast<size_t>(hi)]);
          }
          for (size_t i = 0; i < N; ++i) {  // every component from the same arguments
            Value tmp;
            const Value& r = eval_expr(c, *e.fns[i], tmp);
            next[i] = &r == &tmp ? std::move(tmp) : r;
          }
          for (size_t i = 0; i < N; ++i) assign(line[i][static_cast<size_t>(lo)], next[i]);
        });
        put(out, o * inner + j, line[part][0]);
        continue;
      }
      for (size_t i = 0; i < N; ++i) get(xs[i], at(0), args[i]);
      if (scan) put(out, at(0), args[part]);
      for (int64_t k = 1; k < n; ++k) {
        for (size_t i = 0; i < N; ++i) get(xs[i], at(k), args[N + i]);
        for (size_t i = 0; i < N; ++i) {  // every component from the same arguments
          Value tmp;
          const Value& r = eval_expr(c, *e.fns[i], tmp);
          next[i] = &r == &tmp ? std::move(tmp) : r;
        }
        for (size_t i = 0; i < N; ++i) assign(args[i], next[i]);
        put(out, at(k), args[part]);
      }
    }
  c.combine_args = saved;
  return out;
}

namespace {

void assign(Ctx& c, int slot, const Value& v, Value& tmp) {
  c.invalidate(slot);
  Value& dst = c.f->slots[static_cast<size_t>(slot)];
  if (&v == &tmp) dst = std::move(tmp);
  else dst = v;
}

void set_loop_var(Ctx& c, int slot, const Type& t, int64_t v) {
  Sv x{t.elem == Scalar::I64 ? rmake<int64_t>(v) : rmake<int32_t>(static_cast<int32_t>(v)), -1};
  if (c.regs) write_slot(c, slot, t, x);
  else write_value(c.f->slots[static_cast<size_t>(slot)], t, x);
}

void exec_print(Ctx& c, const Stmt& s) {
  std::string line = "pid " + pid_str(c, c.f->pid) + " " + s.text;
  for (const ExprP& a : s.args) {
    Value t;
    line += " ";
    size_t nl = line.rfind('\n');
    int col = static_cast<int>(line.size() - (nl == std::string::npos ? 0 : nl + 1));
    line += format_value(eval_expr(c, *a, t), nullptr, col);  // a multi-line tile stays aligned
  }
  line += "\n";
  if (c.print_buf) *c.print_buf += line;
  else *(c.rs->opt->out ? c.rs->opt->out : &std::cout) << line << std::flush;
}

void exec_assert(Ctx& c, const Stmt& s) {
  Value t;
  const Value& v = eval_expr(c, *s.args[0], t);
  const uint8_t* p = data<uint8_t>(v);
  int64_t n = numel(v), bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i)
    if (!p[i] && bad++ == 0) first = i;
  if (!bad) return;
  Finding f;
  // a check of ir/Undefined.h: lanes a Triton load left undefined reach a use that matters
  f.kind = s.undefined_lanes ? Finding::Uninitialized : Finding::AssertFailed;
  f.loc = s.loc;
  f.pid = c.f->pid;
  f.lanes = bad;
  std::string head = s.undefined_lanes ? s.text : s.text.empty() ? "assertion failed" : "assertion failed: " + s.text;
  std::string lane = lane_text(first, v.type.shape);
  // the values the assert names (args after the condition) at that lane
  for (size_t k = 1; k < s.args.size(); ++k) {
    Value tk;
    const Value& x = eval_expr(c, *s.args[k], tk);
    lane += (k == 1 ? ": " : ", ") + format_element(x, numel(x) == n ? first : 0);
  }
  f.message = format_diag(s.loc, "error", head) + (s.loc2.valid() ? format_diag(s.loc2, "note", "from this schedule line") : "") + "  " +
              std::to_string(bad) + " of " + std::to_string(n) + (s.undefined_lanes ? " lanes undefined" : " lanes false") + " (first: lane " + lane + "); pid " +
              pid_str(c, c.f->pid) + "\n";
  report_finding(c, std::move(f));
}

// One trip of loop `s` (for or while): its body, then the debugger's after-iteration hook. False
// when the body returned (the loop is then taken off the loop stack).
bool loop_trip(Ctx& c, const Stmt& s, DebugHooks* hooks) {
  // A trip of an empty body counts as one statement, so --max-steps and --timeout bound it too.
  if (s.body.empty() && ++c.steps >= c.step_check) [[unlikely]] step_poll(c, s);
  if (exec_block(c, s.body) == Flow::Return) {
    c.f->loop_stack.pop_back();
    return false;
  }
  c.stmt = &s;
  if (hooks) hooks->after_loop_iteration(*c.f, s);
  return true;
}

Flow exec_for(Ctx& c, const Stmt& s) {
  int64_t b[3];
  for (size_t i = 0; i < 3; ++i) {
    const SNode* r = c.sp ? c.sp->roots[static_cast<size_t>(s.id)][i] : nullptr;
    b[i] = r ? raw_int(run_node(c, r).r, r->t) : eval_int(c, *s.args[i]);
  }
  int64_t lo = b[0], hi = b[1], step = b[2];
  if (step <= 0) throw RuntimeFault(s.args[2]->loc.valid() ? s.args[2]->loc : s.loc, "range() step must be positive, got " + std::to_string(step));
  int slot = s.slots[0];
  const Type& vt = c.f->kernel->slot_types[static_cast<size_t>(slot)];
  DebugHooks* hooks = c.hooks;
  c.f->loop_stack.push_back(&s);
  for (int64_t v = lo; v < hi; v += step) {
    set_loop_var(c, slot, vt, v);
    if (!loop_trip(c, s, hooks)) return Flow::Return;
  }
  c.f->loop_stack.pop_back();
  return Flow::Next;
}

// A fingerprint of all that an iteration of a loop reads or changes: the instance's slots and the
// registers ahead of them, its pointer tiles held as rows plus columns, its loads left in buffers,
// its lock words, and every buffer's bytes (Stuck below).
uint64_t state_fingerprint(Ctx& c) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, b + i, 8);
      h = (h ^ w) * 1099511628211ull;
    }
    for (; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    h = (h ^ n) * 1099511628211ull;
  };
  for (const Value& v : c.f->slots) {
    std::visit([&](const auto& a) { mix(a.data(), a.size() * sizeof(*a.data())); }, v.data);
    mix(&v.buffer, sizeof v.buffer);
  }
  const size_t ns = c.f->slots.size();
  if (c.rvalid)
    for (size_t i = 0; i < ns; ++i) {
      mix(&c.rvalid[i], 1);
      if (c.rvalid[i] >= 2) {
        mix(&c.regs[i].r, sizeof c.regs[i].r);
        mix(&c.regs[i].buffer, sizeof c.regs[i].buffer);
      }
    }
  if (c.views)
    for (size_t i = 0; i < ns; ++i) {
      mix(&c.views[i].p, sizeof c.views[i].p);
      mix(&c.views[i].buffer, sizeof c.views[i].buffer);
    }
  if (c.rps && c.sp)
    for (int i = 0; i < c.sp->nrp; ++i) {
      const RowPtr& r = c.rps[i];
      mix(r.rows.data(), r.rows.size() * sizeof(int64_t));
      mix(r.cols.data(), r.cols.size() * sizeof(int64_t));
      mix(&r.buffer, sizeof r.buffer);
    }
  for (const auto& [b, e] : c.locks) {
    mix(&b, sizeof b);
    mix(&e, sizeof e);
  }
  for (const Buffer& b : (c.rs ? c.rs->buffers : c.f->buffers)->list) mix(b.data(), b.size_bytes());
  return h;
}

// A runtime while loop that cannot end. With one instance running at a time, an iteration that
// leaves the instance's state and memory as it found them is repeated by every later one, so the
// loop never ends (typically a spin on a flag that an instance later in the order would set). After
// 2^20 trips, then after each doubling, one trip is checked; checks stop under the debugger (which
// shows the loop) and when instances run in parallel (another may set the flag).
struct Stuck {
  int64_t trips = 0, next = int64_t{1} << 20;
  uint64_t before = 0;
  bool armed = false;
  void trip(Ctx& c, const Stmt& s) {
    if (armed) {
      armed = false;
      c.flush_all();
      if (state_fingerprint(c) == before)
        throw RuntimeFault(s.loc, "this while loop cannot end: a trip changed neither this instance's values nor memory, so every "
                                  "later trip repeats it (a wait for another instance? dtsim runs one instance at a time; "
                                  "--threads=N runs N at once)");
    }
    if (++trips < next || c.hooks || !c.rs || c.rs->parallel) return;
    next *= 2;
    c.flush_all();
    before = state_fingerprint(c);
    armed = true;
  }
};

// `while cond { body }`: the condition is evaluated before every trip. There is no trip limit
// (as in Python, a loop whose condition never turns false runs until a limit stops it, or Stuck
// finds that it cannot end).
Flow exec_while(Ctx& c, const Stmt& s) {
  const SNode* r = c.sp ? c.sp->roots[static_cast<size_t>(s.id)][0] : nullptr;
  DebugHooks* hooks = c.hooks;
  c.f->loop_stack.push_back(&s);
  Stuck stuck;
  for (;;) {
    stuck.trip(c, s);
    bool cond;
    if (r) {
      cond = raw_truth(run_node(c, r).r, r->t);
    } else {
      Value t;
      cond = scalar_truth(eval_expr(c, *s.args[0], t));
    }
    if (!cond) break;
    if (!loop_trip(c, s, hooks)) return Flow::Return;
  }
  c.f->loop_stack.pop_back();
  return Flow::Next;
}

// Every statement form not handled by exec_stmt's compiled scalar paths (kept out of line so that
// the hot path needs no large stack frame).
__attribute__((noinline)) Flow exec_stmt_general(Ctx& c, const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Assign: {
      const Expr& v = *s.args[0];
      if (s.targets.size() == 2) {
        auto ij = eval_swizzle(c, v);
        for (size_t i = 0; i < 2; ++i) {
          c.invalidate(s.slots[i]);
          c.f->slots[static_cast<size_t>(s.slots[i])] = scalar_value(Scalar::I32, 0, ij[i], false);
        }
        return Flow::Next;
      }
      if (c.sp) {
        if (const SNode* r = c.sp->roots[static_cast<size_t>(s.id)][0]) {
          write_slot(c, s.slots[0], r->t, run_node(c, r));
          return Flow::Next;
        }
        if (const TNode* t = c.sp->troots[static_cast<size_t>(s.id)][0]) {
          assign_tnode(c, s.slots[0], *t);
          return Flow::Next;
        }
      }
      Value t;
      assign(c, s.slots[0], eval_expr(c, v, t), t);
      return Flow::Next;
    }
    case StmtKind::Store: {
      if (c.sp) {
        const auto& r = c.sp->roots[static_cast<size_t>(s.id)];
        if (r[0]) {
          Sv p = run_node(c, r[0]);
          Sv v = run_node(c, r[1]);
          Sv m;
          if (r[2]) m = run_node(c, r[2]);
          store_scalar(c, r[0]->t, p, r[1]->t, v.r, r[2] ? &m : nullptr);
          return Flow::Next;
        }
        const auto& t = c.sp->troots[static_cast<size_t>(s.id)];
        if (t[0]) {
          store_tnode(c, s, t);
          return Flow::Next;
        }
      }
      Value tp, tv, tm;
      const Value& p = eval_expr(c, *s.args[0], tp);
      const Expr& ve = *s.args[1];
      const Value& v = ve.kind == ExprKind::Const ? (tv = scalar_value(s.args[0]->type.elem, ve.fval, ve.ival, ve.is_float)) : eval_expr(c, ve, tv);
      const Value* m = s.args[2] ? &eval_expr(c, *s.args[2], tm) : nullptr;
      store_op(c, p, v, m);
      return Flow::Next;
    }
    case StmtKind::Atomic: {
      if (c.sp && c.rps) {
        const auto& t = c.sp->troots[static_cast<size_t>(s.id)];
        if (t[0]) {
          Value old = atomic_tnode(c, s, t);
          if (!s.targets.empty()) assign(c, s.slots[0], old, old);
          return Flow::Next;
        }
      }
      Value tp, t1, t2;
      const Value& p = eval_expr(c, *s.args[0], tp);
      const Value& a1 = eval_expr(c, *s.args[1], t1);
      const Value* a2 = s.args[2] ? &eval_expr(c, *s.args[2], t2) : nullptr;
      Value old = atomic_op(c, s, p, a1, a2);
      if (!s.targets.empty()) assign(c, s.slots[0], old, old);
      return Flow::Next;
    }
    case StmtKind::For: return exec_for(c, s);
    case StmtKind::While: return exec_while(c, s);
    case StmtKind::If: {
      if (c.sp) {
        if (const SNode* r = c.sp->roots[static_cast<size_t>(s.id)][0]) return exec_block(c, raw_truth(run_node(c, r).r, r->t) ? s.body : s.orelse);
      }
      Value t;
      bool cond = scalar_truth(eval_expr(c, *s.args[0], t));
      return exec_block(c, cond ? s.body : s.orelse);
    }
    case StmtKind::Print: exec_print(c, s); return Flow::Next;
    case StmtKind::Assert: exec_assert(c, s); return Flow::Next;
    case StmtKind::Return: return Flow::Return;
  }
  internal_error("Interp", "bad statement kind");
}

__attribute__((always_inline)) inline Flow exec_stmt(Ctx& c, const Stmt& s) {
  c.stmt = &s;
  if (c.hooks) c.hooks->before_stmt(*c.f, s);
  if (c.sp) {
    const auto& r = c.sp->roots[static_cast<size_t>(s.id)];
    if (r[0]) {
      switch (s.kind) {
        case StmtKind::Assign: write_slot(c, s.slots[0], r[0]->t, run_node(c, r[0])); return Flow::Next;
        case StmtKind::Store: {
          Sv p = run_node(c, r[0]);
          Sv v = run_node(c, r[1]);
          Sv m;
          if (r[2]) m = run_node(c, r[2]);
          store_scalar(c, r[0]->t, p, r[1]->t, v.r, r[2] ? &m : nullptr);
          return Flow::Next;
        }
        case StmtKind::If: return exec_block(c, raw_truth(run_node(c, r[0]).r, r[0]->t) ? s.body : s.orelse);
        case StmtKind::Atomic:
        case StmtKind::For:
        case StmtKind::While:
        case StmtKind::Print:
        case StmtKind::Assert:
        case StmtKind::Return: break;
      }
    }
  }
  return exec_stmt_general(c, s);
}

}  // namespace

Flow exec_block(Ctx& c, const std::vector<StmtP>& body) {
  // Run control: a block counts all its statements at once (one add and compare per block).
  if ((c.steps += static_cast<int64_t>(body.size())) >= c.step_check && !body.empty()) [[unlikely]] step_poll(c, *body[0]);
  for (const StmtP& s : body)
    if (exec_stmt(c, *s) == Flow::Return) return Flow::Return;
  return Flow::Next;
}

}  // namespace dtsim::exec

namespace dtsim {

Value Frame::eval(const ExprP& e) const {
  exec::Ctx c;
  c.f = const_cast<Frame*>(this);
  c.me = static_cast<int32_t>(linear_pid);
  Value t;
  const Value& r = exec::eval_expr(c, *e, t);
  if (&r == &t) return t;
  return r;
}

int Frame::lookup(const std::string& name) const {
  if (!kernel) return -1;
  for (size_t i = slots.size(); i-- > 0;)
    if (kernel->slot_names[i] == name && slots[i].defined()) return static_cast<int>(i);
  return -1;
}

}  // namespace dtsim
