// Bounds checks of global accesses (--sanitize=bounds on the CUDA backend): each element a load or
// store would touch is compared with the extent of the buffer its pointer is derived from; elements
// out of bounds are not accessed, and the access's site, first failing lane and counts go to the
// status buffer through report_check (NvvmKernel.cpp).
#include <set>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Verify.h"

namespace dtsim::nvvm {

std::vector<const Param*> KernelEmitter::buffers_of(const ExprP& ptr) {
  std::vector<const Param*> out;
  std::set<int> seen;
  std::function<void(const ExprP&)> walk = [&](const ExprP& e) {
    if (!e || !e->type.ptr) return;
    if (e->kind == ExprKind::Var) {
      if (!seen.insert(e->slot).second) return;
      for (const Param& p : k_.params)
        if (p.kind == ParamKind::Pointer && p.slot == e->slot && std::find(out.begin(), out.end(), &p) == out.end()) out.push_back(&p);
      for (const ExprP& d : slot_defs_[static_cast<size_t>(e->slot)]) walk(d);
      return;
    }
    for (const ExprP& a : e->args) walk(a);
  };
  walk(ptr);
  if (out.empty()) fail(ptr->loc, "--sanitize=bounds: cannot tell which buffer this pointer points into");
  return out;
}

KernelEmitter::BoundsCheck KernelEmitter::begin_bounds(bool store, const ExprP& ptr, const Shape& tile) {
  BoundsCheck bc;
  bc.bufs = buffers_of(ptr);
  bc.tile = tile;
  int64_t lanes = 1;
  for (int64_t x : tile) lanes *= x;
  bc.site = add_site(store ? NvvmKernelInfo::Site::Store : NvvmKernelInfo::Site::Load, bc.bufs[0]->name, lanes, ptr->loc);
  note(std::string("bounds-checked against ") + bc.bufs[0]->name + (bc.bufs.size() > 1 ? " (and other buffers)" : ""));
  return bc;
}

std::string KernelEmitter::bounds_lanes(BoundsCheck& bc, Scalar elem, const std::string& ptr_reg, int w, const Dist& d, int r0,
                                        const std::string& active, const std::string& counted) {
  std::string pty = mem_type(elem) + " addrspace(1)*";
  std::string pi = op("ptrtoint " + pty + " " + ptr_reg + " to i64");
  std::string bytes = std::to_string(scalar_bytes(elem));
  // Per buffer: the first element's offset (exact: every buffer is aligned beyond its element size,
  // so differences are whole elements) and the extent.
  std::vector<std::pair<std::string, int64_t>> offs;
  for (const Param* p : bc.bufs) {
    int64_t extent = 1;
    for (const ExprP& x : p->shape) extent *= eval_param_expr(x, b_).as_int();
    std::string bty = reg_type(k_.slot_types[static_cast<size_t>(p->slot)]);
    std::string base = op("ptrtoint " + bty + " %p." + p->name + " to i64");
    offs.emplace_back(op("sdiv exact i64 " + op("sub i64 " + pi + ", " + base) + ", " + bytes), extent);
  }
  // Whether element j is in bounds of some buffer (negative offsets wrap to large unsigned ones).
  auto in_bounds = [this, offs](int j) {
    std::string ok;
    for (auto& [off, extent] : offs) {
      std::string oj = j ? op("add i64 " + off + ", " + std::to_string(j)) : off;
      std::string k = op("icmp ult i64 " + oj + ", " + std::to_string(extent));
      ok = ok.empty() ? k : op("or i1 " + ok + ", " + k);
    }
    return ok;
  };
  std::string all_ok;
  if (offs.size() == 1 && offs[0].second >= w) {
    // The w consecutive elements lie in [0, extent) iff the first lies in [0, extent - w].
    all_ok = op("icmp ult i64 " + offs[0].first + ", " + std::to_string(offs[0].second - w + 1));
  } else {
    for (int j = 0; j < w; ++j) all_ok = j ? op("and i1 " + all_ok + ", " + in_bounds(j)) : in_bounds(j);
  }
  std::string cnt = active == "true" ? counted : counted == "true" ? active : op("and i1 " + active + ", " + counted);
  std::string fails = op("and i1 " + op("xor i1 " + all_ok + ", true") + ", " + cnt);
  bc.bad = bc.bad == "false" ? fails : op("or i1 " + bc.bad + ", " + fails);
  // Lane by lane, only where the instance fails: counts, the first failing lane, its buffer index.
  std::string first_off = offs[0].first;
  Shape tile = bc.tile;
  bc.lanes.push_back([this, in_bounds, first_off, tile, d, r0, w, cnt](CheckAcc& a) {
    // Lanes as the thread's flat base plus each register's constant offset (coords() of every
    // register would be values kept from the kernel's entry, live across every loop).
    std::string base = "0";
    if (!tile.empty()) {
      std::vector<std::string> tp;
      for (size_t i = 0; i < tile.size(); ++i) tp.push_back(tile[i] == 1 ? "0" : thread_part(d, i));
      base = flat_of(tile, tp);
    }
    for (int j = 0; j < w; ++j) {
      std::string f = op("and i1 " + op("xor i1 " + in_bounds(j) + ", true") + ", " + cnt);
      std::string lane = base;
      if (!tile.empty()) {
        Coord rc = d.reg_coord(r0 + j);
        int64_t flat = 0;
        for (size_t i = 0; i < tile.size(); ++i) flat = flat * tile[i] + rc[i];
        if (flat) lane = op("add i32 " + base + ", " + std::to_string(flat));
      }
      std::string oj = j ? op("add i64 " + first_off + ", " + std::to_string(j)) : first_off;
      check_lane(a, f, cnt, lane, oj);
    }
  });
  return all_ok;
}

void KernelEmitter::end_bounds(BoundsCheck& bc) { report_checks({pending(bc)}); }

KernelEmitter::PendingCheck KernelEmitter::pending(BoundsCheck& bc) {
  return PendingCheck{bc.site, bc.bad, [this, lanes = bc.lanes] {
                        CheckAcc a;
                        for (auto& l : lanes) l(a);
                        if (a.nact == "0") a.nact = op("add i32 0, 0");  // counted, even if no lane is active
                        if (a.flat.empty()) a.flat = "-1";
                        return a;
                      }};
}

}  // namespace dtsim::nvvm
