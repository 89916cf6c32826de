// Bounds checks of global accesses (--sanitize=bounds on the CUDA backend): each element a load or
// store would touch is compared with the extent of the buffer its pointer is derived from; elements
// out of bounds are not accessed, and the access's site, first failing lane and counts go to the
// status buffer through report_check (NvvmKernel.cpp).
#include <cctype>
#include <memory>
#include <set>

#include "cuda_backend/KernelEmitter.h"
#include "ir/Verify.h"
#include "ir/Walk.h"

namespace dtsim::nvvm {

std::vector<const Param*> KernelEmitter::buffers_of(const ExprP& ptr, bool* address) {
  std::vector<const Param*> out;
  std::set<int> seen;
  bool from_int = false;
  std::function<void(const ExprP&)> walk = [&](const ExprP& e) {
    if (!e || !e->type.ptr) return;
    if (e->kind == ExprKind::IntToPtr) from_int = true;
    if (e->kind == ExprKind::Var) {
      if (!seen.insert(e->slot).second) return;
      for (const Param& p : k_.params)
        if (p.kind == ParamKind::Pointer && p.slot == e->slot && std::find(out.begin(), out.end(), &p) == out.end()) out.push_back(&p);
      for (const ExprP& d : plan_.defs[static_cast<size_t>(e->slot)]) walk(d);
      return;
    }
    for (const ExprP& a : e->args) walk(a);
  };
  walk(ptr);
  if (address) {
    *address = from_int;
    return out;
  }
  if (out.empty()) fail(ptr->loc, "--sanitize=bounds: cannot tell which buffer this pointer points into");
  return out;
}

// An access through a pointer made from an integer: its addresses are the caller's device memory,
// which no buffer of the run describes, so it is neither bounds- nor conflict-checked (site -1).
bool KernelEmitter::unchecked_address(const ExprP& ptr) {
  bool address = false;
  buffers_of(ptr, &address);
  if (address) note("through an address (int_to_ptr): not checked");
  return address;
}

KernelEmitter::BoundsCheck KernelEmitter::begin_bounds(bool store, const ExprP& ptr, const Shape& tile) {
  BoundsCheck bc;
  bc.tile = tile;
  if (unchecked_address(ptr)) return bc;
  bc.bufs = buffers_of(ptr);
  int64_t lanes = 1;
  for (int64_t x : tile) lanes *= x;
  bc.site = add_site(store ? NvvmKernelInfo::Site::Store : NvvmKernelInfo::Site::Load, bc.bufs[0]->name, lanes, ptr->loc);
  info.sites[static_cast<size_t>(bc.site)].tile = tile;
  note(std::string("bounds-checked against ") + bc.bufs[0]->name + (bc.bufs.size() > 1 ? " (and other buffers)" : ""));
  return bc;
}

std::string KernelEmitter::bounds_lanes(BoundsCheck& bc, Scalar elem, const std::string& ptr_reg, int w, const Dist& d, int r0,
                                        const std::string& active, const std::string& counted) {
  if (bc.site < 0) return "true";
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

std::string KernelEmitter::lin_pid() {
  if (!lin_pid_) {
    lin_pid_ = true;
    static const char* ax[] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i) {
      for (const char* w : {"ctaid", "nctaid"}) {
        std::string fn = std::string("llvm.nvvm.read.ptx.sreg.") + w + "." + ax[i];
        declare("declare i32 @" + fn + "()");
        prelude_ << "  %dtsim_" << w << ax[i] << "32 = call i32 @" << fn << "()\n";
        prelude_ << "  %dtsim_" << w << ax[i] << " = zext i32 %dtsim_" << w << ax[i] << "32 to i64\n";
      }
    }
    prelude_ << "  %dtsim_lin.0 = mul i64 %dtsim_nctaidy, %dtsim_ctaidz\n"
             << "  %dtsim_lin.1 = add i64 %dtsim_ctaidy, %dtsim_lin.0\n"
             << "  %dtsim_lin.2 = mul i64 %dtsim_nctaidx, %dtsim_lin.1\n"
             << "  %dtsim_lin = add i64 %dtsim_ctaidx, %dtsim_lin.2\n";
  }
  return "%dtsim_lin";
}

KernelEmitter::BoundsCheck KernelEmitter::begin_conflicts(const ExprP& ptr, const Shape& tile) {
  BoundsCheck cc;
  cc.tile = tile;
  if (unchecked_address(ptr)) return cc;
  cc.bufs = buffers_of(ptr);
  // Buffers whose writes are disjoint for the launch's values (plan_conflicts) are not claimed.
  bool all_disjoint = true;
  for (const Param* p : cc.bufs) {
    auto it = plan_.conflict_words.find(p->name);
    all_disjoint = all_disjoint && it != plan_.conflict_words.end() && it->second.disjoint_now;
  }
  if (all_disjoint) {
    note("no conflict claims: the writes of " + cc.bufs[0]->name + " are disjoint for the launch's values");
    cc.bufs.clear();
    return cc;
  }
  int64_t lanes = 1;
  for (int64_t x : tile) lanes *= x;
  cc.site = add_site(NvvmKernelInfo::Site::Conflict, cc.bufs[0]->name, lanes, ptr->loc);
  info.sites[static_cast<size_t>(cc.site)].tile = tile;
  info.sites[static_cast<size_t>(cc.site)].atomic = cur_stmt_ && cur_stmt_->kind == StmtKind::Atomic;
  for (const Param* p : cc.bufs) shadowed_.insert(p->name);
  note(std::string("conflict-checked in the shadow words of ") + cc.bufs[0]->name + (cc.bufs.size() > 1 ? " (and other buffers)" : ""));
  return cc;
}

// Conflict checks claim every element a store or atomic writes, per launch. A word is claimed for
// launch number `epoch` (16 bits, in bits 48-63 of every word; the runner passes epoch << 48 as
// %dtsim_epoch): a word of an older epoch is free, so nothing is reset between launches.
// - Element words, one u64 per element: pid | tag << 32 | epoch << 48, tag = (site + 1) << 1 | atomic.
//   A claim is one atom.max.u64: the word it returns, if of this epoch, is the earlier claim.
// - Granule words (sm_90: 128-bit compare-and-swap), one per kConflictGranule consecutive elements:
//   the mask of the elements written and the element word of the one instance and site that wrote
//   them all. The lanes of a warp that store into one granule combine their masks (match.any.sync,
//   redux.sync.or) and the lowest of them claims it with one atom.cas.b128. A granule written by a
//   second instance or site is demoted: the one that finds it writes the element words for the mask
//   it found, then marks the granule (tag 0xFFFF); every later claim of its elements, this one's
//   included, goes to the element words, where conflicts are found as without granules.
namespace {
const char* kConflictHelpers[] = {
    "define internal i64 @dtsim_cc_elem(i64 %a, i64 %w, i64 %cur, i1 %p) alwaysinline {\n"
    "entry:\n"
    "  br i1 %p, label %claim, label %done\n"
    "claim:\n"
    "  %ptr = inttoptr i64 %a to i64 addrspace(1)*\n"
    "  %old = atomicrmw umax i64 addrspace(1)* %ptr, i64 %w monotonic\n"
    "  %ep = and i64 %old, -281474976710656\n"
    "  %live = icmp eq i64 %ep, %cur\n"
    "  %who = and i64 %old, 281474976710655\n"
    "  %s = select i1 %live, i64 %who, i64 -1\n"
    "  br label %done\n"
    "done:\n"
    "  %r = phi i64 [ -1, %entry ], [ %s, %claim ]\n"
    "  ret i64 %r\n"
    "}",
    "define internal void @dtsim_cc_mark(i64 %e, i64 %m, i64 %w) noinline {\n"
    "entry:\n"
    "  br label %loop\n"
    "loop:\n"
    "  %mm = phi i64 [ %m, %entry ], [ %next, %body ]\n"
    "  %z = icmp eq i64 %mm, 0\n"
    "  br i1 %z, label %done, label %body\n"
    "body:\n"
    "  %b = call i64 @llvm.cttz.i64(i64 %mm, i1 true)\n"
    "  %off = shl i64 %b, 3\n"
    "  %a = add i64 %e, %off\n"
    "  %ptr = inttoptr i64 %a to i64 addrspace(1)*\n"
    "  %old = atomicrmw umax i64 addrspace(1)* %ptr, i64 %w monotonic\n"
    "  %mm1 = sub i64 %mm, 1\n"
    "  %next = and i64 %mm, %mm1\n"
    "  br label %loop\n"
    "done:\n"
    "  ret void\n"
    "}",
    // The claim of granule %g after the fast path's compare-and-swap failed or found the granule
    // written by another instance or site; %lo0/%hi0: the word it saw. Every exchange here is acq_rel:
    // a demotion releases the element words written before it, and whoever finds a demoted granule
    // acquires them (a compare-and-swap that leaves the word as it is) before claiming elements.
    "define internal i1 @dtsim_cc_granule(i64 %g, i64 %e, i64 %m, i64 %w, i64 %cur, i64 %lo0, i64 %hi0) noinline {\n"
    "entry:\n"
    "  %dem = or i64 %cur, 281470681743360\n"
    "  br label %loop\n"
    "loop:\n"
    "  %olo = phi i64 [ %lo0, %entry ], [ %rlo, %retry ]\n"
    "  %ohi = phi i64 [ %hi0, %entry ], [ %rhi, %retry ]\n"
    "  %oep = and i64 %ohi, -281474976710656\n"
    "  %fresh = icmp ne i64 %oep, %cur\n"
    "  br i1 %fresh, label %cas, label %live\n"
    "live:\n"
    "  %same = icmp eq i64 %ohi, %w\n"
    "  br i1 %same, label %mine, label %other\n"
    "mine:\n"
    "  %or = or i64 %olo, %m\n"
    "  %nochange = icmp eq i64 %or, %olo\n"
    "  br i1 %nochange, label %fast, label %cas\n"
    "other:\n"
    "  %isdem = icmp eq i64 %ohi, %dem\n"
    "  br i1 %isdem, label %cas, label %demote\n"
    "demote:\n"
    "  call void @dtsim_cc_mark(i64 %e, i64 %olo, i64 %ohi)\n"
    "  br label %cas\n"
    "cas:\n"
    "  %nlo = phi i64 [ %m, %loop ], [ %or, %mine ], [ %olo, %other ], [ 0, %demote ]\n"
    "  %nhi = phi i64 [ %w, %loop ], [ %ohi, %mine ], [ %ohi, %other ], [ %dem, %demote ]\n"
    "  %toslow = phi i1 [ false, %loop ], [ false, %mine ], [ true, %other ], [ true, %demote ]\n"
    "  %r = call { i64, i64 } asm sideeffect \"{ .reg .b128 c, s, d; mov.b128 c, {$2, $3}; mov.b128 s, {$4, $5}; "
    "atom.acq_rel.gpu.global.cas.b128 d, [$6], c, s; mov.b128 {$0, $1}, d; }\", \"=l,=l,l,l,l,l,l,~{memory}\"(i64 %olo, i64 %ohi, i64 %nlo, i64 %nhi, i64 %g)\n"
    "  %rlo = extractvalue { i64, i64 } %r, 0\n"
    "  %rhi = extractvalue { i64, i64 } %r, 1\n"
    "  %oklo = icmp eq i64 %rlo, %olo\n"
    "  %okhi = icmp eq i64 %rhi, %ohi\n"
    "  %ok = and i1 %oklo, %okhi\n"
    "  br i1 %ok, label %after, label %retry\n"
    "retry:\n"
    "  br label %loop\n"
    "after:\n"
    "  ret i1 %toslow\n"
    "fast:\n"
    "  ret i1 false\n"
    "}",
    // The lanes of the warp that claim granule %key with this lane, and the OR of their masks %m:
    // %fgrp and %fgm where the warp is regular (%reg, the same on every lane: all 32 lanes claim, lane
    // i's vector follows lane i - 1's, and lane 0's starts where a granule or its half does), else
    // by match.any.sync and redux.sync.
    "define internal { i32, i64 } @dtsim_cc_group(i1 %reg, i32 %fgrp, i64 %fgm, i64 %key, i64 %m) alwaysinline {\n"
    "entry:\n"
    "  br i1 %reg, label %done, label %match\n"
    "match:\n"
    "  %am = call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"() convergent\n"
    "  %grp = call i32 @llvm.nvvm.match.any.sync.i64(i32 %am, i64 %key)\n"
    "  %mlo = trunc i64 %m to i32\n"
    "  %mh = lshr i64 %m, 32\n"
    "  %mhi = trunc i64 %mh to i32\n"
    "  %lo = call i32 asm sideeffect \"redux.sync.or.b32 $0, $1, $2;\", \"=r,r,r\"(i32 %mlo, i32 %grp) convergent\n"
    "  %hi = call i32 asm sideeffect \"redux.sync.or.b32 $0, $1, $2;\", \"=r,r,r\"(i32 %mhi, i32 %grp) convergent\n"
    "  %lo64 = zext i32 %lo to i64\n"
    "  %hi64 = zext i32 %hi to i64\n"
    "  %hs = shl i64 %hi64, 32\n"
    "  %gm = or i64 %lo64, %hs\n"
    "  br label %done\n"
    "done:\n"
    "  %rg = phi i32 [ %fgrp, %entry ], [ %grp, %match ]\n"
    "  %rm = phi i64 [ %fgm, %entry ], [ %gm, %match ]\n"
    "  %r0 = insertvalue { i32, i64 } undef, i32 %rg, 0\n"
    "  %r1 = insertvalue { i32, i64 } %r0, i64 %rm, 1\n"
    "  ret { i32, i64 } %r1\n"
    "}",
    // The fast path's outcome for the lanes of group %grp (leader %lead; %fix: the leader must
    // finish the claim in dtsim_cc_granule): whether they claim their elements one by one.
    "define internal i1 @dtsim_cc_fix(i1 %fix, i32 %grp, i32 %lead, i64 %g, i64 %e, i64 %m, i64 %w, i64 %cur, i64 %lo, i64 %hi) alwaysinline {\n"
    "entry:\n"
    "  br i1 %fix, label %claim, label %join\n"
    "claim:\n"
    "  %s = call i1 @dtsim_cc_granule(i64 %g, i64 %e, i64 %m, i64 %w, i64 %cur, i64 %lo, i64 %hi)\n"
    "  br label %join\n"
    "join:\n"
    "  %sl = phi i1 [ false, %entry ], [ %s, %claim ]\n"
    "  %s32 = zext i1 %sl to i32\n"
    "  %b = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 %grp, i32 %s32, i32 %lead, i32 31)\n"
    "  %r = icmp ne i32 %b, 0\n"
    "  ret i1 %r\n"
    "}",
};
}  // namespace

bool KernelEmitter::conflict_granules() const { return sm_version() >= 90; }

// Claims the w consecutive elements at ptr_reg (register r0 of layout d) where `cond`: in the
// granule words when the w elements lie in one buffer and one granule (a power of two up to
// kConflictGranule, at an offset aligned to w as every vector access is), else element by element. A
// plain store conflicts with any other instance's claim; an atomic with another instance's plain one.
void KernelEmitter::conflict_lanes(BoundsCheck& cc, Scalar elem, const std::string& ptr_reg, int w, const Dist& d, int r0,
                                   const std::string& cond, bool atomic) {
  if (cc.site < 0) return;
  std::string pty = mem_type(elem) + " addrspace(1)*";
  std::string pi = op("ptrtoint " + pty + " " + ptr_reg + " to i64");
  std::string bytes = std::to_string(scalar_bytes(elem));
  struct Buf {
    std::string off, shadow, granules;
    int64_t extent;
  };
  std::vector<Buf> bs;
  for (const Param* p : cc.bufs) {
    int64_t extent = 1;
    for (const ExprP& x : p->shape) extent *= eval_param_expr(x, b_).as_int();
    std::string bty = reg_type(k_.slot_types[static_cast<size_t>(p->slot)]);
    std::string base = op("ptrtoint " + bty + " %p." + p->name + " to i64");
    std::string off = op("sdiv exact i64 " + op("sub i64 " + pi + ", " + base) + ", " + bytes);
    std::string gr = conflict_granules(p->name) ? op("ptrtoint <2 x i64> addrspace(1)* %sg." + p->name + " to i64") : "";
    bs.push_back({off, op("ptrtoint i64 addrspace(1)* %sh." + p->name + " to i64"), gr, extent});
  }
  // The buffer's claims go through its granule words or its element words only, as planned for every
  // site writing it (plan_conflicts: granule words only for a plain store into one buffer).
  const bool coarse = conflict_granules(cc.bufs[0]->name);
  if (coarse && (bs.size() != 1 || atomic || w > kConflictGranule || (w & (w - 1)) != 0))
    internal_error("NvvmEmitter", "a conflict-checked access of " + cc.bufs[0]->name + " does not fit its planned granule words");
  declare(kConflictHelpers[0]);  // the element claim; the granule claims need sm_90
  if (coarse) {
    for (const char* h : kConflictHelpers) declare(h);
    declare("declare i64 @llvm.cttz.i64(i64, i1)");
  }
  std::string unlocked = op("icmp eq i32 " + op("load i32, i32* %dtsim_locks") + ", 0");
  std::string pred = cond == "true" ? unlocked : op("and i1 " + cond + ", " + unlocked);
  int64_t tag = static_cast<int64_t>(cc.site + 1) << 1 | (atomic ? 1 : 0);
  if (tag >= 0xFFFF) fail(cur_stmt_ ? cur_stmt_->loc : SourceLoc{}, "--sanitize=conflicts: more than 32766 checked accesses in one kernel");
  // This instance's element word: pid | tag << 32 | epoch << 48.
  std::string lin = op("and i64 " + lin_pid() + ", 4294967295");
  std::string mine = op("or i64 " + op("or i64 " + lin + ", " + std::to_string(tag << 32)) + ", %dtsim_epoch");
  std::string me = op("trunc i64 " + lin + " to i32");
  std::string base = "0";
  if (!cc.tile.empty()) {
    std::vector<std::string> tp;
    for (size_t i = 0; i < cc.tile.size(); ++i) tp.push_back(cc.tile[i] == 1 ? "0" : thread_part(d, i));
    base = flat_of(cc.tile, tp);
  }
  struct Elem {
    std::string addr, flat, lane;
  };
  std::vector<Elem> es;
  for (int j = 0; j < w; ++j) {
    // The element's buffer: the first one it lies in (pred implies it lies in one).
    std::string addr, flat;
    for (size_t b = bs.size(); b-- > 0;) {
      std::string oj = j ? op("add i64 " + bs[b].off + ", " + std::to_string(j)) : bs[b].off;
      std::string a = op("add i64 " + bs[b].shadow + ", " + op("shl i64 " + oj + ", 3"));
      if (addr.empty()) {
        addr = a;
        flat = oj;
      } else {
        std::string in = op("icmp ult i64 " + oj + ", " + std::to_string(bs[b].extent));
        addr = op("select i1 " + in + ", i64 " + a + ", i64 " + addr);
        flat = op("select i1 " + in + ", i64 " + oj + ", i64 " + flat);
      }
    }
    std::string lane = base;
    if (!cc.tile.empty()) {
      Coord rc = d.reg_coord(r0 + j);
      int64_t fl = 0;
      for (size_t i = 0; i < cc.tile.size(); ++i) fl = fl * cc.tile[i] + rc[i];
      if (fl) lane = op("add i32 " + base + ", " + std::to_string(fl));
    }
    es.push_back({addr, flat, lane});
  }
  // The element claims where `claim`, and the accounting of each element.
  // With `branch`, the step's claims and their accounting sit behind one branch on `claim` (the
  // granule fast path skips them whole), else each claim branches on it by itself.
  auto elements = [this, es, mine, me, cond, atomic](BoundsCheck& c, const std::string& claim, bool branch) {
    std::string from = cur_block_, in = branch ? label("cc.el") : "", join = branch ? label("cc.elj") : "";
    if (branch) {
      line("br i1 " + claim + ", label %" + in + ", label %" + join);
      start_block(in);
    }
    std::vector<std::string> seens, failss;
    std::string stepbad = "false";
    for (const Elem& el : es) {
      // The earlier claim (pid | tag << 32), -1 where none.
      std::string seen = op("call i64 @dtsim_cc_elem(i64 " + el.addr + ", i64 " + mine + ", i64 %dtsim_epoch, i1 " + (branch ? "true" : claim) + ")");
      std::string other = op("and i1 " + op("icmp ne i64 " + seen + ", -1") + ", " + op("icmp ne i32 " + op("trunc i64 " + seen + " to i32") + ", " + me));
      std::string fails = other;
      if (atomic) {  // atomics against atomics are legal
        std::string other_atomic = op("trunc i64 " + op("lshr i64 " + seen + ", 32") + " to i1");
        fails = op("and i1 " + other + ", " + op("xor i1 " + other_atomic + ", true"));
      }
      stepbad = stepbad == "false" ? fails : op("or i1 " + stepbad + ", " + fails);
      seens.push_back(seen);
      failss.push_back(fails);
    }
    if (branch) {
      std::string in_end = cur_block_;
      br(join);
      start_block(join);
      auto phi = [&](const std::string& ty, const std::string& skipped, const std::string& v) {
        return op("phi " + ty + " [ " + skipped + ", %" + from + " ], [ " + v + ", %" + in_end + " ]");
      };
      for (size_t j = 0; j < es.size(); ++j) seens[j] = phi("i64", "-1", seens[j]), failss[j] = phi("i1", "false", failss[j]);
      stepbad = phi("i1", "false", stepbad);
    }
    c.bad = c.bad == "false" ? stepbad : op("or i1 " + c.bad + ", " + stepbad);
    for (size_t j = 0; j < es.size(); ++j) {
      std::string lane = es[j].lane, flat = es[j].flat, fails = failss[j], seen = seens[j];
      c.lanes.push_back([this, fails, cond, lane, flat, seen](CheckAcc& a) { check_lane(a, fails, cond, lane, flat, seen); });
    }
  };
  if (!coarse) {
    elements(cc, pred, false);
    return;
  }
  // Granules: the claims of a statement are emitted together when it ends (pending), in phases, so
  // that their loads and then their compare-and-swaps are in flight together: 0, each granule word
  // loaded (every lane; a lane with nothing to claim loads the buffer's first granule word); 1, the
  // lanes of a warp that share a granule combine their masks (dtsim_cc_group: without match.any and
  // redux where the warp is regular) and the lowest of them swaps in this instance's claim if the
  // word is free or already this instance's and site's (branch-free: the swap is predicated); 2,
  // the swaps' results, read only once every swap is issued; 3, behind one branch taken only where
  // some lane of the warp was not settled by its swap (vote.any, once per statement, in pending):
  // dtsim_cc_granule where needed, and every lane learns whether its elements go to the element
  // words; 4, that outcome where the branch joins (false where it was skipped); 5, each step's
  // element claims and their accounting behind one branch on it.
  declare("declare i32 @llvm.nvvm.match.any.sync.i64(i32, i64)");
  declare("declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)");
  declare("declare i32 @llvm.cttz.i32(i32, i1)");
  declare("declare i32 @llvm.nvvm.read.ptx.sreg.laneid()");
  declare("declare i1 @llvm.nvvm.vote.all.sync(i32, i1)");
  const Buf& b = bs[0];
  std::string gi = op("lshr i64 " + b.off + ", 6");
  std::string g = op("add i64 " + b.granules + ", " + op("shl i64 " + gi + ", 4"));
  std::string e = op("add i64 " + b.shadow + ", " + op("shl i64 " + gi + ", 9"));
  uint64_t ones = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  std::string m = op("shl i64 " + std::to_string(static_cast<int64_t>(ones)) + ", " + op("and i64 " + b.off + ", 63"));
  std::string ga = op("select i1 " + pred + ", i64 " + g + ", i64 " + b.granules);
  struct State {
    std::string v, grp, lead, fix, gm, rlo, rhi, olo, ohi, act, easy, slow;
  };
  auto st = std::make_shared<State>();
  const std::string off = b.off;
  cc.claims.push_back([this, st, g, e, m, ga, pred, mine, elements, off, w](int phase, BoundsCheck& c) {
    if (phase == 0) {
      st->v = op("load volatile <2 x i64>, <2 x i64> addrspace(1)* " + op("inttoptr i64 " + ga + " to <2 x i64> addrspace(1)*") + ", align 16");
      return;
    }
    if (phase == 1) {
      std::string key = op("select i1 " + pred + ", i64 " + g + ", i64 0");
      // The regular warp (see dtsim_cc_group): every lane claims, at lane 0's offset + lane * w, and
      // lane 0's offset is a multiple of `align`; then a group is `span` lanes and its mask is static.
      const int span = std::min(32, kConflictGranule / w), align = std::min(kConflictGranule, 32 * w);
      std::string lane = op("call i32 @llvm.nvvm.read.ptx.sreg.laneid()");
      std::string am = op("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"() convergent");
      std::string lo0 = op("zext i32 " + op("call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 " + am + ", i32 " + op("trunc i64 " + off + " to i32") + ", i32 0, i32 31)") + " to i64");
      std::string hi0 = op("zext i32 " + op("call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 " + am + ", i32 " + op("trunc i64 " + op("lshr i64 " + off + ", 32") + " to i32") + ", i32 0, i32 31)") + " to i64");
      std::string off0 = op("or i64 " + lo0 + ", " + op("shl i64 " + hi0 + ", 32"));
      std::string at = op("add i64 " + off0 + ", " + op("mul i64 " + op("zext i32 " + lane + " to i64") + ", " + std::to_string(w)));
      std::string mine_ok = op("and i1 " + pred + ", " + op("icmp eq i64 " + off + ", " + at));
      std::string all = op("call i1 @llvm.nvvm.vote.all.sync(i32 " + am + ", i1 " + mine_ok + ")");
      std::string reg = op("and i1 " + op("and i1 " + all + ", " + op("icmp eq i32 " + am + ", -1")) + ", " +
                           op("icmp eq i64 " + op("and i64 " + off0 + ", " + std::to_string(align - 1)) + ", 0"));
      std::string fgrp = span == 32 ? "-1" : op("shl i32 " + std::to_string((1 << span) - 1) + ", " + op("and i32 " + lane + ", " + std::to_string(~(span - 1))));
      std::string fgm = w >= 2 ? "-1" : op("shl i64 4294967295, " + op("and i64 " + off0 + ", 63"));
      std::string gr = op("call { i32, i64 } @dtsim_cc_group(i1 " + reg + ", i32 " + fgrp + ", i64 " + fgm + ", i64 " + key + ", i64 " + m + ")");
      st->grp = op("extractvalue { i32, i64 } " + gr + ", 0");
      st->gm = op("extractvalue { i32, i64 } " + gr + ", 1");
      st->lead = op("call i32 @llvm.cttz.i32(i32 " + st->grp + ", i1 true)");
      std::string act = op("and i1 " + pred + ", " + op("icmp eq i32 " + st->lead + ", " + lane));
      std::string olo = op("extractelement <2 x i64> " + st->v + ", i32 0"), ohi = op("extractelement <2 x i64> " + st->v + ", i32 1");
      std::string fresh = op("icmp ne i64 " + op("and i64 " + ohi + ", -281474976710656") + ", %dtsim_epoch");
      std::string same = op("icmp eq i64 " + ohi + ", " + mine);
      std::string orm = op("or i64 " + olo + ", " + st->gm);
      std::string nochange = op("and i1 " + same + ", " + op("icmp eq i64 " + orm + ", " + olo));
      std::string easy = op("or i1 " + fresh + ", " + same);
      std::string nlo = op("select i1 " + fresh + ", i64 " + st->gm + ", i64 " + orm);
      std::string swap = op("and i1 " + op("and i1 " + act + ", " + easy) + ", " + op("xor i1 " + nochange + ", true"));
      std::string r = op("call { i64, i64 } asm sideeffect \"{ .reg .pred p; .reg .b128 c, s, d; setp.ne.b32 p, $7, 0; mov.b64 $0, $2; mov.b64 $1, $3; "
                         "mov.b128 c, {$2, $3}; mov.b128 s, {$4, $5}; @p atom.global.cas.b128 d, [$6], c, s; @p mov.b128 {$0, $1}, d; }\", "
                         "\"=&l,=&l,l,l,l,l,l,r,~{memory}\"(i64 " + olo + ", i64 " + ohi + ", i64 " + nlo + ", i64 " + mine + ", i64 " + ga + ", i32 " +
                         op("zext i1 " + swap + " to i32") + ")");
      st->rlo = op("extractvalue { i64, i64 } " + r + ", 0");
      st->rhi = op("extractvalue { i64, i64 } " + r + ", 1");
      st->olo = olo, st->ohi = ohi, st->act = act, st->easy = easy;
      return;
    }
    if (phase == 2) {  // after every swap of the statement is issued: their results
      std::string ok = op("and i1 " + op("icmp eq i64 " + st->rlo + ", " + st->olo) + ", " + op("icmp eq i64 " + st->rhi + ", " + st->ohi));
      st->fix = op("and i1 " + st->act + ", " + op("xor i1 " + op("and i1 " + st->easy + ", " + ok) + ", true"));
      c.any_fix = c.any_fix == "false" ? st->fix : op("or i1 " + c.any_fix + ", " + st->fix);
      return;
    }
    if (phase == 3) {  // where some lane of the warp needs it: the slow path, and the group's outcome
      st->slow = op("call i1 @dtsim_cc_fix(i1 " + st->fix + ", i32 " + st->grp + ", i32 " + st->lead + ", i64 " + g + ", i64 " + e + ", i64 " +
                    st->gm + ", i64 " + mine + ", i64 %dtsim_epoch, i64 " + st->rlo + ", i64 " + st->rhi + ")");
      return;
    }
    if (phase == 4) {  // every claim's phi first, at the top of the block that joins the slow paths
      st->slow = op("phi i1 [ false, %" + c.fix_skip + " ], [ " + st->slow + ", %" + c.fix_done + " ]");
      return;
    }
    elements(c, op("and i1 " + pred + ", " + st->slow), true);
  });
}

KernelEmitter::PendingCheck KernelEmitter::pending(BoundsCheck& bc) {
  // Conflict checks: the statement's granule claims, phase by phase (see conflict_lanes).
  auto claims = std::move(bc.claims);
  bc.claims.clear();
  for (int phase = 0; phase < 6; ++phase) {
    if (phase == 3 && !claims.empty()) {
      // The slow paths of all the statement's claims behind one warp-uniform branch: where every
      // swap of the warp settled its granule, no lane shuffles an outcome or claims an element.
      std::string am = op("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"() convergent");
      std::string any = op("call i1 @llvm.nvvm.vote.any.sync(i32 " + am + ", i1 " + bc.any_fix + ")");
      declare("declare i1 @llvm.nvvm.vote.any.sync(i32, i1)");
      std::string in = label("cc.fix"), join = label("cc.fixj");
      bc.fix_skip = cur_block_;
      line("br i1 " + any + ", label %" + in + ", label %" + join);
      start_block(in);
      for (auto& c : claims) c(phase, bc);
      bc.fix_done = cur_block_;
      br(join);
      start_block(join);
      continue;
    }
    for (auto& c : claims) c(phase, bc);
  }
  return PendingCheck{bc.site, bc.bad, [this, lanes = bc.lanes] {
                        CheckAcc a;
                        for (auto& l : lanes) l(a);
                        if (a.nact == "0") a.nact = op("add i32 0, 0");  // counted, even if no lane is active
                        if (a.flat.empty()) a.flat = "-1";
                        return a;
                      }};
}

int KernelEmitter::k_degree(const ExprP& e, const HoistLoop& L) {
  auto deg = [&](const ExprP& a) { return a ? k_degree(a, L) : 0; };
  auto ring_int = [](const Type& t) { return !t.ptr && (t.elem == Scalar::I32 || t.elem == Scalar::I64); };
  switch (e->kind) {
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange: return 0;
    case ExprKind::Var: {
      if (e->slot == L.kslot || L.carried.count(e->slot)) return 1;
      if (!L.in_body.count(e->slot)) return 0;
      size_t s = static_cast<size_t>(e->slot);
      const ExprP& d = plan_.single_def[s];
      if (plan_.assigns[s] != 1 || !d || !(d->type == e->type)) return -1;
      return deg(d);
    }
    case ExprKind::Full: {
      int v = deg(e->args.back());
      return v == 1 && !(e->args.back()->type.elem == e->type.elem) ? -1 : v;
    }
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast: return deg(e->args[0]);
    case ExprKind::Unary: {
      int a = deg(e->args[0]);
      if (a == 1 && (e->uop != UnOp::Neg || !ring_int(e->type) || !(e->args[0]->type.elem == e->type.elem))) return -1;
      return a;
    }
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
      for (auto& a : e->args)
        if (deg(a) != 0) return -1;
      return 0;
    case ExprKind::Binary: {
      int a = deg(e->args[0]), b = deg(e->args[1]);
      if (a < 0 || b < 0) return -1;
      if (a == 0 && b == 0) {
        switch (e->bop) {
          case BinOp::FloorDiv:
          case BinOp::Mod:
          case BinOp::Cdiv: return -1;  // a zero divisor must fault where the program divides, not before
          case BinOp::Add:
          case BinOp::Sub:
          case BinOp::Mul:
          case BinOp::Div:
          case BinOp::And:
          case BinOp::Or:
          case BinOp::Xor:
          case BinOp::Shl:
          case BinOp::Shr:
          case BinOp::Lt:
          case BinOp::Le:
          case BinOp::Gt:
          case BinOp::Ge:
          case BinOp::Eq:
          case BinOp::Ne:
          case BinOp::LAnd:
          case BinOp::LOr:
          case BinOp::Min:
          case BinOp::Max:
          case BinOp::MinNum:
          case BinOp::MaxNum:
          DT_MATH_BINOP_CASES
            return 0;
        }
      }
      // A k-dependent operand keeps the result's width (no conversion on the way), or is the integer
      // offset of pointer arithmetic.
      for (int i = 0; i < 2; ++i) {
        const Type& x = e->args[static_cast<size_t>(i)]->type;
        if ((i ? b : a) == 0) continue;
        if (e->type.ptr ? !(x.ptr || ring_int(x)) : !(ring_int(e->type) && ring_int(x) && x.elem == e->type.elem)) return -1;
      }
      switch (e->bop) {
        case BinOp::Add: return 1;
        case BinOp::Sub: return e->args[1]->type.ptr ? -1 : 1;
        case BinOp::Mul: return e->type.ptr || a + b > 1 ? -1 : 1;
        case BinOp::Div:
        case BinOp::FloorDiv:
        case BinOp::Mod:
        case BinOp::And:
        case BinOp::Or:
        case BinOp::Xor:
        case BinOp::Shl:
        case BinOp::Shr:
        case BinOp::Lt:
        case BinOp::Le:
        case BinOp::Gt:
        case BinOp::Ge:
        case BinOp::Eq:
        case BinOp::Ne:
        case BinOp::LAnd:
        case BinOp::LOr:
        case BinOp::Min:
        case BinOp::Max:
        case BinOp::MinNum:
        case BinOp::MaxNum:
        case BinOp::Cdiv:
        DT_MATH_BINOP_CASES
          return -1;
      }
      return -1;
    }
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram: return -1;
  }
  return -1;
}

ExprP KernelEmitter::inline_body_vars(const ExprP& e, const HoistLoop& L) {
  if (!e) return e;
  if (e->kind == ExprKind::Var && L.in_body.count(e->slot) && !L.carried.count(e->slot))
    return inline_body_vars(plan_.single_def[static_cast<size_t>(e->slot)], L);
  ExprP out;
  for (size_t i = 0; i < e->args.size(); ++i) {
    ExprP a = inline_body_vars(e->args[i], L);
    if (a == e->args[i]) continue;
    if (!out) out = std::make_shared<Expr>(*e);
    out->args[i] = a;
  }
  return out ? out : e;
}

namespace {

// The integer terms of pointer expression p that depend on k (p = base + t1 + t2 - t3 ..., through
// views); false when p is not of that form.
bool k_terms(const ExprP& p, const std::function<int(const ExprP&)>& deg, std::vector<ExprP>& out) {
  if (deg(p) == 0) return true;
  switch (p->kind) {
    case ExprKind::ExpandDims:
    case ExprKind::Reshape:
    case ExprKind::Trans:
    case ExprKind::Broadcast: return k_terms(p->args[0], deg, out);
    case ExprKind::Var: return p->type.ptr;  // a carried pointer: advanced exactly, in 64 bits
    case ExprKind::Binary: {
      if (p->bop != BinOp::Add && p->bop != BinOp::Sub) return false;
      bool pa = p->args[0]->type.ptr;
      const ExprP& base = pa ? p->args[0] : p->args[1];
      const ExprP& off = pa ? p->args[1] : p->args[0];
      if (deg(off) == 1) out.push_back(off);
      return k_terms(base, deg, out);
    }
    case ExprKind::Const:
    case ExprKind::ProgramId:
    case ExprKind::NumPrograms:
    case ExprKind::Arange:
    case ExprKind::Full:
    case ExprKind::Unary:
    case ExprKind::Where:
    case ExprKind::Cast:
    case ExprKind::Bitcast:
    case ExprKind::Load:
    case ExprKind::Dot:
    case ExprKind::Reduce:
    case ExprKind::Scan:
    case ExprKind::CombineArg:
    case ExprKind::Swizzle2d:
    case ExprKind::IntToPtr:
    case ExprKind::PtrToInt:
    case ExprKind::Machine:
    case ExprKind::Gather:
    case ExprKind::Histogram:
      return false;
  }
  return false;
}

// What a conjunct views: through expand_dims and broadcasts that keep its last dimension.
const Expr& view_source(const Expr& c) {
  if (c.kind == ExprKind::ExpandDims && static_cast<size_t>(c.ints[0]) + 1 != c.type.shape.size()) return view_source(*c.args[0]);
  if (c.kind == ExprKind::Broadcast && c.args[0]->type.is_tile() && c.args[0]->type.shape.back() == c.type.shape.back())
    return view_source(*c.args[0]);
  return c;
}

// The conjuncts of mask m (split at & and &&).
void conjuncts(const ExprP& m, std::vector<ExprP>& out) {
  if (m->kind == ExprKind::Binary && (m->bop == BinOp::And || m->bop == BinOp::LAnd) && m->type.elem == Scalar::I1 &&
      m->args[0]->type.elem == Scalar::I1 && m->args[1]->type.elem == Scalar::I1) {
    conjuncts(m->args[0], out);
    conjuncts(m->args[1], out);
    return;
  }
  out.push_back(m);
}

}  // namespace

// Whether loop f qualifies for hoisted bounds checks (see KernelEmitter.h), and its accesses: the
// planning half of the hoisting (stage `loops`); loop_in_bounds emits the test from what it found.
std::optional<HoistPlan> KernelEmitter::plan_hoist(const Stmt& f) {
  std::set<int> in_body;
  slots_assigned(f.body, in_body);
  int kslot = f.slots[0];
  // A store or atomic must claim its elements in every iteration when conflicts are checked.
  if (opt_.conflict_checks) {
    bool writes = false;
    for_each_stmt(f.body, [&](const Stmt& s) { writes = writes || s.kind == StmtKind::Store || s.kind == StmtKind::Atomic; });
    if (writes) return std::nullopt;
  }
  // (An i32 k: every k-dependent term is i32 too, since nothing converts on the way.)
  if (k_.slot_types[static_cast<size_t>(kslot)].elem != Scalar::I32 || in_body.count(kslot)) return std::nullopt;
  // Variables the body assigns count as their definitions only when they are assigned at its
  // top level (a definition under an `if` may not run in every iteration).
  std::set<int> top;
  for (auto& st : f.body)
    if (st->kind == StmtKind::Assign) top.insert(st->slots.begin(), st->slots.end());
  std::set<int> nested;
  for (int slot : in_body)
    if (!top.count(slot)) nested.insert(slot);
  HoistLoop L{kslot, in_body, {}};
  auto deg = [&](const ExprP& e) {
    std::set<int> used;
    depends_on(e, used);
    for (int slot : used)
      if (nested.count(slot)) return -1;
    return k_degree(e, L);
  };
  // Carried pointers: `p = p + c` at the top level, p's only assignment in the body (its other one,
  // before the loop, gives p0), c not depending on the iteration. Iteration j sees p0 + j * c before
  // that statement and p0 + (j + 1) * c after it.
  std::map<int, size_t> inc_at;
  for (size_t i = 0; i < f.body.size(); ++i) {
    const Stmt& st = *f.body[i];
    auto form = loop_advance(f, st);
    if (!form || !k_.slot_types[static_cast<size_t>(st.slots[0])].ptr || !(st.args[0]->type == k_.slot_types[static_cast<size_t>(st.slots[0])]))
      continue;
    L.carried[st.slots[0]] = *advance_step(*form->advance, st.slots[0]);
    inc_at[st.slots[0]] = i;
  }
  for (auto& [slot, c] : L.carried)
    if (deg(c) != 0) return std::nullopt;
  // Every global access of the body: its pointer, its mask, the top-level statement it is in.
  struct Found {
    ExprP ptr, mask;
    size_t at;
  };
  std::vector<Found> acc;
  size_t at = 0;
  std::function<void(const ExprP&)> walk_expr = [&](const ExprP& e) {
    if (!e) return;
    if (e->kind == ExprKind::Load) acc.push_back({e->args[0], e->args.size() > 1 ? e->args[1] : nullptr, at});
    for (auto& a : e->args) walk_expr(a);
  };
  std::function<void(const std::vector<StmtP>&)> walk = [&](const std::vector<StmtP>& body) {
    for (auto& s : body) {
      if (s->kind == StmtKind::Store) acc.push_back({s->args[0], s->args.size() > 2 ? s->args[2] : nullptr, at});
      for (auto& a : s->args) walk_expr(a);
      walk(s->body);
      walk(s->orelse);
    }
  };
  for (at = 0; at < f.body.size(); ++at) walk({f.body[at]});
  if (acc.empty()) return std::nullopt;
  std::vector<HoistAccess> as;
  for (const Found& fa : acc) {
    if (deg(fa.ptr) < 0) return std::nullopt;
    bool address = false;
    std::vector<const Param*> bufs = buffers_of(fa.ptr, &address);
    if (address || bufs.size() != 1) return std::nullopt;
    HoistAccess a{inline_body_vars(fa.ptr, L), {}, {}, {}, bufs[0], {}, 1, {}, {}, {}};
    if (!k_terms(a.ptr, deg, a.terms)) return std::nullopt;
    if (fa.mask) {
      std::vector<ExprP> cs;
      conjuncts(inline_body_vars(fa.mask, L), cs);
      for (const ExprP& c : cs) {
        const Expr& x = view_source(*c);
        if (deg(c) == 0) a.conds.push_back(c);
        else if (x.kind == ExprKind::Binary && binop_is_compare(x.bop) && deg(x.args[0]) >= 0 && deg(x.args[1]) >= 0)
          a.kconds.push_back(c);  // computed from invariants and k as the loop computes it
      }
    }
    // The carried pointers the pointer and the k-dependent conjuncts read.
    std::set<int> used;
    depends_on(a.ptr, used);
    for (const ExprP& c : a.kconds) depends_on(c, used);
    for (int slot : used)
      if (L.carried.count(slot)) a.after[slot] = fa.at > inc_at[slot] ? 1 : 0;
    as.push_back(std::move(a));
  }
  bool has_k_mask = false;
  for (auto& a : as) has_k_mask = has_k_mask || !a.kconds.empty();
  return HoistPlan{L, std::move(as), has_k_mask};
}

std::string KernelEmitter::loop_in_bounds(const Stmt& f, const HoistPlan& h) {
  const int kslot = f.slots[0];
  const HoistLoop& L = h.loop;
  std::vector<HoistAccess> as = h.accesses;
  using Access = HoistAccess;
  const bool has_k_mask = h.has_k_mask;
  ++info.hoisted_loops;

  // Trip count n (i64), the first, second and last values of k.
  std::string lo = cast(f.args[0]->type.elem, Scalar::I32, eval_scalar(f.args[0]));
  std::string hi = cast(f.args[1]->type.elem, Scalar::I32, eval_scalar(f.args[1]));
  std::string step = cast(f.args[2]->type.elem, Scalar::I32, eval_scalar(f.args[2]));
  auto wide = [&](const std::string& x) { return op("sext i32 " + x + " to i64"); };
  std::string st64 = wide(step);
  st64 = op("select i1 " + op("icmp sgt i64 " + st64 + ", 0") + ", i64 " + st64 + ", i64 1");  // a step <= 0 traps in the loop
  std::string span = op("sub i64 " + wide(hi) + ", " + wide(lo));
  std::string n = op("select i1 " + op("icmp sgt i64 " + span + ", 0") + ", i64 " +
                     op("add i64 " + op("sdiv i64 " + op("sub i64 " + span + ", 1") + ", " + st64) + ", 1") + ", i64 0");
  std::string nm1 = op("sub i64 " + n + ", 1");
  std::string last = op("trunc i64 " + op("add i64 " + wide(lo) + ", " + op("mul i64 " + nm1 + ", " + st64)) + " to i32");
  std::string second = op("add i32 " + lo + ", " + step);
  const std::string& kvar = slot_vars_[static_cast<size_t>(kslot)][0];
  std::string saved = op("load i32, i32* " + kvar);
  auto set_k = [&](const std::string& v) { line("store i32 " + v + ", i32* " + kvar); };
  auto either = [&](std::string& f, const std::string& c) { f = f == "false" ? c : op("or i1 " + f + ", " + c); };
  auto both = [&](const std::string& a, const std::string& b) { return a == "true" ? b : b == "true" ? a : op("and i1 " + a + ", " + b); };
  auto negate = [&](const std::string& a) { return a == "true" ? std::string("false") : a == "false" ? std::string("true") : op("xor i1 " + a + ", true"); };
  std::string bad = "false";
  auto fail_if = [&](const std::string& c) { either(bad, c); };

  // Runs. Where the pointer tile comes in runs of r consecutive elements along its last dimension
  // (the axis analysis' contiguity, as for vector accesses), each mask conjunct is either constant
  // over a run or a comparison `x < n` (x <= n, n > x, n >= x) of consecutive x with n constant
  // over it (its lanes active in a prefix of the run), and the k-dependent terms come in runs too,
  // the test reads one element per run: its offset, the conjuncts' values there and the prefix
  // length, and checks the run's active elements as one span. The carried pointers are read as
  // init + m * c at the iteration m in k (as the pipeline reads them), so any layout can be used:
  // the runs of a blocked layout holding r consecutive elements per thread.
  std::map<int, Carried> saved_carried = carried_;
  for (auto& [slot, c] : L.carried) {
    bool late = false;
    for (auto& a : as) late = late || (a.after.count(slot) && a.after.at(slot) == 1);
    auto form = carried_form(slot);
    if (late || !form || !recomputable(*form->init) || !recomputable(c)) continue;
    carried_[slot] = Carried{*form, kvar, lo, op("select i1 " + op("icmp sgt i32 " + step + ", 0") + ", i32 " + step + ", i32 1"), Scalar::I32};
  }
  auto along_last = [](AxisInfo ai, const Type& t, int64_t last) {  // broadcast along the tile's last dim: constant
    if (last != 1 && (t.is_scalar() || t.shape.back() == 1)) return AxisInfo{1, ai.div, AxisInfo::kMax};
    return ai;
  };
  // The run a conjunct allows as a prefix comparison (0: it is not one).
  auto prefix_run = [&](const ExprP& c, int64_t last) -> int64_t {
    const Expr& x = view_source(*c);
    if (x.kind != ExprKind::Binary || x.type.is_scalar() || x.type.shape.back() != last) return 0;
    bool left = x.bop == BinOp::Lt || x.bop == BinOp::Le, right = x.bop == BinOp::Gt || x.bop == BinOp::Ge;
    if (!left && !right) return 0;
    const ExprP& r = x.args[left ? 0 : 1];
    const ExprP& b = x.args[left ? 1 : 0];
    if (r->type.ptr || b->type.ptr || r->type.elem != Scalar::I32 || b->type.elem != Scalar::I32 || r->type.is_scalar() ||
        r->type.shape.back() != last)
      return 0;
    return std::min(axis_info(r).contig, along_last(axis_info(b), b->type, last).cst);
  };
  for (auto& a : as) {
    const Type& pt = a.ptr->type;
    if (pt.is_scalar() || !recomputable(a.ptr, true)) continue;
    int64_t last = pt.shape.back();
    int64_t r = std::min(axis_info(a.ptr).contig, last);
    for (auto& t : a.terms) {
      if (!recomputable(t, true)) r = 1;
      AxisInfo ti = along_last(axis_info(t), t->type, last);
      r = std::min(r, std::max(ti.contig, ti.cst));
    }
    for (auto* cs : {&a.conds, &a.kconds})
      for (auto& c : *cs) {
        if (!recomputable(c, true)) r = 1;
        r = std::min(r, std::max(along_last(axis_info(c), c->type, last).cst, prefix_run(c, last)));
      }
    if (r < 2) continue;
    a.run = r;
    for (auto& c : a.conds) a.cond_prefix.push_back(along_last(axis_info(c), c->type, last).cst < r);
    for (auto& c : a.kconds) a.kcond_prefix.push_back(along_last(axis_info(c), c->type, last).cst < r);
    Dist runs = blocked(pt.shape, k_.num_warps, static_cast<int>(r));
    for (int q = 0; q < runs.nregs(); q += static_cast<int>(r)) a.starts.push_back(coords(runs, q));
  }
  int64_t min_run = AxisInfo::kMax;
  for (auto& a : as) min_run = std::min(min_run, a.run);
  note(std::string("bounds checks hoisted: before the loop, every access of its first and last iteration is checked (lanes "
                   "its mask's k-independent part leaves active") +
       (has_k_mask ? "; or, at the last, only lanes its k-dependent part leaves active, and at the one before all must be" : "") +
       (min_run > 1 ? ", in runs of " + std::to_string(min_run) + "+ consecutive elements" : std::string()) +
       "); when all are in bounds the loop runs without checks, else checked per iteration");
  // e at the coordinates c of a run start (of the access tile's shape).
  auto at_run = [&](const Access& a, const ExprP& e, const std::vector<std::string>& c) {
    return e->type.is_scalar() ? eval_scalar(e) : this->at(e, bcast_coords(a.ptr->type.shape, c, e->type.shape));
  };

  // No term wraps around its width between the first and the last iteration: term values advance by
  // the same d (mod 2^width) each iteration, so w0 + (n - 1) * d, computed exactly, must stay in range.
  // In a run, an element's term is the run start's plus its position (or the same), so the run
  // starts' terms are the ones to check.
  auto term_values = [&](std::vector<TV>& tvs, bool again) {
    std::vector<std::string> out;
    size_t i = 0;
    for (auto& a : as)
      for (auto& t : a.terms) {
        if (a.run > 1) {
          for (auto& c : a.starts) out.push_back(at_run(a, t, c));
          continue;
        }
        TV x = again ? eval(t, tvs[i].dist) : eval(t);
        if (!again) tvs.push_back(x);
        ++i;
        for (size_t r = 0; r < x.v.size(); ++r) out.push_back(x.v[r]);
      }
    return out;
  };
  std::vector<TV> tvs;
  set_k(lo);
  std::vector<std::string> w0 = term_values(tvs, false);
  set_k(second);
  std::vector<std::string> w1 = term_values(tvs, true);
  for (size_t i = 0; i < w0.size(); ++i) {
    std::string d = op("sub i32 " + w1[i] + ", " + w0[i]);
    std::string s = op("add i64 " + wide(w0[i]) + ", " + op("mul i64 " + nm1 + ", " + wide(d)));
    fail_if(op("icmp ugt i64 " + op("add i64 " + s + ", 2147483648") + ", 4294967295"));
  }
  // Carried pointers: p0 and the step c (each |c| < 2^31 elements, so that p0 + m * c is exact).
  struct Carry {
    std::vector<std::string> p0, c;
  };
  std::map<int, Carry> carry;
  for (auto& [slot, c] : L.carried) {
    const Type& t = k_.slot_types[static_cast<size_t>(slot)];
    std::string pty = reg_type(t);
    Carry& cr = carry[slot];
    for (const std::string& var : slot_vars_[static_cast<size_t>(slot)]) cr.p0.push_back(op("load " + pty + ", " + pty + "* " + var));
    ExprP ci = inline_body_vars(c, L);
    TV cv = t.is_scalar() ? eval(ci) : fit(ci, plan_.layouts[static_cast<size_t>(slot)]);
    for (size_t r = 0; r < cr.p0.size(); ++r) {
      std::string c64 = cast(cv.type.elem, Scalar::I64, cv.at(static_cast<int>(r)));
      fail_if(op("icmp uge i64 " + op("add i64 " + c64 + ", 2147483648") + ", 4294967296"));
      cr.c.push_back(c64);
    }
  }
  // p := p0 + m * c in every carried pointer the access uses (m: the iteration, plus one after the advance).
  auto set_carried = [&](const Access& a, const std::string& m) {
    for (auto& [slot, after] : a.after) {
      const Type& t = k_.slot_types[static_cast<size_t>(slot)];
      std::string pty = reg_type(t), mt = mem_type(t.elem);
      std::string mult = after ? op("add i64 " + m + ", 1") : m;
      const Carry& cr = carry.at(slot);
      for (size_t r = 0; r < cr.p0.size(); ++r) {
        std::string pr = op("getelementptr " + mt + ", " + mt + " addrspace(1)* " + cr.p0[r] + ", i64 " + op("mul i64 " + mult + ", " + cr.c[r]));
        line("store " + pty + " " + pr + ", " + pty + "* " + slot_vars_[static_cast<size_t>(slot)][r]);
      }
    }
  };
  // Each lane's element offset, at the first and the last iteration, within the buffer. An access
  // whose mask has comparisons of degree-1 terms in k (a ragged last K step) may instead pass where
  // those hold at the last iteration and, at the one before, every lane the k-independent conjuncts
  // leave active is active and in bounds: a lane's earlier offsets lie between its first and that one.
  enum Point { First, BeforeLast, Last };
  std::vector<std::tuple<Point, std::string, std::string>> points = {{First, lo, "0"}, {Last, last, nm1}};
  if (has_k_mask) {
    std::string two = op("icmp sge i64 " + n + ", 2");
    std::string prev = op("select i1 " + two + ", i32 " + op("sub i32 " + last + ", " + step) + ", i32 " + lo);
    std::string mprev = op("select i1 " + two + ", i64 " + op("sub i64 " + n + ", 2") + ", i64 0");
    points.insert(points.begin() + 1, {BeforeLast, prev, mprev});
  }
  // One span of an access at one point: the offset of its first element, and the elements active
  // under the k-independent conjuncts (act_c and the first len_c) and under the k-dependent ones.
  struct Span {
    std::string off, act_c = "true", len_c, act_k = "true", len_k;
  };
  auto is_num = [](const std::string& x) { return !x.empty() && (std::isdigit(static_cast<unsigned char>(x[0])) != 0); };
  auto min_len = [&](const std::string& a, const std::string& b) {
    if (is_num(a) && is_num(b)) return std::stoll(a) <= std::stoll(b) ? a : b;
    return op("select i1 " + op("icmp slt i64 " + a + ", " + b) + ", i64 " + a + ", i64 " + b);
  };
  // The prefix of a run starting at c (of the access tile) that comparison conjunct e leaves active.
  std::function<std::string(const ExprP&, std::vector<std::string>, int64_t)> prefix_len =
      [&](const ExprP& e, std::vector<std::string> c, int64_t r) -> std::string {
    if (e->kind == ExprKind::ExpandDims) {
      c.erase(c.begin() + e->ints[0]);
      return prefix_len(e->args[0], c, r);
    }
    if (e->kind == ExprKind::Broadcast) return prefix_len(e->args[0], bcast_coords(e->type.shape, c, e->args[0]->type.shape), r);
    bool left = e->bop == BinOp::Lt || e->bop == BinOp::Le;
    auto val = [&](const ExprP& x) {
      return wide(x->type.is_scalar() ? eval_scalar(x) : this->at(x, bcast_coords(e->type.shape, c, x->type.shape)));
    };
    std::string len = op("sub i64 " + val(e->args[left ? 1 : 0]) + ", " + val(e->args[left ? 0 : 1]));
    if (e->bop == BinOp::Le || e->bop == BinOp::Ge) len = op("add i64 " + len + ", 1");
    len = op("select i1 " + op("icmp sgt i64 " + len + ", 0") + ", i64 " + len + ", i64 0");
    return min_len(len, std::to_string(r));
  };
  // Per access: failures at the first iteration, at the last (lanes of the k-independent conjuncts),
  // and of the ragged form (the one before the last, and the last where the k-dependent ones hold).
  std::vector<std::string> f_first(as.size(), "false"), f_last(as.size(), "false"), f_ragged(as.size(), "false");
  for (const auto& [pt_kind, kv, m] : points) {
    set_k(kv);
    for (size_t ai = 0; ai < as.size(); ++ai) {
      Access& a = as[ai];
      if (pt_kind == BeforeLast && a.kconds.empty()) continue;
      const Type& pt = a.ptr->type;
      std::string bty = reg_type(k_.slot_types[static_cast<size_t>(a.buf->slot)]);
      std::string base = op("ptrtoint " + bty + " %p." + a.buf->name + " to i64");
      std::string pty = mem_type(pt.elem) + " addrspace(1)*";
      auto offset = [&](const std::string& p) {
        return op("sdiv exact i64 " + op("sub i64 " + op("ptrtoint " + pty + " " + p + " to i64") + ", " + base) + ", " +
                  std::to_string(scalar_bytes(pt.elem)));
      };
      std::vector<Span> spans;
      if (a.run > 1) {
        for (auto& c : a.starts) {
          Span sp{offset(at_run(a, a.ptr, c)), "true", std::to_string(a.run), "true", std::to_string(a.run)};
          auto add = [&](const std::vector<ExprP>& es, const std::vector<bool>& prefix, std::string& act, std::string& len) {
            for (size_t i = 0; i < es.size(); ++i) {
              const ExprP& e = es[i];
              if (prefix[i]) len = min_len(len, prefix_len(e, bcast_coords(pt.shape, c, e->type.shape), a.run));
              else act = both(act, to_bool(e->type.elem, at_run(a, e, c)));
            }
          };
          add(a.conds, a.cond_prefix, sp.act_c, sp.len_c);
          if (pt_kind != First) add(a.kconds, a.kcond_prefix, sp.act_k, sp.len_k);
          spans.push_back(sp);
        }
      } else {
        set_carried(a, m);
        TV pv = pt.is_scalar() ? eval(a.ptr) : fit(a.ptr, dflt(pt.shape));
        auto values = [&](const std::vector<ExprP>& cs) {
          std::vector<TV> out;
          for (auto& c : cs) out.push_back(pt.is_scalar() ? eval(c) : fit(c, pv.dist));
          return out;
        };
        std::vector<TV> cv = values(a.conds), kv_ = pt_kind == First ? std::vector<TV>{} : values(a.kconds);
        for (size_t r = 0; r < pv.v.size(); ++r) {
          int ri = static_cast<int>(r);
          Span sp{offset(pv.v[r]), "true", "1", "true", "1"};
          for (auto& c : cv) sp.act_c = both(sp.act_c, to_bool(c.type.elem, c.at(ri)));
          for (auto& c : kv_) sp.act_k = both(sp.act_k, to_bool(c.type.elem, c.at(ri)));
          spans.push_back(sp);
        }
      }
      int64_t extent = 1;
      for (const ExprP& x : a.buf->shape) extent *= eval_param_expr(x, b_).as_int();
      // [off, off + len) within [0, extent), for len >= 1; and "some element active".
      auto in_range = [&](const std::string& off, const std::string& len) {
        if (is_num(len)) {
          int64_t l = std::stoll(len);
          return extent < l ? std::string("false") : op("icmp ult i64 " + off + ", " + std::to_string(extent - l + 1));
        }
        return both(op("icmp sge i64 " + off + ", 0"), op("icmp sle i64 " + off + ", " + op("sub i64 " + std::to_string(extent) + ", " + len)));
      };
      auto some = [&](const std::string& act, const std::string& len) {
        return both(act, is_num(len) ? std::string(std::stoll(len) > 0 ? "true" : "false") : op("icmp sgt i64 " + len + ", 0"));
      };
      auto out = [&](const Span& sp, const std::string& act, const std::string& len) { return both(some(act, len), negate(in_range(sp.off, len))); };
      for (const Span& sp : spans) {
        if (pt_kind == First) either(f_first[ai], out(sp, sp.act_c, sp.len_c));
        if (pt_kind == BeforeLast) {
          // Every lane active under the k-independent conjuncts is active under the others too.
          std::string covered = sp.len_k == std::to_string(a.run) || sp.len_k == sp.len_c ? std::string("true")
                                : op("icmp sge i64 " + sp.len_k + ", " + sp.len_c);
          std::string all_k = both(sp.act_k, covered);
          either(f_ragged[ai], both(some(sp.act_c, sp.len_c), negate(both(all_k, in_range(sp.off, sp.len_c)))));
        }
        if (pt_kind == Last) {
          either(f_last[ai], out(sp, sp.act_c, sp.len_c));
          if (!a.kconds.empty()) either(f_ragged[ai], out(sp, both(sp.act_c, sp.act_k), min_len(sp.len_c, sp.len_k)));
        }
      }
    }
  }
  carried_ = saved_carried;
  for (size_t ai = 0; ai < as.size(); ++ai) {
    fail_if(f_first[ai]);
    fail_if(as[ai].kconds.empty() ? f_last[ai] : op("and i1 " + f_last[ai] + ", " + f_ragged[ai]));
  }
  set_k(saved);
  for (auto& [slot, cr] : carry) {
    std::string pty = reg_type(k_.slot_types[static_cast<size_t>(slot)]);
    for (size_t r = 0; r < cr.p0.size(); ++r) line("store " + pty + " " + cr.p0[r] + ", " + pty + "* " + slot_vars_[static_cast<size_t>(slot)][r]);
  }
  bad = op("and i1 " + op("icmp sgt i64 " + n + ", 0") + ", " + bad);
  declare("declare i32 @llvm.nvvm.barrier0.or(i32)");
  std::string any = op("call i32 @llvm.nvvm.barrier0.or(i32 " + op("zext i1 " + bad + " to i32") + ")");
  return op("icmp eq i32 " + any + ", 0");
}

}  // namespace dtsim::nvvm
