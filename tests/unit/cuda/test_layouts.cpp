// The CUDA backend's layouts and what they buy, checked without a GPU: layout algebra (blocked,
// slice, need maps, renames, the mma accumulator), and the PTX of the anchor kernels (16-byte
// vector accesses, shuffle reductions without layout conversions, tensor-core dot with ldmatrix /
// wgmma and cp.async pipelining, no spills).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/Layout.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/TileParser.h"

using namespace dtsim;
using namespace dtsim::nvvm;

namespace {

// Coordinates of (register r, thread t) under d, by the definition in Layout.h.
Coord coord_of(const Dist& d, int r, int t) {
  Coord c = d.reg_coord(r);
  for (size_t i = 0; i < d.lane.size(); ++i)
    if ((t & 31) >> i & 1)
      for (size_t k = 0; k < c.size(); ++k) c[k] |= d.lane[i][k];
  for (size_t i = 0; i < d.warp.size(); ++i)
    if ((t >> 5) >> i & 1)
      for (size_t k = 0; k < c.size(); ++k) c[k] |= d.warp[i][k];
  return c;
}

struct Compiled {
  NvvmModule nm;
  std::string ptx;
  std::string ptxas_log;
};

Compiled compile(const std::string& file, const std::string& arch) {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/" + file);
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = arch;
  Compiled c;
  c.nm = emit_nvvm_module(m, b, opt);
  c.ptx = compile_ptx(c.nm.ir, opt);
  PtxasResult r = run_ptxas(c.ptx, arch, true);
  INFO(r.log);
  REQUIRE(r.available);
  REQUIRE(r.ok);
  c.ptxas_log = r.log;
  return c;
}

// The NVVM module of `file` with its first kernel's num_stages replaced.
NvvmModule emit_with_stages(const std::string& file, int stages, const std::string& arch) {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/" + file);
  m.kernels[0].num_stages = stages;
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = arch;
  return emit_nvvm_module(m, b, opt);
}
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("blocked layouts cover every element once, with 16-byte runs along the last dim") {
  for (auto [shape, warps] : {std::pair<Shape, int>{{4096}, 16}, {{4, 512}, 32}, {{128, 64}, 8}, {{16}, 4}, {{8, 8, 32}, 2}}) {
    Dist d = blocked(shape, warps);
    INFO(d.str());
    std::map<Coord, int> seen;
    for (int t = 0; t < warps * 32; ++t)
      for (int r = 0; r < d.nregs(); ++r) ++seen[coord_of(d, r, t)];
    CHECK(static_cast<int64_t>(seen.size()) == shape_numel(shape));  // every element held
    for (auto& [c, n] : seen)
      for (size_t i = 0; i < c.size(); ++i) CHECK(c[i] < shape[i]);
  }
  CHECK(blocked({4096}, 16).str() == "blocked{vec=[4], lanes=[32], warps=[16], regs=8}");
  CHECK(vector_run(blocked({4096}, 16)) == 4);
  CHECK(blocked({4, 512}, 32).str() == "blocked{vec=[1, 2], lanes=[1, 32], warps=[4, 8], regs=2}");
}

TEST_CASE("a reduction's slice broadcasts back to its parent by renaming registers") {
  Dist p = blocked({4, 512}, 32);
  Dist s = slice(p, 1);
  CHECK(s.shape == Shape{4});
  // v[:, None] broadcast to [4, 512] in the parent's layout reads exactly what the slice holds.
  Dist need = need_expand_dims(need_broadcast(p, {4, 1}), 1);
  auto m = rename(s, need);
  REQUIRE(m.has_value());
  // ...but the 1-D blocked layout of [4] is another distribution: reading it needs a conversion.
  CHECK_FALSE(rename(blocked({4}, 32), need).has_value());
  // A transpose is a real data movement.
  Dist q = blocked({64, 64}, 4);
  CHECK_FALSE(rename(q, need_trans(q, {1, 0})).has_value());
}

TEST_CASE("the mma accumulator layout is the m16n8k16 fragment order") {
  Dist d = mma_accumulator(128, 128, 2, 4);  // warps 2 x 4: a warp owns 64 rows x 32 columns
  CHECK(d.nregs() == 64);
  // lane 5 (group 1, thread-in-group 1): c0 = (1, 2), c1 = (1, 3), c2 = (9, 2), c3 = (9, 3)
  CHECK(coord_of(d, 0, 5) == Coord{1, 2});
  CHECK(coord_of(d, 1, 5) == Coord{1, 3});
  CHECK(coord_of(d, 2, 5) == Coord{9, 2});
  CHECK(coord_of(d, 3, 5) == Coord{9, 3});
  CHECK(coord_of(d, 4, 5) == Coord{1, 10});   // next n8 tile
  CHECK(coord_of(d, 0, 32) == Coord{0, 32});  // warp 1: next block of columns
  CHECK(coord_of(d, 0, 128) == Coord{64, 0}); // warp 4: next block of rows
}

TEST_CASE("softmax: 16-byte loads and stores, shuffle reductions, no layout conversion") {
  Compiled c = compile("tests/unit/cuda/softmax_4096.tile", "sm_90");
  CHECK(c.nm.kernels[0].conversions == 0);
  CHECK(count(c.ptx, "ld.global.v4.f32") == 2);
  CHECK(count(c.ptx, "st.global.v4.f32") == 2);
  CHECK(count(c.ptx, "shfl.sync.bfly") == 10);  // 5 lane steps for each of the two reductions
  CHECK(c.ptxas_log.find(" 0 bytes spill stores") != std::string::npos);
}

TEST_CASE("f16 dot: mma.sync + ldmatrix + cp.async on sm_80, wgmma + TMA on sm_90a, no spills") {
  Compiled a = compile("examples/matmul_f16.tile", "sm_80");
  CHECK(count(a.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") > 0);
  CHECK(count(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
  CHECK(count(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0);
  CHECK(count(a.ptx, "cp.async.cg.shared.global") > 0);
  CHECK(a.nm.kernels[0].pipelined_loops == 1);
  CHECK(a.ptxas_log.find(" 0 bytes spill stores") != std::string::npos);
  Compiled h = compile("examples/matmul_f16.tile", "sm_90a");
  CHECK(count(h.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") > 0);
  CHECK(count(h.ptx, "mma.sync") == 0);
  CHECK(count(h.ptx, "wgmma.wait_group.sync.aligned 1") == 1);  // one group stays in flight
  CHECK(h.ptxas_log.find("C7515") == std::string::npos);      // ptxas did not serialize the wgmmas
  CHECK(count(h.ptx, "cp.async.cg.shared.global") == 0);  // TMA copies instead (test_tma.cpp)
  CHECK(count(h.ptx, "cp.async.bulk.tensor.2d") > 0);
  CHECK(h.ptxas_log.find(" 0 bytes spill stores") != std::string::npos);
  Compiled b = compile("examples/matmul_bf16.tile", "sm_80");
  CHECK(count(b.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") > 0);
}

TEST_CASE("num_stages(1) keeps the loads in registers; f32 dot stays on the FMA units") {
  NvvmModule nm = emit_with_stages("examples/matmul_f16.tile", 1, "sm_80");
  CHECK(nm.kernels[0].pipelined_loops == 0);
  CHECK(nm.kernels[0].mma_dots == 1);
  Compiled f = compile("examples/matmul.tile", "sm_80");
  CHECK(f.nm.kernels[0].mma_dots == 0);
}

TEST_CASE("f32 dot on FMA units: cp.async ring with num_stages > 1, 16-byte shared reads, no spills") {
  // 128 x 128 x 32 f32 tiles, 8 warps, 3 stages: both operands copied 16 bytes at a time into a ring
  // of 3 buffers, the dot reading A and B from it as 16-byte vectors.
  Compiled c = compile("bench/gpu/matmul_f32.tile", "sm_90");
  CHECK(c.nm.kernels[0].pipelined_loops == 1);
  CHECK(c.nm.kernels[0].fma_rings == 1);
  CHECK(c.nm.kernels[0].mma_dots == 0);
  CHECK(count(c.ptx, "cp.async.cg.shared.global") > 0);
  CHECK(count(c.ptx, "cp.async.wait_group 1") == 1);
  CHECK(count(c.ptx, "ld.shared.v4.f32") > 0);
  CHECK(count(c.ptx, "ld.shared.f32") == 0);
  CHECK(c.nm.kernels[0].smem_bytes == 3 * (128 * 36 * 4 + 32 * 128 * 4));  // A rows padded to 36
  CHECK(c.ptxas_log.find(" 0 bytes spill stores") != std::string::npos);
  // num_stages(1): no ring, the operands staged from registers.
  NvvmModule nm = emit_with_stages("bench/gpu/matmul_f32.tile", 1, "sm_90");
  CHECK(nm.kernels[0].pipelined_loops == 0);
  CHECK(nm.kernels[0].fma_rings == 0);
}

TEST_CASE("FMA accumulator: square thread blocks, lane bit 0 on columns and bit 1 on rows") {
  // 16 x 64 on 4 warps: 8 per thread as 2 rows x 4 columns (not 1 x 8).
  Dist d = fma_accumulator(16, 64, 4);
  CHECK(d.nregs() == 8);
  CHECK(d.reg == std::vector<Coord>{{0, 1}, {0, 2}, {1, 0}});
  CHECK(d.lane[0] == Coord{0, 4});
  CHECK(d.lane[1] == Coord{2, 0});
  // 128 x 128 on 8 warps: 8 x 8, in runs of 4 columns and 4 rows.
  Dist e = fma_accumulator(128, 128, 8);
  CHECK(e.nregs() == 64);
  CHECK(e.reg[0] == Coord{0, 1});
  CHECK(e.reg[1] == Coord{0, 2});
  CHECK(e.reg[2] == Coord{1, 0});
  CHECK(e.reg[3] == Coord{2, 0});
  // Every element exactly once.
  for (const Dist& x : {d, e}) {
    std::set<std::pair<int64_t, int64_t>> seen;
    int threads = 32 << x.warp.size();
    for (int t = 0; t < threads; ++t)
      for (int r = 0; r < x.nregs(); ++r) {
        Coord c = coord_of(x, r, t);
        seen.insert({c[0], c[1]});
      }
    CHECK(static_cast<int64_t>(seen.size()) == x.shape[0] * x.shape[1]);
  }
}

TEST_CASE("row offsets that are not multiples of the vector keep accesses narrow") {
  // a + rm[:, None] * K with K = 90: rows start 360 bytes apart, so no 16-byte vector is aligned
  // in every row (a v4 load there faults with a misaligned address).
  Compiled c = compile("examples/bugs/matmul_no_kmask.tile", "sm_90");
  CHECK(count(c.ptx, "ld.global.v4") == 0);
  CHECK(count(c.ptx, "ld.global.v2.f32") > 0);
}

TEST_CASE("precompile_cuda_module: the PTX and its cubin in the cache, read back by cached_cubin") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dtsim-cubin-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/examples/add.tile");
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  CudaOptions opt;
  opt.arch = "sm_90";
  opt.ptx_cache_dir = dir.string();
  std::string ptx = compile_ptx(emit_nvvm_module(m, b, opt).ir, opt);
  CHECK(cached_cubin(ptx, opt).empty());  // nothing made yet
  precompile_cuda_module(m, b, opt);
  std::string bin = cached_cubin(ptx, opt);
  REQUIRE(bin.size() > 4);
  CHECK(bin.compare(0, 4, "\x7f" "ELF") == 0);
  int files = 0, partial = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    partial += e.path().string().find(".tmp.") != std::string::npos;
  }
  CHECK(files == 2);  // one .ptx, one .cubin
  CHECK(partial == 0);
  CudaOptions other = opt;
  other.arch = "sm_80";  // another target: another cubin
  CHECK(cached_cubin(ptx, other).empty());
  std::filesystem::remove_all(dir);
}


namespace {
// The shared-memory wavefronts of one warp's access, counted here from first principles (not by
// bank_count): lane l accesses `vec` elements from coordinates coord_of(d, r, warp * 32 + l); a
// bank serves one distinct 4-byte word per wavefront.
int warp_wavefronts(const Exchange& x, const Dist& d, int r, int warp, int vec) {
  std::map<int64_t, std::set<int64_t>> words_of_bank;
  for (int l = 0; l < 32; ++l) {
    int64_t off = x.offset(coord_of(d, r, warp * 32 + l));
    for (int64_t w = off / 4; w * 4 < off + int64_t(vec) * x.elem; ++w) words_of_bank[w % 32].insert(w);
  }
  size_t most = 0;
  for (auto& [bank, words] : words_of_bank) most = std::max(most, words.size());
  return static_cast<int>(most);
}

// Every element of the tile at its own bytes inside the tile, and the offset linear over bits:
// a register's element at the thread's offset XOR the register's own (what the emitter computes).
void check_tile(const Exchange& x, const Dist& d) {
  std::set<int64_t> seen;
  const int nthreads = 32 << d.warp.size();
  for (int t = 0; t < nthreads; ++t)
    for (int r = 0; r < d.nregs(); ++r) {
      if (first_copy(d, r) != r) continue;
      int64_t off = x.offset(coord_of(d, r, t));
      REQUIRE(off == (x.offset(coord_of(d, 0, t)) ^ x.offset(d.reg_coord(r))));
      REQUIRE(off >= 0);
      REQUIRE(off + x.elem <= x.bytes());
      if ((d.replicated_lane_mask() & static_cast<uint32_t>(t & 31)) == 0 && (d.replicated_warp_mask() & static_cast<uint32_t>(t >> 5)) == 0)
        REQUIRE(seen.insert(off).second);
    }
  CHECK(static_cast<int64_t>(seen.size()) == shape_numel(d.shape));
}
}  // namespace

TEST_CASE("the epilogue's exchange tile: a swizzle with no bank conflicts for the wgmma accumulator's f16 stores") {
  // bench/gpu/matmul_f16_wide.tile: acc f32[128, 256] on 8 warps, stored as f16 from 8 elements a thread.
  Dist acc = wgmma_accumulator(128, 256, 8), out = blocked({128, 256}, 8, 8);
  Exchange x = plan_exchange(acc, out, 2);
  INFO(x.str());
  CHECK(!x.stmatrix);  // not asked for (sm_80)
  CHECK(!x.padded);
  CHECK(x.max_phase == 8);
  CHECK(x.per_phase == 1);
  CHECK(x.store_vec == 2);  // the accumulator's column pairs: one 4-byte word
  CHECK(x.load_vec == 8);   // 16 bytes
  CHECK(x.bytes() == 128 * 256 * 2);
  check_tile(x, acc);
  check_tile(x, out);
  // One warp's store: lanes 0-3 write 4 words of a row's 16-byte chunk, lanes 4, 8, 16 move down a
  // row; the 8 rows' chunks sit in 8 different 16-byte bank groups: 32 banks, one wavefront.
  std::set<int64_t> banks;
  for (int l = 0; l < 32; ++l) banks.insert(x.offset(coord_of(acc, 0, l)) / 4 % 32);
  CHECK(banks.size() == 32);
  for (int w = 0; w < 8; ++w)
    for (int r = 0; r < acc.nregs(); r += 2) CHECK(warp_wavefronts(x, acc, r, w, 2) == 1);
  // One warp's load: a whole 512-byte row, 4 wavefronts (each bank serves 4 words).
  for (int w = 0; w < 8; ++w)
    for (int r = 0; r < out.nregs(); r += 8) CHECK(warp_wavefronts(x, out, r, w, 8) == 4);
  CHECK(x.store_wavefronts == x.store_ideal);
  CHECK(x.load_wavefronts == x.load_ideal);
  CHECK(x.store_wavefronts == 8 * 64);  // 8 warps x 64 stores
  CHECK(x.load_wavefronts == 8 * 16 * 4);

  // Without the swizzle every row's chunk is in the same 4 banks: 8-way conflicts on the stores.
  Exchange plain = x;
  plain.max_phase = 1;
  CHECK(warp_wavefronts(plain, acc, 0, 0, 2) == 8);
  // The previous tile (f32 elements, one padding element every 32): rows 264 words apart, rows r
  // and r + 4 in the same banks, so 2 wavefronts a store: ncu's 524288 conflicts of 1048576.
  Exchange padded;
  padded.shape = {128, 256};
  padded.rows = 128;
  padded.cols = 256;
  padded.elem = 4;
  padded.padded = true;
  CHECK(warp_wavefronts(padded, acc, 0, 0, 1) == 2);
  BankCount pc = bank_count(padded, acc, 1);
  CHECK(pc.wavefronts == 2 * pc.ideal);
}

TEST_CASE("exchange tiles of other accumulators and element sizes take no more wavefronts than their bytes need") {
  struct Case {
    Dist from, to;
    int elem;
  };
  std::vector<Case> cases = {
      {wgmma_accumulator(128, 128, 8), blocked({128, 128}, 8, 8), 2},  // matmul_f16.tile's 128x128
      {wgmma_accumulator(256, 128, 8), blocked({256, 128}, 8, 8), 2},  // the 256x128 tiles
      {wgmma_accumulator(128, 256, 8), blocked({128, 256}, 8), 4},     // an f32 result
      {mma_accumulator(128, 128, 2, 2), blocked({128, 128}, 4, 8), 2}, // mma.sync on sm_80
      {wgmma_accumulator(64, 64, 4), blocked({64, 64}, 4, 8), 2},
  };
  for (auto& c : cases) {
    Exchange x = plan_exchange(c.from, c.to, c.elem);
    INFO(c.from.str() << " -> " << c.to.str() << ": " << x.str());
    CHECK(!x.padded);
    check_tile(x, c.from);
    check_tile(x, c.to);
    CHECK(x.store_wavefronts == x.store_ideal);
    CHECK(x.load_wavefronts == x.load_ideal);
  }
  // 1-byte and 8-byte elements keep the padded tile, element by element.
  Exchange p = plan_exchange(wgmma_accumulator(64, 64, 4), blocked({64, 64}, 4), 8);
  CHECK(p.padded);
  CHECK(p.store_vec == 1);
}

TEST_CASE("matmul_f16_wide on sm_90a: the epilogue stores f16 pairs by stmatrix to the swizzled tile and 16-byte vectors to global memory") {
  Compiled c = compile("bench/gpu/matmul_f16_wide.tile", "sm_90a");
  CHECK(count(c.ptx, "st.shared.f32") == 0);  // f32 accumulators no longer go through shared memory
  CHECK(count(c.ptx, "stmatrix.sync.aligned.m8n8.x4.shared.b16") == 16);  // 64 f16 pairs a thread
  CHECK(count(c.ptx, "ld.shared.v4.u32") + count(c.ptx, "ld.shared.v4.b32") == 16);
  CHECK(count(c.ptx, "st.global.v4.u32") + count(c.ptx, "st.global.v4.b32") == 16);
  // The 4-stage ring (197632 bytes) with the exchange tile on it, or as a persistent grid the 3-stage
  // ring (148480) with the exchange tile above it.
  CHECK(c.nm.kernels[0].smem_bytes <= 148480 + 65536);
  CHECK(c.ptxas_log.find(" 0 bytes spill stores") != std::string::npos);
}

TEST_CASE("stmatrix.x4 stores of the wgmma accumulator: each fragment element at its own tile offset, no bank conflicts") {
  for (auto shape : {std::pair<int64_t, int64_t>{128, 256}, {128, 128}, {256, 128}, {64, 64}}) {
    const int nw = shape.first >= 128 ? 8 : 4;
    Dist acc = wgmma_accumulator(shape.first, shape.second, nw), out = blocked({shape.first, shape.second}, nw, 8);
    Exchange x = plan_exchange(acc, out, 2, true);
    INFO(shape.first << "x" << shape.second << ": " << x.str());
    REQUIRE(x.stmatrix);
    Dist rows = *stmatrix_rows(acc);
    CHECK(rows.nregs() * 8 == acc.nregs());
    // stmatrix.x4: register m of lane t is row t/4 % 8, columns 2(t%4), +1 of block m, whose 16-byte row
    // i lane 8m + i addresses. Every element the thread holds lands where the exchange tile keeps it.
    for (int t = 0; t < 32 * nw; ++t)
      for (int g = 0; g < rows.nregs(); ++g)
        for (int m = 0; m < 4; ++m)
          for (int h = 0; h < 2; ++h) {
            int lane = 8 * m + (t & 31) / 4;
            int64_t row_addr = x.offset(coord_of(rows, g, (t & ~31) | lane));
            int64_t written = row_addr + ((t & 3) * 2 + h) * 2;
            REQUIRE(written == x.offset(coord_of(acc, 8 * g + 2 * m + h, t)));
          }
    // Each instruction: 512 bytes in 4 wavefronts.
    for (int w = 0; w < nw; ++w)
      for (int g = 0; g < rows.nregs(); ++g) CHECK(warp_wavefronts(x, rows, g, w, 8) == 4);
    CHECK(x.store_wavefronts == x.store_ideal);
    CHECK(x.load_wavefronts == x.load_ideal);
  }
  // The FMA accumulator is not an mma fragment: no stmatrix.
  CHECK(!stmatrix_rows(fma_accumulator(64, 64, 4)));
}
