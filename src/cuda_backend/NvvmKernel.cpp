// Statement-level lowering of the NVVM emitter (assignments, stores, loops, branches, asserts) and
// the module wrapper (datalayout, declarations, kernel annotations): emit_nvvm / emit_nvvm_module.
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"

namespace dtsim {
namespace nvvm {

KernelEmitter::KernelEmitter(const Kernel& k, const Bindings& b, const CudaOptions& opt, std::set<std::string>& decls,
                             std::string entry)
    : k_(k), b_(b), opt_(opt), decls_(decls), threads_(k.num_warps * 32) {
  info.entry = std::move(entry);
  info.threads = threads_;
  if (k.num_warps < 1 || k.num_warps > 32) user_error(k.loc, "CUDA backend: num_warps must be 1-32, got " + std::to_string(k.num_warps));
}

void KernelEmitter::count_assignments(const std::vector<StmtP>& body) {
  for (auto& s : body) {
    switch (s->kind) {
      case StmtKind::Assign:
        for (int slot : s->slots) ++assign_count_[static_cast<size_t>(slot)];
        if (s->targets.size() == 1) single_def_[static_cast<size_t>(s->slots[0])] = s->args[0];
        break;
      case StmtKind::For:
        ++assign_count_[static_cast<size_t>(s->slots[0])];
        count_assignments(s->body);
        break;
      case StmtKind::If:
        count_assignments(s->body);
        count_assignments(s->orelse);
        break;
      case StmtKind::Store:
      case StmtKind::Print:
      case StmtKind::Assert:
      case StmtKind::Return: break;
    }
  }
}

void KernelEmitter::assign(int slot, const TV& v) {
  const auto& vars = slot_vars_[static_cast<size_t>(slot)];
  std::string ty = reg_type(k_.slot_types[static_cast<size_t>(slot)]);
  for (size_t r = 0; r < vars.size(); ++r) line("store " + ty + " " + v.at(static_cast<int>(r)) + ", " + ty + "* " + vars[r]);
}

void KernelEmitter::emit_block(const std::vector<StmtP>& body) {
  for (auto& s : body) emit_stmt(*s);
}

void KernelEmitter::emit_store(const Stmt& s) {
  const ExprP& pe = s.args[0];
  const Type& pt = pe->type;
  Layout l(pt.shape, threads_);
  auto p = lazy_fit(pe, pt.shape);
  auto v = lazy_fit(s.args[1], pt.shape);
  std::function<std::string(int)> m;
  if (s.args[2]) m = lazy_fit(s.args[2], pt.shape);
  int n = pt.is_scalar() ? 1 : l.slots;
  // A scalar store is done once per instance (thread 0); a tile element by the thread holding it.
  std::string owner = pt.is_scalar() ? op("icmp eq i32 %tid, 0") : valid(l);
  for (int r = 0; r < n; ++r) {
    std::string val = cast(s.args[1]->type.elem, pt.elem, v(r));
    std::string ptr = p(r);
    std::string cond = s.args[2] ? m(r) : "true";
    if (owner != "true") cond = cond == "true" ? owner : op("and i1 " + cond + ", " + owner);
    if (cond == "true") {
      store_mem(pt.elem, ptr, val);
      continue;
    }
    std::string st = label("st"), join = label("stj");
    line("br i1 " + cond + ", label %" + st + ", label %" + join);
    start_block(st);
    store_mem(pt.elem, ptr, val);
    br(join);
    start_block(join);
  }
}

void KernelEmitter::emit_for(const Stmt& s) {
  int slot = s.slots[0];
  Scalar t = k_.slot_types[static_cast<size_t>(slot)].elem;
  std::string ty = reg_type(t);
  std::string lo = cast(s.args[0]->type.elem, t, eval_scalar(s.args[0]));
  std::string hi = cast(s.args[1]->type.elem, t, eval_scalar(s.args[1]));
  std::string step = cast(s.args[2]->type.elem, t, eval_scalar(s.args[2]));
  trap_if(op("icmp sle " + ty + " " + step + ", 0"));  // a step <= 0 is a runtime fault
  std::string ctr = "%ctr" + std::to_string(tmp_++);
  prelude_ << "  " << ctr << " = alloca " << ty << "\n";
  line("store " + ty + " " + lo + ", " + ty + "* " + ctr);
  std::string head = label("for.head"), body = label("for.body"), exit = label("for.exit");
  br(head);
  start_block(head);
  std::string i = op("load " + ty + ", " + ty + "* " + ctr);
  line("br i1 " + op("icmp slt " + ty + " " + i + ", " + hi) + ", label %" + body + ", label %" + exit);
  start_block(body);
  line("store " + ty + " " + i + ", " + ty + "* " + slot_vars_[static_cast<size_t>(slot)][0]);
  emit_block(s.body);
  line("store " + ty + " " + op("add " + ty + " " + i + ", " + step) + ", " + ty + "* " + ctr);
  br(head);
  start_block(exit);
}

void KernelEmitter::emit_if(const Stmt& s) {
  std::string c = to_bool(s.args[0]->type.elem, eval_scalar(s.args[0]));
  std::string then = label("then"), els = label("else"), join = label("endif");
  line("br i1 " + c + ", label %" + then + ", label %" + els);
  start_block(then);
  emit_block(s.body);
  br(join);
  start_block(els);
  emit_block(s.orelse);
  br(join);
  start_block(join);
}

void KernelEmitter::emit_assert(const Stmt& s) {
  const ExprP& c = s.args[0];
  TV v = eval(c);
  Layout l(c->type.shape, threads_);
  std::string bad = "false";
  int n = c->type.is_scalar() ? 1 : l.slots;
  for (int r = 0; r < n; ++r) {
    std::string f = op("xor i1 " + v.at(r) + ", true");
    bad = bad == "false" ? f : op("or i1 " + bad + ", " + f);
  }
  if (c->type.is_tile() && !l.full) bad = op("and i1 " + bad + ", " + valid(l));
  trap_if(bad);
}

void KernelEmitter::emit_stmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Assign: {
      if (s.targets.size() == 2) {
        auto [i, j] = swizzle(s.args[0]);
        assign(s.slots[0], TV{Type{Scalar::I32, false, {}}, {i}});
        assign(s.slots[1], TV{Type{Scalar::I32, false, {}}, {j}});
        return;
      }
      assign(s.slots[0], eval(s.args[0]));
      return;
    }
    case StmtKind::Store: emit_store(s); return;
    case StmtKind::For: emit_for(s); return;
    case StmtKind::If: emit_if(s); return;
    case StmtKind::Print: return;  // print() is an interpreter feature; the GPU run stays silent
    case StmtKind::Assert: emit_assert(s); return;
    case StmtKind::Return:
      br("exit");
      start_block(label("after.return"));
      return;
  }
}

std::string KernelEmitter::emit() {
  // Variables: one alloca per slot of every variable (libNVVM promotes them to registers).
  slot_vars_.resize(static_cast<size_t>(k_.num_slots));
  assign_count_.assign(static_cast<size_t>(k_.num_slots), 0);
  single_def_.assign(static_cast<size_t>(k_.num_slots), nullptr);
  prelude_ << "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n";
  declare("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()");
  for (int s = 0; s < k_.num_slots; ++s) {
    const Type& t = k_.slot_types[static_cast<size_t>(s)];
    int n = t.is_scalar() ? 1 : Layout(t.shape, threads_).slots;
    for (int r = 0; r < n; ++r) {
      std::string v = "%v" + std::to_string(s) + "." + std::to_string(r);
      prelude_ << "  " << v << " = alloca " << reg_type(t) << "\n";
      slot_vars_[static_cast<size_t>(s)].push_back(v);
    }
  }
  count_assignments(k_.body);
  // Parameters: buffers and runtime scalars are kernel arguments; constexprs are baked in.
  std::vector<std::string> params, types;
  start_block("body");
  for (const Param& p : k_.params) {
    if (p.slot < 0) continue;
    ++assign_count_[static_cast<size_t>(p.slot)];
    const Type& t = k_.slot_types[static_cast<size_t>(p.slot)];
    std::string ty = reg_type(t);
    std::string var = slot_vars_[static_cast<size_t>(p.slot)][0];
    std::string arg = "%p." + p.name;
    switch (p.kind) {
      case ParamKind::Pointer:
      case ParamKind::Scalar: {
        bool ptr = p.kind == ParamKind::Pointer;
        std::string at = ptr ? ty : (p.dtype == Scalar::I1 ? "i8" : ty);
        params.push_back(at + " " + arg);
        types.push_back(at);
        info.args.push_back({p.name, ptr, p.dtype});
        std::string v = (!ptr && p.dtype == Scalar::I1) ? op("icmp ne i8 " + arg + ", 0") : arg;
        line("store " + ty + " " + v + ", " + ty + "* " + var);
        break;
      }
      case ParamKind::Constexpr: {
        auto it = b_.find(p.name);
        if (it == b_.end()) user_error(p.loc, "no value for constexpr parameter '" + p.name + "'");
        const ScalarValue& sv = it->second;
        line("store " + ty + " " + literal(t.elem, sv.f, sv.i, sv.is_float()) + ", " + ty + "* " + var);
        break;
      }
    }
  }
  emit_block(k_.body);
  br("exit");
  start_block("exit");
  line("ret void");
  if (info.smem_bytes > kMaxDynamicSmem)
    user_error(k_.loc, "CUDA backend: kernel '" + k_.name + "' needs " + std::to_string(info.smem_bytes) +
                           " bytes of shared memory for its tile exchanges (at most " + std::to_string(kMaxDynamicSmem) +
                           "); use smaller tiles");
  std::string sig;
  for (size_t i = 0; i < types.size(); ++i) sig += (i ? ", " : "") + types[i];
  signature = "void (" + sig + ")*";
  std::string out = "define void @" + info.entry + "(";
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i];
  out += ") {\nentry:\n" + prelude_.str() + "  br label %body\n" + body_.str() + "}\n";
  return out;
}

}  // namespace nvvm

NvvmModule emit_nvvm_module(const Module& m, const Bindings& b, const CudaOptions& opt) {
  NvvmModule out;
  std::set<std::string> decls;
  std::string funcs, annotations;
  std::vector<std::string> names;
  int md = 0;
  std::string md_list;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel& k = m.kernels[i];
    std::string entry = k.name;
    if (std::count(names.begin(), names.end(), entry)) entry += "_" + std::to_string(i);
    names.push_back(entry);
    nvvm::KernelEmitter ke(k, b, opt, decls, entry);
    funcs += ke.emit() + "\n";
    for (const char* a : {"kernel", "maxntidx"}) {
      int v = std::string(a) == "kernel" ? 1 : ke.info.threads;
      annotations += "!" + std::to_string(md) + " = !{" + ke.signature + " @" + entry + ", !\"" + a + "\", i32 " + std::to_string(v) + "}\n";
      md_list += (md ? ", !" : "!") + std::to_string(md);
      ++md;
    }
    out.kernels.push_back(ke.info);
  }
  std::string ir;
  ir += "; NVVM IR generated by dtsim from " + m.file + "\n";
  ir += "target datalayout = \"e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64\"\n";
  ir += "target triple = \"nvptx64-nvidia-cuda\"\n\n";
  ir += "@dtsim_smem = external addrspace(3) global [0 x i8], align 16\n\n";
  for (auto& d : decls) ir += d + "\n";
  ir += "\n" + funcs;
  ir += "!nvvm.annotations = !{" + md_list + "}\n" + annotations;
  ir += "!nvvmir.version = !{!" + std::to_string(md) + "}\n!" + std::to_string(md) + " = !{i32 2, i32 0}\n";
  out.ir = std::move(ir);
  return out;
}

std::string emit_nvvm(const Module& m, const Bindings& b, const CudaOptions& opt) { return emit_nvvm_module(m, b, opt).ir; }

}  // namespace dtsim
