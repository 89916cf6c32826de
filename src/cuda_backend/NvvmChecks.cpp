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
  std::string all_ok = "true", off0;
  std::vector<std::string> offs(static_cast<size_t>(w)), oks(static_cast<size_t>(w));
  for (size_t bi = 0; bi < bc.bufs.size(); ++bi) {
    const Param& p = *bc.bufs[bi];
    int64_t extent = 1;
    for (const ExprP& x : p.shape) extent *= eval_param_expr(x, b_).as_int();
    std::string bty = reg_type(k_.slot_types[static_cast<size_t>(p.slot)]);
    std::string base = op("ptrtoint " + bty + " %p." + p.name + " to i64");
    // Exact: every buffer is aligned beyond its element size, so differences are whole elements.
    std::string off = op("sdiv exact i64 " + op("sub i64 " + pi + ", " + base) + ", " + bytes);
    for (int j = 0; j < w; ++j) {
      std::string oj = j ? op("add i64 " + off + ", " + std::to_string(j)) : off;
      std::string ok = op("icmp ult i64 " + oj + ", " + std::to_string(extent));  // negative offsets wrap
      if (bi == 0) {
        offs[static_cast<size_t>(j)] = oj;
        oks[static_cast<size_t>(j)] = ok;
      } else {
        oks[static_cast<size_t>(j)] = op("or i1 " + oks[static_cast<size_t>(j)] + ", " + ok);
      }
    }
  }
  for (int j = 0; j < w; ++j) {
    const std::string& ok = oks[static_cast<size_t>(j)];
    all_ok = all_ok == "true" ? ok : op("and i1 " + all_ok + ", " + ok);
    std::string cnt = active == "true" ? counted : counted == "true" ? active : op("and i1 " + active + ", " + counted);
    std::string fails = op("and i1 " + op("xor i1 " + ok + ", true") + ", " + cnt);
    std::string lane = bc.tile.empty() ? "0" : flat_of(bc.tile, coords(d, r0 + j));
    check_lane(bc.acc, fails, cnt == "true" ? "true" : cnt, lane, offs[static_cast<size_t>(j)]);
  }
  return all_ok;
}

void KernelEmitter::end_bounds(BoundsCheck& bc) {
  std::string flat = bc.acc.flat.empty() ? "-1" : bc.acc.flat;
  report_check(bc.site, bc.acc.bad, bc.acc.nbad, bc.acc.first, bc.acc.nact == "0" ? op("add i32 0, 0") : bc.acc.nact, flat);
}

}  // namespace dtsim::nvvm
