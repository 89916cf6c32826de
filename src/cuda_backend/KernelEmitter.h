// Backend-internal: lowers one verified kernel to an NVVM IR function. Tiles are held in the
// canonical layout of NvvmValues.h (one SSA value per register slot); mutable variables are allocas
// (promoted by libNVVM's mem2reg); every shape change that moves data between threads goes through
// one dynamic shared buffer (@dtsim_smem) with barriers around each use.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_backend/NvvmEmitter.h"
#include "cuda_backend/NvvmValues.h"

namespace dtsim::nvvm {

// A lowered value: a scalar (one uniform SSA value) or a tile (one SSA value per slot).
struct TV {
  Type type;
  std::vector<std::string> v;
  const std::string& at(int r) const { return type.is_scalar() ? v[0] : v[static_cast<size_t>(r)]; }
};

class KernelEmitter {
 public:
  KernelEmitter(const Kernel& k, const Bindings& b, const CudaOptions& opt, std::set<std::string>& decls,
                std::string entry);
  std::string emit();  // the `define void @...` text
  NvvmKernelInfo info;
  std::string signature;  // "void (i32, float addrspace(1)*)*" for the annotations

 private:
  const Kernel& k_;
  const Bindings& b_;
  const CudaOptions& opt_;
  std::set<std::string>& decls_;
  int threads_;
  std::ostringstream prelude_, body_;
  int tmp_ = 0, label_ = 0;
  std::string cur_block_;
  std::map<std::string, std::string> coord_cache_;
  std::vector<std::vector<std::string>> slot_vars_;  // alloca names per variable slot
  std::vector<int> assign_count_;                     // statements assigning each slot
  std::vector<ExprP> single_def_;                     // the one Assign value of a slot, if any

  // ---- text helpers ----
  std::string tmp();
  std::string label(const std::string& hint);
  std::string op(const std::string& rhs);  // emits "%tN = rhs", returns %tN
  void line(const std::string& s);
  void start_block(const std::string& l);
  void br(const std::string& l);
  void declare(const std::string& d);
  std::string call(const std::string& ret, const std::string& fn, const std::string& args, const std::string& decl_args);
  [[noreturn]] void fail(SourceLoc loc, const std::string& msg);

  // ---- layout ----
  std::string tid();
  std::string flat(const Layout& l, int r);                     // i32 flat index of slot r
  std::vector<std::string> coords(const Layout& l, int r);      // i32 coordinates of slot r
  std::string valid(const Layout& l);                           // i1 "this thread holds slot 0"
  std::string flat_of(const Shape& s, const std::vector<std::string>& c);
  std::vector<std::string> unflatten(const Shape& s, const std::string& f);
  std::vector<std::string> bcast_coords(const Shape& from, const std::vector<std::string>& c, const Shape& to);
  std::string smem_ptr(const Type& t, int64_t byte_offset, const std::string& index);
  void barrier();
  TV exchange(const TV& src, const Shape& dst, const std::function<std::string(const std::vector<std::string>&)>& src_flat);

  // ---- expressions ----
  bool recomputable(const ExprP& e);
  bool stable_scalar(int slot) const;
  TV eval(const ExprP& e);
  TV fit(const ExprP& e, const Shape& dst);
  // Like fit(), but a recomputable tile is evaluated slot by slot when asked (keeps few live registers).
  std::function<std::string(int)> lazy_fit(const ExprP& e, const Shape& dst);
  std::string at(const ExprP& e, const std::vector<std::string>& c);
  std::string eval_scalar(const ExprP& e);
  TV eval_load(const ExprP& e);
  TV eval_dot(const ExprP& e);
  TV eval_reduce(const ExprP& e);
  std::pair<std::string, std::string> swizzle(const ExprP& e);

  // ---- elementwise ops (NvvmOps.cpp); values in register types ----
  std::string unary(const Expr& e, const std::string& x);
  std::string binary(const Expr& e, const std::string& a, const std::string& b);
  std::string where(const Expr& e, const std::string& c, const std::string& a, const std::string& b);
  std::string binary_typed(BinOp op, Scalar t, const std::string& a, const std::string& b);
  std::string cast(Scalar from, Scalar to, const std::string& v);
  std::string round_to(Scalar t, const std::string& v);  // f16/bf16 rounding of a float register
  std::string math(UnOp op, Scalar t, const std::string& x);
  std::string nan_minmax(bool is_max, Scalar t, const std::string& a, const std::string& b);
  std::string to_bool(Scalar t, const std::string& v);
  std::string load_mem(Scalar s, const std::string& ptr);
  void store_mem(Scalar s, const std::string& ptr, const std::string& v);
  std::string constant(Scalar s, double f, int64_t i, bool from_float);
  std::string trap_if(const std::string& cond);

  // ---- statements ----
  void count_assignments(const std::vector<StmtP>& body);
  void emit_block(const std::vector<StmtP>& body);
  void emit_stmt(const Stmt& s);
  void assign(int slot, const TV& v);
  void emit_store(const Stmt& s);
  void emit_for(const Stmt& s);
  void emit_if(const Stmt& s);
  void emit_assert(const Stmt& s);
};

}  // namespace dtsim::nvvm
