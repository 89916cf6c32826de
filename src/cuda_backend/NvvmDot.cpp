// dot on the tensor cores (mma.sync.m16n8k16, sm_80+) and its fallback on FMA units.
//
// Tensor-core path: f16/bf16 operands, f32 accumulation; i8 operands, i32 accumulation wrapping as
// the interpreter's (mma.sync.m16n8k32.s32.s8.s8.s32, mma_tiles_s8). The accumulator lives in the mma layout
// (Layout.h: mma_accumulator), warps tiled wm x wn over the output. The operands go to shared memory
// as 16-bit rows padded by 8 elements (16 bytes), so the eight row addresses of each ldmatrix fall in
// distinct banks; ldmatrix.x4 gives the A fragments of one 16x16 block, ldmatrix.x4.trans the B
// fragments of a 16x16 block of the row-major [K, N] tile (two n8 tiles).
#include <algorithm>

#include "cuda_backend/KernelEmitter.h"

namespace dtsim::nvvm {

int KernelEmitter::sm_version() const {
  if (opt_.arch.empty()) return 90;
  if (opt_.arch.rfind("sm_", 0) != 0) return 0;
  return std::atoi(opt_.arch.c_str() + 3);
}

KernelEmitter::MmaPlan KernelEmitter::mma_plan(const Expr& e) {
  MmaPlan p;
  const Type& ta = e.args[0]->type;
  const Type& tb = e.args[1]->type;
  p.M = ta.shape[0];
  p.K = ta.shape[1];
  p.N = tb.shape[1];
  p.in = ta.elem;
  if (sm_version() < 80) {
    p.why = "tensor cores need sm_80 or newer (target " + opt_.arch + ")";
    return p;
  }
  if (ta.elem != tb.elem || (ta.elem != Scalar::F16 && ta.elem != Scalar::BF16 && ta.elem != Scalar::I8)) {
    p.why = std::string("operands are ") + scalar_name(ta.elem) + " and " + scalar_name(tb.elem) + " (tensor cores take f16, bf16 or i8 pairs)";
    return p;
  }
  const int64_t kstep = ta.elem == Scalar::I8 ? 32 : 16;  // m16n8k32 for i8, m16n8k16 for halves
  if (p.K % kstep) {
    p.why = "K = " + std::to_string(p.K) + " is not a multiple of " + std::to_string(kstep);
    return p;
  }
  int W = k_.num_warps;
  int best = -1;
  int64_t best_cost = 0;
  for (int wm = 1; wm <= W; wm *= 2) {
    int wn = W / wm;
    if (p.M % (16 * wm) || p.N % (16 * wn)) continue;
    int64_t cost = p.M / wm + p.N / wn;  // shared-memory reads per warp per k step
    if (best < 0 || cost < best_cost || (cost == best_cost && wm > best)) {
      best = wm;
      best_cost = cost;
    }
  }
  if (best < 0) {
    p.why = "a " + std::to_string(p.M) + "x" + std::to_string(p.N) + " tile cannot be split over " + std::to_string(W) +
            " warps in 16x16 blocks";
    return p;
  }
  p.wm = best;
  p.wn = W / best;
  int64_t R = W % 4 == 0 && p.M % (16 * W) == 0 ? p.M / (16 * W) : 0;
  if (opt_.arch == "sm_90a" && p.in != Scalar::I8 && R > 0 && (R & (R - 1)) == 0 && p.N % 16 == 0 && p.N <= 256) {
    p.wgmma = true;  // R m64nNk16 per warpgroup and k step
    p.wr = static_cast<int>(R);
    p.wm = W;
    p.wn = 1;
  }
  int64_t regs = p.M * p.N / (32 * W);
  if (regs > 128) {
    p.why = std::to_string(regs) + " accumulator registers per thread (at most 128: use more warps or a smaller tile)";
    return p;
  }
  p.ok = true;
  return p;
}

Dist KernelEmitter::accumulator(const MmaPlan& p) const {
  return p.wgmma ? wgmma_accumulator(p.M, p.N, k_.num_warps) : mma_accumulator(p.M, p.N, p.wm, p.wn);
}

std::string KernelEmitter::smem_base32() {
  auto it = coord_cache_.find("smem32");
  if (it != coord_cache_.end()) return it->second;
  prelude_ << "  %smem32.p = ptrtoint [0 x i8] addrspace(3)* @dtsim_smem to i64\n  %smem32 = trunc i64 %smem32.p to i32\n";
  return coord_cache_["smem32"] = "%smem32";
}

std::string KernelEmitter::smem_addr32() {
  return smem_floor_ ? op("add i32 " + smem_base32() + ", " + std::to_string(smem_floor_)) : smem_base32();
}

std::string KernelEmitter::smem_gep(const std::string& off) {
  std::string o = smem_floor_ ? op("add i32 " + off + ", " + std::to_string(smem_floor_)) : off;
  return op("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* @dtsim_smem, i32 0, i32 " + o);
}

void KernelEmitter::stage_b16(const TV& v, const std::string& off, int64_t ld) {
  const Dist& d = v.dist;
  int run = std::min(vector_run(d), 4);
  std::string base = smem_gep(off);
  std::string b16 = op("bitcast i8 addrspace(3)* " + base + " to i16 addrspace(3)*");
  guarded(owner(d), [&] {
    for (int r0 = 0; r0 < d.nregs(); r0 += run) {
      if (first_copy(d, r0) != r0) continue;
      auto c = coords(d, r0);
      std::string idx = op("add i32 " + op("mul i32 " + c[0] + ", " + std::to_string(ld)) + ", " + c[1]);
      std::string p = op("getelementptr inbounds i16, i16 addrspace(3)* " + b16 + ", i32 " + idx);
      std::vector<std::string> bits;
      for (int j = 0; j < run; ++j) bits.push_back(to_mem(v.type.elem, v.at(r0 + j)));
      if (run == 1) {
        line("store i16 " + bits[0] + ", i16 addrspace(3)* " + p);
        continue;
      }
      std::string vt = "<" + std::to_string(run) + " x i16>", acc = "undef";
      for (int j = 0; j < run; ++j) acc = op("insertelement " + vt + " " + acc + ", i16 " + bits[static_cast<size_t>(j)] + ", i32 " + std::to_string(j));
      std::string vp = op("bitcast i16 addrspace(3)* " + p + " to " + vt + " addrspace(3)*");
      line("store " + vt + " " + acc + ", " + vt + " addrspace(3)* " + vp + ", align " + std::to_string(2 * run));
    }
  });
}

// One k step of an mma.sync grid: the mtiles x ntiles m16n8 tiles of accumulator c (4 registers of
// type `acc` each, tile (mi, ni) at 4 * (mi * ntiles + ni)) updated by `mma` from A fragments af[mi]
// (4 registers) and B fragments bf[ni] (2).
void KernelEmitter::mma_grid(const std::string& mma, const std::string& acc, const std::vector<std::vector<std::string>>& af,
                             const std::vector<std::vector<std::string>>& bf, int64_t mtiles, int64_t ntiles, std::vector<std::string>& c) {
  const std::string t = acc == "float" ? "float" : "i32", agg = "{" + t + "," + t + "," + t + "," + t + "}";
  for (int64_t mi = 0; mi < mtiles; ++mi)
    for (int64_t ni = 0; ni < ntiles; ++ni) {
      size_t r = static_cast<size_t>((mi * ntiles + ni) * 4);
      auto& a = af[static_cast<size_t>(mi)];
      auto& b = bf[static_cast<size_t>(ni)];
      std::string res = op("call " + mma + "(i32 " + a[0] + ", i32 " + a[1] + ", i32 " + a[2] + ", i32 " + a[3] + ", i32 " + b[0] +
                           ", i32 " + b[1] + ", " + t + " " + c[r] + ", " + t + " " + c[r + 1] + ", " + t + " " + c[r + 2] + ", " + t + " " +
                           c[r + 3] + ")");
      for (size_t q = 0; q < 4; ++q) c[r + q] = op("extractvalue " + agg + " " + res + ", " + std::to_string(q));
    }
}

TV KernelEmitter::mma_tiles(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc_in) {
  Dist D = mma_accumulator(p.M, p.N, p.wm, p.wn);
  TV acc = convert(acc_in, D);
  int64_t mt = p.M / p.wm, nt = p.N / p.wn, lda = p.K + 8, ldb = p.N + 8;
  // Lane and warp parts of the ldmatrix row addresses (entry block).
  std::string key = "mma" + std::to_string(p.M) + "/" + std::to_string(p.N) + "/" + std::to_string(p.K) + "/" + std::to_string(p.wm);
  std::string la = "%" + key.substr(0, 3) + std::to_string(tmp_++), lb = la + "b";
  {
    std::string l = lane_id(), w = warp_id();
    std::string n = la;
    prelude_ << "  " << n << ".j = lshr i32 " << l << ", 3\n  " << n << ".i = and i32 " << l << ", 7\n"
             << "  " << n << ".jm = and i32 " << n << ".j, 1\n  " << n << ".jh = lshr i32 " << n << ".j, 1\n"
             << "  " << n << ".r8 = shl i32 " << n << ".jm, 3\n  " << n << ".row = or i32 " << n << ".i, " << n << ".r8\n"
             << "  " << n << ".c8 = shl i32 " << n << ".jh, 3\n"
             // warp indices: wn along N (low bits), wm along M
             << "  " << n << ".wn = and i32 " << w << ", " << (p.wn - 1) << "\n  " << n << ".wm = lshr i32 " << w << ", "
             << log2_exact(p.wn) << "\n"
             // A: ((wm*mt + row) * lda + c8) * 2
             << "  " << n << ".am = mul i32 " << n << ".wm, " << mt << "\n  " << n << ".ar = add i32 " << n << ".am, " << n << ".row\n"
             << "  " << n << ".ai = mul i32 " << n << ".ar, " << lda << "\n  " << n << ".ac = add i32 " << n << ".ai, " << n << ".c8\n"
             << "  " << n << " = shl i32 " << n << ".ac, 1\n"
             // B (trans): (row * ldb + wn*nt + c8) * 2, row = k within the 16-block
             << "  " << n << ".bi = mul i32 " << n << ".row, " << ldb << "\n  " << n << ".bn = mul i32 " << n << ".wn, " << nt << "\n"
             << "  " << n << ".bc = add i32 " << n << ".bi, " << n << ".bn\n  " << n << ".bd = add i32 " << n << ".bc, " << n << ".c8\n"
             << "  " << lb << " = shl i32 " << n << ".bd, 1\n";
  }
  std::string base = smem_addr32();
  std::string abase = op("add i32 " + op("add i32 " + base + ", " + a_off) + ", " + la);
  std::string bbase = op("add i32 " + op("add i32 " + base + ", " + b_off) + ", " + lb);
  int64_t mtiles = mt / 16, ntiles = nt / 8;
  std::vector<std::string> c = acc.v;  // register (mi, ni, q) = (mi * ntiles + ni) * 4 + q
  const char* ty = p.in == Scalar::BF16 ? "bf16" : "f16";
  std::string ld4 = "{i32,i32,i32,i32} asm sideeffect \"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4];\", \"=r,=r,=r,=r,r\"";
  std::string ld4t = "{i32,i32,i32,i32} asm sideeffect \"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0,$1,$2,$3}, [$4];\", \"=r,=r,=r,=r,r\"";
  std::string mma = std::string("{float,float,float,float} asm \"mma.sync.aligned.m16n8k16.row.col.f32.") + ty + "." + ty +
                    ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};\", \"=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f\"";
  auto parts = [&](const std::string& s, int n) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back(op("extractvalue {i32,i32,i32,i32} " + s + ", " + std::to_string(i)));
    return v;
  };
  for (int64_t ks = 0; ks < p.K / 16; ++ks) {
    std::vector<std::vector<std::string>> af, bf;
    for (int64_t mi = 0; mi < mtiles; ++mi) {
      std::string addr = op("add i32 " + abase + ", " + std::to_string((mi * 16 * lda + ks * 16) * 2));
      af.push_back(parts(op("call " + ld4 + "(i32 " + addr + ")"), 4));
    }
    for (int64_t np = 0; np < ntiles / 2; ++np) {
      std::string addr = op("add i32 " + bbase + ", " + std::to_string((ks * 16 * ldb + np * 16) * 2));
      auto r = parts(op("call " + ld4t + "(i32 " + addr + ")"), 4);
      bf.push_back({r[0], r[1]});
      bf.push_back({r[2], r[3]});
    }
    mma_grid(mma, "float", af, bf, mtiles, ntiles, c);
  }
  return TV{acc.type, D, c};
}

// i8 operands of the integer mma as bytes: A row-major ([M] rows of `ld` bytes), B transposed ([N]
// rows of `ld` bytes, k contiguous), as the .row A and .col B fragments of m16n8k32 and a
// non-transposing ldmatrix read them.
void KernelEmitter::stage_b8(const TV& v, const std::string& off, int64_t ld, bool transpose) {
  const Dist& d = v.dist;
  std::string base = smem_gep(off);
  guarded(owner(d), [&] {
    for (int r = 0; r < d.nregs(); ++r) {
      if (first_copy(d, r) != r) continue;
      auto c = coords(d, r);
      const std::string& major = transpose ? c[1] : c[0];
      const std::string& minor = transpose ? c[0] : c[1];
      std::string idx = op("add i32 " + op("mul i32 " + major + ", " + std::to_string(ld)) + ", " + minor);
      std::string p = op("getelementptr inbounds i8, i8 addrspace(3)* " + base + ", i32 " + idx);
      line("store i8 " + to_mem(Scalar::I8, v.at(r)) + ", i8 addrspace(3)* " + p);
    }
  });
}

// acc += A @ B on i8 operands staged by stage_b8 (rows of K + 16 bytes): per k step of 32, the A
// fragments of each 16-row block by ldmatrix.x4 (row (j & 1) * 8 + i, bytes (j >> 1) * 16 for lane
// 8j + i) and the B fragments of two 8-column blocks by ldmatrix.x4 of B's transpose (column
// (j >> 1) * 8 + i, bytes (j & 1) * 16), then mma.sync.m16n8k32.s32.s8.s8.s32 (products and sums
// in i32, wrapping). The accumulator's layout is the f32 mma's (mma_accumulator).
TV KernelEmitter::mma_tiles_s8(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc_in) {
  Dist D = mma_accumulator(p.M, p.N, p.wm, p.wn);
  TV acc = convert(acc_in, D);
  const int64_t mt = p.M / p.wm, nt = p.N / p.wn, ld = p.K + 16;
  auto k = [](int64_t v) { return std::to_string(v); };
  std::string l = lane_id(), w = warp_id();
  std::string j = op("lshr i32 " + l + ", 3"), i = op("and i32 " + l + ", 7");
  std::string jm = op("and i32 " + j + ", 1"), jh = op("lshr i32 " + j + ", 1");
  std::string wn = op("and i32 " + w + ", " + k(p.wn - 1)), wm = op("lshr i32 " + w + ", " + k(log2_exact(p.wn)));
  std::string arow = op("add i32 " + op("mul i32 " + wm + ", " + k(mt)) + ", " + op("or i32 " + i + ", " + op("shl i32 " + jm + ", 3")));
  std::string aat = op("add i32 " + op("mul i32 " + arow + ", " + k(ld)) + ", " + op("shl i32 " + jh + ", 4"));
  std::string brow = op("add i32 " + op("mul i32 " + wn + ", " + k(nt)) + ", " + op("or i32 " + i + ", " + op("shl i32 " + jh + ", 3")));
  std::string bat = op("add i32 " + op("mul i32 " + brow + ", " + k(ld)) + ", " + op("shl i32 " + jm + ", 4"));
  std::string base = smem_addr32();
  std::string abase = op("add i32 " + op("add i32 " + base + ", " + a_off) + ", " + aat);
  std::string bbase = op("add i32 " + op("add i32 " + base + ", " + b_off) + ", " + bat);
  const int64_t mtiles = mt / 16, ntiles = nt / 8;
  std::vector<std::string> c = acc.v;  // register (mi, ni, q) = (mi * ntiles + ni) * 4 + q
  std::string ld4 = "{i32,i32,i32,i32} asm sideeffect \"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0,$1,$2,$3}, [$4];\", \"=r,=r,=r,=r,r\"";
  std::string mma = "{i32,i32,i32,i32} asm \"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, "
                    "{$10,$11,$12,$13};\", \"=r,=r,=r,=r,r,r,r,r,r,r,r,r,r,r\"";
  auto parts = [&](const std::string& s, int n) {
    std::vector<std::string> v;
    for (int q = 0; q < n; ++q) v.push_back(op("extractvalue {i32,i32,i32,i32} " + s + ", " + k(q)));
    return v;
  };
  for (int64_t ks = 0; ks < p.K / 32; ++ks) {
    std::vector<std::vector<std::string>> af, bf;
    for (int64_t mi = 0; mi < mtiles; ++mi)
      af.push_back(parts(op("call " + ld4 + "(i32 " + op("add i32 " + abase + ", " + k(mi * 16 * ld + ks * 32)) + ")"), 4));
    for (int64_t np = 0; np < ntiles / 2; ++np) {
      auto r = parts(op("call " + ld4 + "(i32 " + op("add i32 " + bbase + ", " + k(np * 16 * ld + ks * 32)) + ")"), 4);
      bf.push_back({r[0], r[1]});
      bf.push_back({r[2], r[3]});
    }
    mma_grid(mma, "i32", af, bf, mtiles, ntiles, c);
  }
  return TV{acc.type, D, c};
}

bool KernelEmitter::wgmma_swizzled(const Shape& t, bool b_operand) {
  return b_operand ? t[1] % 64 == 0 : t[1] == 64;
}

std::string KernelEmitter::wgmma_offset(const std::string& row, const std::string& col, const Shape& t, bool b_operand) {
  auto c = [](int64_t v) { return std::to_string(v); };
  std::string r8 = op("and i32 " + row + ", 7");
  std::string in_row = op("shl i32 " + op("and i32 " + col + ", 7") + ", 1");
  if (wgmma_swizzled(t, b_operand)) {
    // 16-byte chunk j of a 128-byte row r sits at chunk j ^ (r % 8) (the hardware's 128B swizzle).
    std::string chunk = op("xor i32 " + op("and i32 " + op("lshr i32 " + col + ", 3") + ", 7") + ", " + r8);
    std::string x = op("or i32 " + op("shl i32 " + chunk + ", 4") + ", " + in_row);
    if (!b_operand) return op("or i32 " + op("shl i32 " + row + ", 7") + ", " + x);  // rows of A are 128 bytes apart
    // B [K, N]: atoms of 8 k-rows x 64 columns (1024 bytes), N/64 atoms side by side per 8 k-rows.
    std::string atom = op("add i32 " + op("mul i32 " + op("lshr i32 " + row + ", 3") + ", " + c(t[1] / 64)) + ", " +
                          op("lshr i32 " + col + ", 6"));
    return op("or i32 " + op("or i32 " + op("shl i32 " + atom + ", 10") + ", " + op("shl i32 " + r8 + ", 7")) + ", " + x);
  }
  std::string cm = op("add i32 " + op("mul i32 " + op("lshr i32 " + row + ", 3") + ", " + c(t[1] / 8)) + ", " + op("lshr i32 " + col + ", 3"));
  std::string in = op("or i32 " + op("shl i32 " + r8 + ", 4") + ", " + in_row);
  return op("or i32 " + op("shl i32 " + cm + ", 7") + ", " + in);
}

void KernelEmitter::stage_core_matrices(const TV& v, const std::string& off, bool b_operand) {
  const Dist& d = v.dist;
  int run = std::min(vector_run(d), 4);
  std::string base = smem_gep(off);
  guarded(owner(d), [&] {
    for (int r0 = 0; r0 < d.nregs(); r0 += run) {
      if (first_copy(d, r0) != r0) continue;
      auto c = coords(d, r0);
      std::string p8 = op("getelementptr inbounds i8, i8 addrspace(3)* " + base + ", i32 " + wgmma_offset(c[0], c[1], d.shape, b_operand));
      std::string vt = "<" + std::to_string(run) + " x i16>", acc = "undef";
      for (int j = 0; j < run; ++j)
        acc = op("insertelement " + vt + " " + acc + ", i16 " + to_mem(v.type.elem, v.at(r0 + j)) + ", i32 " + std::to_string(j));
      std::string vp = op("bitcast i8 addrspace(3)* " + p8 + " to " + vt + " addrspace(3)*");
      line("store " + vt + " " + acc + ", " + vt + " addrspace(3)* " + vp + ", align " + std::to_string(2 * run));
    }
  });
}

// wgmma.wait_group with the accumulator registers tied through it, so nothing reads them before.
std::vector<std::string> KernelEmitter::wgmma_wait(const std::vector<std::string>& c, int pending) {
  size_t n = c.size();
  std::string ret = "{", args, wcons;
  for (size_t i = 0; i < n; ++i) {
    ret += std::string(i ? "," : "") + "float";
    args += std::string(i ? ", " : "") + "float " + c[i];
    wcons += "=f,";
  }
  ret += "}";
  for (size_t i = 0; i < n; ++i) wcons += std::to_string(i) + (i + 1 < n ? "," : "");
  std::string w = op("call " + ret + " asm sideeffect \"wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";\", \"" + wcons +
                     ",~{memory}\"(" + args + ")");
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(op("extractvalue " + ret + " " + w + ", " + std::to_string(i)));
  return out;
}

TV KernelEmitter::wgmma_tiles(const MmaPlan& p, const std::string& a_off, const std::string& b_off, const TV& acc_in, int pending,
                              bool b_kmajor, int64_t b_atoms, const std::vector<std::string>* a_regs, int64_t a_atoms) {
  Dist D = accumulator(p);
  TV acc = convert(acc_in, D);
  // Descriptor strides: LBO between core-matrix groups along K, SBO along M/N (for the swizzled
  // N-major B, LBO between 64-column atoms and SBO between 8-row groups); a k16 step advances
  // `step` bytes. A K-major B (the [N, K] tile of trans(x)) is laid out as A is, N rows of K.
  bool sa = wgmma_swizzled({p.M, p.K}, false);
  bool sb = b_kmajor ? wgmma_swizzled({p.N, p.K}, false) : wgmma_swizzled({p.K, p.N}, true);
  if (a_atoms) sa = true;  // A in TMA boxes: each 64-column box is laid out as a swizzled A of K = 64
  int64_t lbo_a = sa ? 16 : 128, sbo_a = sa ? 1024 : p.K / 8 * 128, step_a = sa ? 32 : 256;
  int64_t lbo_b = sb ? 1024 : p.N / 8 * 128, sbo_b = sb ? p.N / 64 * 1024 : 128;
  if (sb && !b_kmajor && b_atoms) lbo_b = b_atoms, sbo_b = 1024;
  int64_t step_b = sb ? 2 * sbo_b : 2 * lbo_b;
  if (b_kmajor) lbo_b = lbo_a, sbo_b = sbo_a, step_b = step_a;
  // A K-major B in TMA boxes (b_atoms: N rows x 64 columns each, 128-byte swizzled, b_atoms bytes
  // apart): k16 steps advance 32 bytes inside a box, and every fourth one starts the next box.
  const bool b_boxes = b_kmajor && b_atoms;
  if (b_boxes) sb = true, lbo_b = 16, sbo_b = 1024, step_b = 32;
  int64_t wg_bytes = sa ? 64 * 128 : 8 * sbo_a;  // 64 rows of A
  // Warpgroup g computes rows 64Rg .. 64R(g+1) - 1; with one warpgroup its A starts at a_off (no
  // thread-dependent term: the descriptors stay in uniform registers).
  std::string abase;
  if (!a_regs) {
    abase = op("add i32 " + smem_addr32() + ", " + a_off);
    if (threads_ > 128)
      abase = op("add i32 " + abase + ", " + op("mul i32 " + op("lshr i32 " + warp_id() + ", 2") + ", " + std::to_string(p.wr * wg_bytes)));
  }
  std::string bbase = op("add i32 " + smem_addr32() + ", " + b_off);
  // A descriptor as its low word (the address field, address >> 4 in 14 bits, and LBO) and its
  // constant high word (SBO, the swizzle mode): a k16 step adds to the low word only.
  struct Desc {
    std::string lo;
    int64_t hi;
  };
  auto desc = [&](const std::string& addr, int64_t lbo, int64_t sbo, bool swz) {
    std::string a = op("and i32 " + op("lshr i32 " + addr + ", 4") + ", 16383");
    return Desc{op("or i32 " + a + ", " + std::to_string((lbo >> 4) << 16)), (sbo >> 4) | (swz ? int64_t(1) << 30 : 0)};
  };
  auto desc64 = [&](const Desc& d, int64_t add) {
    std::string lo = add ? op("add i32 " + d.lo + ", " + std::to_string(add)) : d.lo;
    return op("or i64 " + op("zext i32 " + lo + " to i64") + ", " + std::to_string(d.hi << 32));
  };
  int n = static_cast<int>(p.N / 2);  // accumulator registers per thread
  const char* ty = p.in == Scalar::BF16 ? "bf16" : "f16";
  std::string outs, cons, ret = "{";
  for (int i = 0; i < n; ++i) {
    outs += (i ? "," : "") + std::string("$") + std::to_string(i);
    cons += "=f,";
    ret += std::string(i ? "," : "") + "float";
  }
  ret += "}";
  cons += a_regs ? "r,r,r,r,l,r" : "l,l,r";
  for (int i = 0; i < n; ++i) cons += "," + std::to_string(i);
  // scale-d is a predicate (1: D += A*B); B is N-major (transposed) or K-major, A K-major (from
  // shared memory) or four f16x2 registers per thread (then only B's transpose is given).
  const int pred = n + (a_regs ? 5 : 2);
  std::string a_src = a_regs ? "{$" + std::to_string(n) + ",$" + std::to_string(n + 1) + ",$" + std::to_string(n + 2) + ",$" +
                                   std::to_string(n + 3) + "}"
                             : "$" + std::to_string(n);
  std::string b_src = "$" + std::to_string(a_regs ? n + 4 : n + 1);
  std::string inst = "{\\0A\\09.reg .pred p;\\0A\\09setp.ne.b32 p, $" + std::to_string(pred) + ", 0;\\0A\\09wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(p.N) + "k16.f32." + ty + "." + ty + " {" + outs + "}, " + a_src + ", " + b_src + ", p, 1, 1" +
                     (a_regs ? "" : ", 0") + ", " + (b_kmajor ? "0" : "1") + ";\\0A\\09}";
  line("call void asm sideeffect \"wgmma.fence.sync.aligned;\", \"~{memory}\"()");
  std::vector<std::string> c = acc.v;
  // A zero accumulator (attention's scores) is not materialized: the first k16 step runs with
  // scale-d 0 (D = A*B) on undefined registers.
  const std::string zero = constant(acc.type.elem, 0.0, 0, true);
  bool zero_acc = !c.empty();
  for (const std::string& x : c) zero_acc = zero_acc && x == zero;
  // The address field is (address >> 4) in 14 bits: for 16-byte aligned buffers inside the 228 KiB of
  // shared memory, the descriptor of address + offset is the base descriptor + (offset >> 4).
  Desc da0 = a_regs ? Desc{} : desc(abase, lbo_a, sbo_a, sa), db0 = desc(bbase, lbo_b, sbo_b, sb);
  for (int64_t ks = 0; ks < p.K / 16; ++ks) {
    int64_t b_step = b_boxes ? ks % 4 * step_b + ks / 4 * b_atoms : ks * step_b;
    std::string db = desc64(db0, b_step >> 4);
    for (int r = 0; r < p.wr; ++r) {  // tile r: rows 64r.. of the group's, registers r * n ..
      std::string args;
      if (a_regs) {
        size_t f = static_cast<size_t>((r * (p.K / 16) + ks) * 4);
        for (size_t j = 0; j < 4; ++j) args += "i32 " + (*a_regs)[f + j] + ", ";
        args += "i64 " + db + ", i32 " + (zero_acc && ks == 0 ? "0" : "1");
      } else {
        // In boxes, k16 steps advance 32 bytes inside a box and every fourth one starts the next.
        int64_t a_step = a_atoms ? ks % 4 * step_a + ks / 4 * a_atoms : ks * step_a;
        std::string da = desc64(da0, (a_step + r * wg_bytes) >> 4);
        args = "i64 " + da + ", i64 " + db + ", i32 " + (zero_acc && ks == 0 ? "0" : "1");
      }
      for (int i = 0; i < n; ++i) args += ", float " + (zero_acc && ks == 0 ? std::string("undef") : c[static_cast<size_t>(r * n + i)]);
      std::string res = op("call " + ret + " asm sideeffect \"" + inst + "\", \"" + cons + "\"(" + args + ")");
      for (int i = 0; i < n; ++i) c[static_cast<size_t>(r * n + i)] = op("extractvalue " + ret + " " + res + ", " + std::to_string(i));
    }
  }
  line("call void asm sideeffect \"wgmma.commit_group.sync.aligned;\", \"~{memory}\"()");
  if (in_flight_) {  // work that overlaps this group (an OperandRings loop's next copies)
    std::function<void()> work = std::move(in_flight_);
    in_flight_ = nullptr;
    work();
  }
  c = wgmma_wait(c, pending);
  return TV{acc.type, D, c};
}

std::string describe(const MmaPlan& p) {
  std::string shape = std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K);
  if (p.wgmma)
    return "dot " + shape + ": wgmma m64n" + std::to_string(p.N) + "k16, " + std::to_string(p.wm / 4) + " warpgroup(s)" +
           (p.wr > 1 ? " of " + std::to_string(p.wr) + " tiles" : "");
  return "dot " + shape + ": mma.sync m16n8k" + (p.in == Scalar::I8 ? "32 s8" : "16") + ", warps " + std::to_string(p.wm) + "x" +
         std::to_string(p.wn);
}

TV KernelEmitter::eval_dot(const ExprP& e) {
  const MmaPlan& p = plan_.dot(*e);
  if (!p.ok) {
    note("dot: FMA units (" + p.why + ")" + (e->tf32 ? ", operands rounded to tf32" : ""));
    return eval_dot_fma(e);
  }
  // wgmma reads a B given as trans(x) K-major: x is staged as it is held, as A is, with no
  // conversion to the layout of its transpose.
  const ExprP& be = e->args[1];
  bool b_kmajor = p.wgmma && be->kind == ExprKind::Trans && be->type.rank() == 2 && be->ints.size() == 2 && be->ints[0] == 1;
  // An A operand staged before the enclosing loop (LoopPlan::resident) is read where it is; a B
  // operand copied into an OperandRings loop's ring is read from the current stage; an A operand
  // produced in the accumulator layout of [M, K] (attention's p, from the first dot) is given to
  // wgmma in registers.
  const ExprP& ae = e->args[0];
  const ExprP& bv = b_kmajor ? be->args[0] : be;
  auto res = p.wgmma && ae->kind == ExprKind::Var ? resident_.find(ae->slot) : resident_.end();
  bool resident = res != resident_.end();
  auto ring = p.wgmma && bv->kind == ExprKind::Var ? ring_.find(bv->slot) : ring_.end();
  bool in_ring = ring != ring_.end();
  if (in_ring && !b_kmajor && ring->second.kmajor) b_kmajor = true;  // xt = trans(x), x in the ring (ring_b_operand)
  if (in_ring && ring->second.kmajor != b_kmajor) internal_error("NvvmEmitter", "a ring operand read in another major order than copied");
  bool a_regs = p.wgmma && !resident && (p.in == Scalar::F16 || p.in == Scalar::BF16) &&
                natural(ae) == wgmma_accumulator(p.M, p.K, k_.num_warps);
  note(describe(p) + (in_ring || a_regs ? "" : ", operands staged from registers") + (b_kmajor ? "; B K-major, trans's operand as held" : ""));
  if (resident) note("A operand " + ae->name + " read from where it was staged before the loop");
  if (a_regs) note("A operand in registers: its accumulator-layout values packed as f16x2 fragments");
  if (in_ring) note("B operand " + bv->name + " read from its " + (ring->second.atoms ? "TMA" : "cp.async") + " ring");
  TV a = resident ? TV{} : a_regs ? fit(ae, wgmma_accumulator(p.M, p.K, k_.num_warps)) : eval(ae);
  TV b = in_ring ? TV{} : eval(bv);
  Dist D = accumulator(p);
  const Scalar acc_t = p.in == Scalar::I8 ? Scalar::I32 : Scalar::F32;
  TV acc = e->args[2] ? fit(e->args[2], D) : TV{e->type, D, std::vector<std::string>(static_cast<size_t>(D.nregs()), literal(acc_t, 0, 0, false))};
  if (p.in == Scalar::I8) {
    int64_t ld = p.K + 16;  // bytes per row of A and of B's transpose (16-byte aligned, rows in distinct banks)
    int64_t off_b = (p.M * ld + 127) / 128 * 128;
    use_smem(off_b + p.N * ld);
    ++info.mma_dots;
    barrier();
    stage_b8(a, "0", ld, false);
    stage_b8(b, std::to_string(off_b), ld, true);
    barrier();
    return mma_tiles_s8(p, "0", std::to_string(off_b), TV{e->type, D, acc.v});
  }
  if (p.wgmma) {
    bool stage_a = !resident && !a_regs;
    int64_t off_b = stage_a ? (p.M * p.K * 2 + 1023) / 1024 * 1024 : 0;  // swizzle atoms are 1024-byte aligned
    std::vector<std::string> frags;
    if (a_regs) frags = wgmma_a_fragments(p, a);
    if (!in_ring) use_smem(off_b + p.K * p.N * 2);
    else if (stage_a) use_smem(off_b);
    ++info.mma_dots;
    if (stage_a || !in_ring) {
      barrier();
      if (stage_a) stage_core_matrices(a, "0", false);
      if (!in_ring) stage_core_matrices(b, std::to_string(off_b), !b_kmajor);
      line("call void asm sideeffect \"fence.proxy.async.shared::cta;\", \"~{memory}\"()");
      barrier();
    }
    std::string a_off = resident ? std::to_string(res->second - smem_floor_) : "0";
    std::string b_off = in_ring ? op("sub i32 " + ring->second.at + ", " + std::to_string(smem_floor_)) : std::to_string(off_b);
    auto atoms = resident ? resident_atoms_.find(ae->slot) : resident_atoms_.end();
    return wgmma_tiles(p, a_off, b_off, TV{e->type, D, acc.v}, 0, b_kmajor, in_ring ? ring->second.atoms : 0, a_regs ? &frags : nullptr,
                       atoms != resident_atoms_.end() ? atoms->second : 0);
  }
  int64_t a_bytes = p.M * (p.K + 8) * 2, b_bytes = p.K * (p.N + 8) * 2;
  int64_t off_b = (a_bytes + 127) / 128 * 128;
  use_smem(off_b + b_bytes);
  ++info.mma_dots;
  barrier();
  stage_b16(a, "0", p.K + 8);
  stage_b16(b, std::to_string(off_b), p.N + 8);
  barrier();
  return mma_tiles(p, "0", std::to_string(off_b), TV{e->type, D, acc.v});
}

// The FMA path: A and B staged row-major in shared memory (A's rows padded by 16 bytes, so the rows
// that lanes of a warp read at once fall in distinct banks); each thread holds a block of the output
// (fma_accumulator) and, per k step, reads its rows of A (16-byte vectors along k, covering several
// k steps) and its columns of B as short vectors, and does one fused multiply-add per output element.
int64_t KernelEmitter::fma_lda(int64_t K) { return K % 4 == 0 ? K + 4 : K; }

TV KernelEmitter::eval_dot_fma(const ExprP& e) {
  const ExprP& ea = e->args[0];
  const ExprP& eb = e->args[1];
  int64_t M = ea->type.shape[0], K = ea->type.shape[1], N = eb->type.shape[1];
  Scalar rt = e->type.elem;
  Type st_type{rt, false, {}};
  std::string st = smem_type(st_type);
  int eb_bytes = smem_bytes(st_type);
  Dist D = fma_accumulator(M, N, k_.num_warps);
  TV a = eval(ea), b = eval(eb);
  int64_t lda = fma_lda(K);
  int64_t off_b = (M * lda * eb_bytes + 15) / 16 * 16;
  // The accumulator in the output's layout first: a conversion through shared memory would write
  // over the staged operands.
  TV acc = e->args[2] ? fit(e->args[2], D) : TV{e->type, D, std::vector<std::string>(static_cast<size_t>(D.nregs()), literal(rt, 0, 0, false))};
  use_smem(off_b + K * N * eb_bytes);
  // Stores v with vectors of up to 16 bytes where the layout's first registers are consecutive along
  // the rows.
  auto stage = [&](const TV& v, int64_t off, int64_t row) {
    int64_t w = 1;
    for (const Coord& c : v.dist.reg) {
      if (c != Coord{0, w} || w * 2 * eb_bytes > 16 || row % (w * 2)) break;
      w *= 2;
    }
    guarded(owner(v.dist), [&] {
      for (int r0 = 0; r0 < v.dist.nregs(); r0 += static_cast<int>(w)) {
        if (first_copy(v.dist, r0) != r0) continue;
        auto c = coords(v.dist, r0);
        std::string i = op("add i32 " + op("mul i32 " + c[0] + ", " + std::to_string(row)) + ", " + c[1]);
        std::vector<std::string> xs;
        for (int j = 0; j < w; ++j) {
          std::string x = cast(v.type.elem, rt, v.at(r0 + j));
          if (e->tf32) {  // cvt.rna.tf32.f32 in integer operations (IR.h): +half of 13 bits, cleared
            std::string u = op("bitcast float " + x + " to i32");
            std::string special = op("icmp eq i32 " + op("and i32 " + u + ", 2139095040") + ", 2139095040");
            std::string r32 = op("and i32 " + op("add i32 " + u + ", 4096") + ", -8192");
            x = op("bitcast i32 " + op("select i1 " + special + ", i32 " + u + ", i32 " + r32) + " to float");
          }
          xs.push_back(x);
        }
        std::string p = smem_ptr(st_type, off, i);
        if (w == 1) line("store " + st + " " + xs[0] + ", " + st + " addrspace(3)* " + p);
        else store_vec(rt, p, xs, 3);
      }
    });
  };
  barrier();
  stage(a, 0, lda);
  stage(b, off_b, N);
  barrier();
  return TV{e->type, D, fma_tiles(D, K, rt, "0", lda, std::to_string(off_b / eb_bytes), acc.v)};
}

// acc + A·B for the accumulator layout D ([M, N]), with A [M, K] at element `a_at` of the shared
// buffer in rows of `lda` elements and B [K, N] at element `b_at` in rows of N (element type rt).
std::vector<std::string> KernelEmitter::fma_tiles(const Dist& D, int64_t K, Scalar rt, const std::string& a_at, int64_t lda,
                                                  const std::string& b_at, std::vector<std::string> c) {
  int64_t N = D.shape[1];
  std::string ty = reg_type(rt);
  Type st_type{rt, false, {}};
  std::string st = smem_type(st_type);
  int64_t eb_bytes = smem_bytes(st_type);
  // The rows and columns this thread reads: its thread part plus each register's offset.
  std::string tm = thread_part(D, 0), tn = thread_part(D, 1);
  std::vector<int64_t> moff, noff;
  for (int r = 0; r < D.nregs(); ++r) {
    Coord co = D.reg_coord(r);
    if (std::find(moff.begin(), moff.end(), co[0]) == moff.end()) moff.push_back(co[0]);
    if (std::find(noff.begin(), noff.end(), co[1]) == noff.end()) noff.push_back(co[1]);
  }
  std::sort(moff.begin(), moff.end());
  std::sort(noff.begin(), noff.end());
  std::string fma = rt == Scalar::F64 ? "llvm.fma.f64" : "llvm.fma.f32";
  if (is_float(rt)) declare("declare " + ty + " @" + fma + "(" + ty + ", " + ty + ", " + ty + ")");
  // a * b + c: fused for floats; wrapping i32 for the integer dot (i8 operands widened)
  auto mad = [&](const std::string& a, const std::string& b, const std::string& c) {
    if (!is_float(rt)) return op("add i32 " + op("mul i32 " + a + ", " + b) + ", " + c);
    return op("call " + ty + " @" + fma + "(" + ty + " " + a + ", " + ty + " " + b + ", " + ty + " " + c + ")");
  };
  // A vector of w elements at element index `at` (w = 1: a scalar).
  auto vload = [&](const std::string& at, int64_t w, std::vector<std::string>& out) {
    std::string p = smem_ptr(st_type, 0, at);
    if (w == 1) {
      out.push_back(op("load " + st + ", " + st + " addrspace(3)* " + p));
      return;
    }
    for (std::string& x : load_vec(rt, p, static_cast<int>(w), 3)) out.push_back(x);
  };
  // k steps per read of A: 16-byte vectors along k where the rows allow, holding at most 16 values of
  // A at a time (a thread's rows times the vector).
  int64_t kv = 1;
  while (kv * 2 * eb_bytes <= 16 && K % (kv * 2) == 0 && lda % (kv * 2) == 0 && static_cast<int64_t>(moff.size()) * kv * 2 <= 16) kv *= 2;
  std::string a_rows = op("add i32 " + a_at + ", " + op("mul i32 " + tm + ", " + std::to_string(lda)));
  std::string b_cols = op("add i32 " + b_at + ", " + tn);
  // k steps k0 .. k0 + kv - 1.
  auto steps = [&](const std::string& k0, std::vector<std::string>& acc) {
    std::map<int64_t, std::vector<std::string>> av;  // row offset -> its kv values
    std::string a_k = op("add i32 " + a_rows + ", " + k0);
    for (int64_t m : moff) vload(op("add i32 " + a_k + ", " + std::to_string(m * lda)), kv, av[m]);
    for (int64_t j = 0; j < kv; ++j) {
      std::string row = op("add i32 " + b_cols + ", " + op("mul i32 " + op("add i32 " + k0 + ", " + std::to_string(j)) + ", " + std::to_string(N)));
      std::map<int64_t, std::string> bv;
      for (size_t i = 0; i < noff.size();) {
        int64_t o = noff[i], w = 1;
        for (int64_t t = 4; t > 1 && w == 1; t /= 2)
          if (t * eb_bytes <= 16 && N % t == 0 && o % t == 0 && i + static_cast<size_t>(t) - 1 < noff.size() &&
              noff[i + static_cast<size_t>(t) - 1] == o + t - 1)
            w = t;
        std::vector<std::string> vals;
        vload(op("add i32 " + row + ", " + std::to_string(o)), w, vals);
        for (int64_t q = 0; q < w; ++q) bv[o + q] = vals[static_cast<size_t>(q)];
        i += static_cast<size_t>(w);
      }
      for (int r = 0; r < D.nregs(); ++r) {
        Coord co = D.reg_coord(r);
        acc[static_cast<size_t>(r)] = mad(av[co[0]][static_cast<size_t>(j)], bv[co[1]], acc[static_cast<size_t>(r)]);
      }
    }
  };
  // Unrolled (the whole k range in straight-line code) up to 2048 multiply-adds per thread; beyond,
  // a loop of u groups of kv steps, up to 1024 per iteration. A 128-register tile at K = 32 unrolled
  // is ~70 KB of code, which a kernel running few iterations spends waiting on instruction fetch
  // (H100, mm.dt 200x256x96: 21.6 -> 14.8 us; 1024^3: 0.208 -> 0.111 ms; 4096^3 3.02 -> 3.10 ms).
  int64_t per_step = D.nregs();
  if (K <= 64 && per_step * K <= 2048) {
    for (int64_t k = 0; k < K; k += kv) steps(std::to_string(k), c);
    return c;
  }
  int64_t u = 1;
  while (K % (kv * u * 2) == 0 && per_step * kv * u * 2 <= 1024) u *= 2;
  std::vector<std::string> accs;
  for (int r = 0; r < D.nregs(); ++r) {
    std::string v = "%dacc" + std::to_string(tmp_++);
    prelude_ << "  " << v << " = alloca " << ty << "\n";
    line("store " + ty + " " + c[static_cast<size_t>(r)] + ", " + ty + "* " + v);
    accs.push_back(v);
  }
  std::string kc = "%dk" + std::to_string(tmp_++);
  prelude_ << "  " << kc << " = alloca i32\n";
  line("store i32 0, i32* " + kc);
  std::string head = label("dot.head"), body = label("dot.body"), exit = label("dot.exit");
  br(head);
  start_block(head);
  std::string k = op("load i32, i32* " + kc);
  line("br i1 " + op("icmp slt i32 " + k + ", " + std::to_string(K)) + ", label %" + body + ", label %" + exit);
  start_block(body);
  for (int r = 0; r < D.nregs(); ++r) c[static_cast<size_t>(r)] = op("load " + ty + ", " + ty + "* " + accs[static_cast<size_t>(r)]);
  for (int64_t j = 0; j < u; ++j) steps(j ? op("add i32 " + k + ", " + std::to_string(j * kv)) : k, c);
  for (int r = 0; r < D.nregs(); ++r) line("store " + ty + " " + c[static_cast<size_t>(r)] + ", " + ty + "* " + accs[static_cast<size_t>(r)]);
  line("store i32 " + op("add i32 " + k + ", " + std::to_string(kv * u)) + ", i32* " + kc);
  br(head);
  start_block(exit);
  std::vector<std::string> out;
  for (auto& v : accs) out.push_back(op("load " + ty + ", " + ty + "* " + v));
  return out;
}

}  // namespace dtsim::nvvm
