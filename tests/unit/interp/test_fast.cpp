// The execution form (InterpOptions::fast: unboxed scalars, fused elementwise statements, range
// loads/stores) against the tile-by-tile evaluation: bit-identical buffers, identical findings
// (kind, message with line, lane, pid, buffer and index) and identical print output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "frontend/DT.h"
#include "interp_test_util.h"

using namespace dtsim;
using namespace dtsim::test;

namespace {

struct Outcome {
  Buffers bufs;
  RunReport rep;
  std::string out;
};

Outcome run_mode(const Module& m, const Bindings& b, uint64_t seed, bool fast, InterpOptions opt) {
  Outcome o;
  o.bufs = make_buffers(m, b, seed);
  std::ostringstream os;
  opt.out = &os;
  opt.fast = fast;
  o.rep = run_module(m, b, o.bufs, opt);
  o.out = os.str();
  return o;
}

// Runs `m` both ways and checks that everything observable is the same. Returns the findings count.
int64_t same_both_ways(const Module& m, const Bindings& b, uint64_t seed = 7, InterpOptions opt = {}) {
  Outcome slow = run_mode(m, b, seed, false, opt);
  Outcome fast = run_mode(m, b, seed, true, opt);
  REQUIRE(slow.bufs.list.size() == fast.bufs.list.size());
  for (size_t i = 0; i < slow.bufs.list.size(); ++i) {
    const Buffer &x = slow.bufs.list[i], &y = fast.bufs.list[i];
    INFO("buffer " << x.name);
    REQUIRE(x.bytes.size() == y.bytes.size());
    size_t diff = 0;
    while (diff < x.bytes.size() && x.bytes[diff] == y.bytes[diff]) ++diff;
    CHECK_MESSAGE(diff == x.bytes.size(), "first differing byte " << diff << " of " << x.bytes.size());
  }
  CHECK(slow.rep.findings_count == fast.rep.findings_count);
  CHECK(slow.rep.instances == fast.rep.instances);
  REQUIRE(slow.rep.findings.size() == fast.rep.findings.size());
  for (size_t i = 0; i < slow.rep.findings.size(); ++i) {
    const Finding &x = slow.rep.findings[i], &y = fast.rep.findings[i];
    CHECK(x.kind == y.kind);
    CHECK(x.message == y.message);
    CHECK(x.pid == y.pid);
    CHECK(x.flat_index == y.flat_index);
    CHECK(x.lanes == y.lanes);
  }
  CHECK(slow.out == fast.out);
  return slow.rep.findings_count;
}

// One thread (the paths that claim gathered rows together need it), findings kept or not.
InterpOptions one_thread(bool keep_going) {
  InterpOptions opt;
  opt.threads = 1;
  opt.keep_going = keep_going;
  return opt;
}

int64_t same_tile(const std::string& name, const std::string& src, const std::map<std::string, std::string>& args = {}, InterpOptions opt = {}) {
  Module m = parse_tile(Sources::add(name, src));
  Bindings b = bind_params(m, args);
  verify_module(m, b);
  return same_both_ways(m, b, 7, opt);
}

}  // namespace

TEST_CASE("scalar form: every scalar op and type matches the tile evaluation bit for bit") {
  // Each instance computes scalars from its pid and loaded random inputs (floats in [-1, 1), ints
  // in [-8, 8)) and stores them; pid ranges over enough values to hit negatives, zero and wraps.
  std::string src = R"(kernel t(x: *f32[64], h: *f16[64], g: *bf16[64], d: *f64[64], k: *i32[64], q: *i64[64],
         out of: *f32[64, 16], out oh: *f16[64, 8], out og: *bf16[64, 4], out od: *f64[64, 8], out oi: *i32[64, 16],
         out oq: *i64[64, 8], out ob: *i1[64, 4]) grid(64) {
  p = program_id(0)
  a = load(x + p)
  b = load(x + (63 - p))
  ha = load(h + p)
  hb = load(h + (p * 7 % 64))
  ga = load(g + p)
  da = load(d + p)
  ki = load(k + p)
  kj = load(k + (p + 1) % 64)
  qa = load(q + p)
  o = p * 16
  store(of + o, a + b * 3.0)
  store(of + (o + 1), a / b)
  store(of + (o + 2), exp(a) - log(abs(b) + 0.5))
  store(of + (o + 3), sqrt(abs(a)) + rsqrt(abs(b) + 1.0) + tanh(a) + sigmoid(b) + exp2(a) + log2(abs(a) + 1.0))
  store(of + (o + 4), minimum(a, b) - maximum(a / 0.0, b))
  store(of + (o + 5), where(a < b, a, -b))
  store(of + (o + 6), (a * 1000.0) % 7.0)
  store(of + (o + 7), ki.to(f32) / 3.0)
  store(of + (o + 8), (a * 1e10).to(i32).to(f32))
  store(of + (o + 9), ha.to(f32) * hb.to(f32))
  store(of + (o + 10), -a)
  store(of + (o + 11), 0.1)
  store(of + (o + 12), p)
  store(of + (o + 13), qa)
  store(of + (o + 14), ga.to(f32) + 1.0)
  store(of + (o + 15), da.to(f32) / 7.0)
  store(oh + p * 8, ha + hb)
  store(oh + (p * 8 + 1), ha * hb / 3.0)
  store(oh + (p * 8 + 2), exp(ha))
  store(oh + (p * 8 + 3), a.to(f16))
  store(oh + (p * 8 + 4), a)
  store(oh + (p * 8 + 5), 2049.0)
  store(oh + (p * 8 + 6), minimum(ha, hb))
  store(oh + (p * 8 + 7), -ha)
  store(og + p * 4, ga * ga + 1.0)
  store(og + (p * 4 + 1), a.to(bf16))
  store(og + (p * 4 + 2), sqrt(abs(ga)))
  store(og + (p * 4 + 3), ga / 3.0)
  store(od + p * 8, da * da + a.to(f64))
  store(od + (p * 8 + 1), da / 3.0)
  store(od + (p * 8 + 2), exp(da))
  store(od + (p * 8 + 3), maximum(da, a.to(f64)))
  store(od + (p * 8 + 4), da % 0.25)
  store(od + (p * 8 + 5), ki.to(f64) * 0.1)
  store(od + (p * 8 + 6), where(da > 0.0, da, 0.0))
  store(od + (p * 8 + 7), 0.1)
  oo = p * 16
  store(oi + oo, ki * 2147483647 + kj)
  store(oi + (oo + 1), ki // (kj + 9))
  store(oi + (oo + 2), ki % (kj + 9))
  store(oi + (oo + 3), cdiv(ki, kj + 9))
  store(oi + (oo + 4), ki << (p % 40))
  store(oi + (oo + 5), ki >> (p % 40))
  store(oi + (oo + 6), (ki & kj) | (ki ^ 5))
  store(oi + (oo + 7), ~ki)
  store(oi + (oo + 8), abs(ki - 3))
  store(oi + (oo + 9), minimum(ki, kj) + maximum(ki, kj))
  store(oi + (oo + 10), (a * 3e9).to(i32))
  store(oi + (oo + 11), (a / 0.0).to(i32))
  store(oi + (oo + 12), where(ki < kj, ki, kj - 100))
  store(oi + (oo + 13), -2147483647 - 1 // -1 + p)
  store(oi + (oo + 14), qa.to(i32) * 65536 * 65536)
  store(oi + (oo + 15), num_programs(0) - p)
  store(oq + p * 8, qa * 9223372036854775807 + p)
  store(oq + (p * 8 + 1), qa // (ki + 9).to(i64))
  store(oq + (p * 8 + 2), qa << (p % 70))
  store(oq + (p * 8 + 3), (a * 1e19).to(i64))
  store(oq + (p * 8 + 4), ki.to(i64) * 4294967296)
  store(oq + (p * 8 + 5), cdiv(qa, 3))
  store(oq + (p * 8 + 6), abs(qa) % 5)
  store(oq + (p * 8 + 7), maximum(qa, ki.to(i64)))
  store(ob + p * 4, a < b)
  store(ob + (p * 4 + 1), (a < 0.0) && (ki > 0) || (p == 5))
  store(ob + (p * 4 + 2), ki.to(i1))
  store(ob + (p * 4 + 3), ~(ki != kj))
}
)";
  CHECK(same_tile("<scalar-ops>", src) == 0);
}

TEST_CASE("scalar form: loops, ifs, masked loads with other, early return") {
  std::string src = R"(kernel t(x: *f32[40], out y: *f32[8, 5], n: i32 = 37) grid(8) {
  p = program_id(0)
  if p == 6 {
    return
  }
  acc = 0.0
  for i in range(0, 5) {
    j = p * 5 + i
    v = load(x + j, mask=j < n, other=-2.5)
    if v > 0.0 {
      acc = acc + v
    } else {
      acc = acc * 0.5
    }
    store(y + j, acc, mask=(p != 3) && (i != 2))
  }
  store(y + p * 5 + 2, acc)
}
)";
  CHECK(same_tile("<scalar-flow>", src) == 0);
}

TEST_CASE("scalar form: sanitizer findings are the same (bounds, uninitialized, conflicts, faults)") {
  // Out-of-bounds scalar load in instance 3 only.
  CHECK(same_tile("<s-oob>", "kernel t(x: *f32[8], out y: *f32[8]) grid(8) {\n  p = program_id(0)\n  v = load(x + p * (1 + (p == 3)) + 2)\n  store(y + p, v)\n}\n") == 1);
  // Out-of-bounds scalar store, keep going.
  InterpOptions kg;
  kg.keep_going = true;
  CHECK(same_tile("<s-oob-store>", "kernel t(out y: *f32[8]) grid(10) {\n  p = program_id(0)\n  store(y + p, 1.0)\n}\n", {}, kg) == 2);
  // Uninitialized read of an output element no instance wrote yet.
  CHECK(same_tile("<s-uninit>", "kernel t(out y: *f32[8]) grid(8) {\n  p = program_id(0)\n  store(y + p, 1.0, mask=p != 5)\n  v = load(y + 5)\n}\n") == 1);
  // Two instances store the same element; one loads what another stores.
  CHECK(same_tile("<s-ww>", "kernel t(out y: *f32[8]) grid(8) {\n  p = program_id(0)\n  store(y + p // 2, p.to(f32))\n}\n") == 1);
  CHECK(same_tile("<s-rw>", "kernel t(y: *f32[9]) grid(8) {\n  p = program_id(0)\n  v = load(y + p + 1)\n  store(y + p, v)\n}\n") == 1);
  CHECK(same_tile("<s-rw2>", "kernel t(y: *f32[9]) grid(8) {\n  p = program_id(0)\n  store(y + p, 2.0)\n  v = load(y + p + 1)\n}\n") == 1);
  // Integer division by zero.
  CHECK(same_tile("<s-div0>", "kernel t(out y: *i32[8]) grid(8) {\n  p = program_id(0)\n  store(y + p, 7 // (p - 4))\n}\n") == 1);
  // Bounds only / none.
  InterpOptions none;
  none.sanitize = Sanitize::None;
  CHECK(same_tile("<s-none>", "kernel t(x: *f32[8], out y: *f32[8]) grid(8) {\n  p = program_id(0)\n  store(y + p, load(x + p + 1, mask=p < 7) + load(x + 20))\n}\n", {}, none) == 0);
}

TEST_CASE("tile form and range loads/stores: findings are the same as lane by lane") {
  InterpOptions kg;
  kg.keep_going = true;
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // Overlapping tile stores (write-write), a tile load of what another instance stores (read-write),
    // a tile load of never-written elements, out-of-bounds tails, masked tails.
    CHECK(same_tile("<t-ww>", "kernel t(out y: *f32[40]) grid(4) {\n  p = program_id(0)\n  o = p * 8 + arange(0, 16)\n  store(y + o, (o + p).to(f32), mask=o < 40)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<t-rw>", "kernel t(y: *f32[40]) grid(4) {\n  p = program_id(0)\n  o = p * 8 + arange(0, 8)\n  v = load(y + o + 4)\n  store(y + o, v * 2.0)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<t-uninit>", "kernel t(out y: *f32[64], out z: *f32[64]) grid(2) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n  store(y + o, 1.0, mask=o != 40)\n  store(z + o, load(y + o) + 1.0)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<t-oob>", "kernel t(x: *f32[50], out y: *f32[64]) grid(2) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n  store(y + o, load(x + o, mask=o < 52, other=-1.0))\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<t-clean>", "kernel t(x: *f32[50], out y: *f32[64], out z: *f32[64]) grid(2) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n  m = o < 50\n  store(y + o, load(x + o, mask=m, other=-1.0))\n  store(z + o, load(y + o) * 2.0 + where(m, 1.0, 0.5))\n}\n", {}, opt) == 0);
  }
}

TEST_CASE("affine pointers: ranges, strides, reversed and i64 offsets, broadcast values, tails") {
  InterpOptions kg;
  kg.keep_going = true;
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    std::string src = R"(kernel t(x: *f32[100], h: *f16[100], out y: *f32[100], out z: *f16[100], out w: *f32[4, 100]) grid(4) {
  p = program_id(0)
  r = arange(0, 32)
  o = p * 25 + r
  o64 = o.to(i64)
  a = load(x + o, mask=o < 100, other=-1.0)
  b = load(o64 + x, mask=o64 < 100)
  c = load(x + (99 - o), mask=o < 100)
  d = load(x + o * 2, mask=o * 2 < 100, other=0.5)
  e = load(h + o, mask=o < 100)
  store(y + o, a + b * c - d, mask=(o < 100) && (r < 25))
  store(z + o, e * 2.0 + a, mask=(o < 100) && (r < 25))
  store(w + p * 100 + r * 3, 7.0, mask=r * 3 < 100)
  store(w + p * 100 + 96 + r, a, mask=r < 4)
}
)";
    CHECK(same_tile("<affine>", src, {}, opt) == 0);
    // Tails that leave the buffer: found identically (first lane, count, index).
    CHECK(same_tile("<affine-oob>", "kernel t(x: *f32[100], out y: *f32[100]) grid(4) {\n  p = program_id(0)\n  o = p * 30 + arange(0, 32)\n  store(y + o, load(x + o), mask=o < 100)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<affine-oob-store>", "kernel t(x: *f32[128], out y: *f32[100]) grid(4) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n  store(y + o, load(x + o))\n}\n", {}, opt) >= 1);
  }
}

TEST_CASE("scalar form: the untensorized mm.dt lowering") {
  Module m = parse_tile_file(std::string(DTSIM_SOURCE_DIR) + "/bench/kernels/mm_scalar.tile");
  Bindings b = bind_params(m, {{"x_SIZE", "37"}, {"y_SIZE", "130"}, {"k_SIZE", "5"}});
  verify_module(m, b);
  CHECK(same_both_ways(m, b) == 0);
}

TEST_CASE("every example, as scheduled and with random legal schedules, runs identically both ways") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(DTSIM_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ".tile" || e.path().extension() == ".dt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  for (const fs::path& f : files) {
    INFO(f.filename().string());
    if (f.extension() == ".tile") {
      Module m = parse_tile_file(f.string());
      Bindings b = bind_params(m, {});
      verify_module(m, b);
      same_both_ways(m, b);
      continue;
    }
    auto dt = parse_dt_file(f.string());
    for (uint64_t seed = 0; seed < 3; ++seed) {
      std::string desc;
      std::map<std::string, int64_t> sizes;
      auto prog = seed == 0 ? dt : with_random_schedule(*dt, seed, &desc, &sizes);
      INFO(desc);
      Module m = lower_dt(*prog);
      std::map<std::string, std::string> args;
      for (auto& [d, v] : sizes) args[d + "_SIZE"] = std::to_string(v);
      Bindings b = bind_params(m, args);
      verify_module(m, b);
      same_both_ways(m, b, seed + 1);
    }
  }
}

TEST_CASE("fused elementwise trees: every op and type, tails, scalars, broadcasts, halves, reductions") {
  InterpOptions kg;
  kg.keep_going = true;
  // Chains of 2+ elementwise ops (fused, 512-element chunks: 1536 lanes make three chunks) over
  // f32/f16/bf16/f64/i32/i64/i1 tiles with scalar operands, conversions and where; fused sums,
  // maxima and minima; masked tails (n = 1500); a 2-d tree whose row-vector operand is broadcast
  // (not fused: evaluated node by node inside the fused parent's leaves).
  std::string src = R"(kernel t(x: *f32[3000], h: *f16[3000], g: *bf16[3000], d: *f64[3000], k: *i32[3000], q: *i64[3000],
         out of: *f32[3000, 8], out oh: *f16[3000, 2], out og: *bf16[3000], out od: *f64[3000], out oi: *i32[3000, 4],
         out oq: *i64[3000], out ob: *i1[3000, 2], out os: *f32[2, 16], out m2: *f32[2, 32, 32], n: i32 = 2900) grid(2) {
  p = program_id(0)
  o = p * 1500 + arange(0, 2048)
  m = (o < p * 1500 + 1500) && (o < n)
  a = load(x + o, mask=m, other=0.5)
  b = load(x + (o + 7), mask=m, other=-2.0)
  ha = load(h + o, mask=m)
  ga = load(g + o, mask=m)
  da = load(d + o, mask=m)
  ki = load(k + o, mask=m)
  qa = load(q + o, mask=m, other=3)
  store(of + o * 8, a * b + a / (b + 3.0) - 0.25, mask=m)
  store(of + (o * 8 + 1), exp(a) * sigmoid(b) + tanh(a - b) + sqrt(abs(a)) + rsqrt(abs(b) + 1.0) + log(abs(a) + 0.5), mask=m)
  store(of + (o * 8 + 2), where(a < b, a * 2.0, -b) + where(m, a, 1.0), mask=m)
  store(of + (o * 8 + 3), minimum(a, b / 0.0) - maximum(a * 0.0 / 0.0, b) + (a * 100.0) % 7.0, mask=m)
  store(of + (o * 8 + 4), ki.to(f32) * 0.5 + qa.to(f32) - (a * 1e10).to(i32).to(f32), mask=m)
  store(of + (o * 8 + 5), ha.to(f32) * 3.0 + ga.to(f32) + da.to(f32) * 0.1, mask=m)
  store(of + (o * 8 + 6), exp2(a) + log2(abs(b) + 1.0) - -a, mask=m)
  store(of + (o * 8 + 7), (a > 0.0).to(f32) * 2.0 + (ki > 0).to(f32), mask=m)
  store(oh + o * 2, ha * ha + 1.0 - ha / 3.0, mask=m)
  store(oh + (o * 2 + 1), exp(ha) * 2049.0 + a.to(f16), mask=m)
  store(og + o, ga * ga / 3.0 + sqrt(abs(ga)), mask=m)
  store(od + o, da * da + a.to(f64) * 0.1 - exp(da), mask=m)
  store(oi + o * 4, ki * 2147483647 + ki * ki - 5, mask=m)
  store(oi + (o * 4 + 1), (ki << (o % 40)) ^ (ki >> 3) | ~ki & 12, mask=m)
  store(oi + (o * 4 + 2), abs(ki - 3) + minimum(ki, 2) * maximum(ki, -2), mask=m)
  store(oi + (o * 4 + 3), where(ki < 0, -ki, ki * 3) + (a * 3e9).to(i32), mask=m)
  store(oq + o, qa * 9223372036854775807 + ki.to(i64) * 4294967296 - qa, mask=m)
  store(ob + o * 2, (a < b) && (ki > 0) || (o % 3 == 0), mask=m)
  store(ob + (o * 2 + 1), ~((a >= 0.0) && (b <= 0.0)) != (qa == 3), mask=m)
  s1 = sum(a * b + 1.0, axis=0)
  s2 = max(a * b - 2.0, axis=0)
  s3 = min(where(m, a + b, 5.0), axis=0)
  s4 = sum(ki * 3 + 1, axis=0)
  s5 = sum((a > 0.0) && m, axis=0)
  s6 = max(ha * 2.0, axis=0)
  s7 = sum(da * da, axis=0)
  s8 = max((ki * 2).to(f32) + a * 0.0 / 0.0, axis=0)
  s9 = sum(exp(ha) + 1.0, axis=0)
  store(os + p * 16 + arange(0, 16), where(arange(0, 16) == 0, s1, where(arange(0, 16) == 1, s2, where(arange(0, 16) == 2, s3,
        where(arange(0, 16) == 3, s4.to(f32), where(arange(0, 16) == 4, s5.to(f32), where(arange(0, 16) == 5, s6.to(f32),
        where(arange(0, 16) == 6, s7.to(f32), where(arange(0, 16) == 7, s8, s9.to(f32))))))))))
  r = arange(0, 32)
  t2 = load(x + r[:, None] * 32 + r[None, :])
  row = load(x + 1024 + r)
  store(m2 + p * 1024 + r[:, None] * 32 + r[None, :], t2 * 2.0 + row[None, :] * t2 - 1.0 + exp(t2) * 0.5)
}
)";
  for (InterpOptions opt : {InterpOptions{}, kg}) CHECK(same_tile("<fused>", src, {}, opt) == 0);
  // Integer division stays node by node (it can fault); its operands and users may be fused.
  CHECK(same_tile("<fused-div0>", "kernel t(x: *i32[64], out y: *i32[64]) grid(1) {\n  o = arange(0, 64)\n  v = load(x + o)\n  store(y + o, (v * 2 + 1) // (v + 8 - 8) + v * v)\n}\n") == 1);
  CHECK(same_tile("<fused-div0-kg>", "kernel t(x: *i32[64], out y: *i32[64]) grid(2) {\n  o = arange(0, 64)\n  v = load(x + o)\n  store(y + o, (v * 2 + 1) % (v - v) + v * v)\n}\n", {}, kg) == 2);
}

TEST_CASE("consecutive offsets known statically: wraparound, loop-carried and mixed assignments") {
  InterpOptions kg;
  kg.keep_going = true;
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // i32 offsets that wrap past INT32_MAX inside the tile (p = 1): not a range, found out of bounds
    // lane by lane; i64 casts of them (u2: its first lanes are in bounds, the wrapped ones not); offsets advanced in a loop; a slot assigned both an arange
    // form and a reversed one (never trusted by its ends).
    std::string src = R"(kernel t(x: *f32[256], out y: *f32[256], out z: *f32[2, 128]) grid(2) {
  p = program_id(0)
  w = p * (2147483647 - 40) + arange(0, 64)
  v = load(x + w, mask=w < 256, other=1.0)
  u = load(x + w.to(i64), mask=w < 256, other=2.0)
  u2 = load(x + (w.to(i64) - p * 2147483607))
  store(y + (w - p * (2147483647 - 40)) + p * 64, v + u + u2)
  o = arange(0, 16) + p * 128
  for i in range(0, 8) {
    store(z + o, load(x + o) * 2.0)
    o = o + 16
  }
  r = arange(0, 32)
  if p == 1 {
    r = 31 - arange(0, 32)
  }
  store(y + 128 + p * 32 + r, load(x + r) + 1.0)
}
)";
    CHECK(same_tile("<consec>", src, {}, opt) >= 1);  // instance 1's u2 lanes 41.. are out of bounds
  }
}

TEST_CASE("conflict tracking by spans: the same findings as per element, statement of the first writer kept") {
  InterpOptions kg;
  kg.keep_going = true;
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // Instance 0's second store overlaps its first (the overlap keeps the first statement) and runs
    // into instance 1's part: instance 1's first store then conflicts with instance 0's second.
    CHECK(same_tile("<span-stmt>", "kernel t(out y: *f32[64]) grid(4) {\n  p = program_id(0)\n  o = p * 16 + arange(0, 16)\n  store(y + o, 1.0)\n"
                                   "  store(y + o + 4, 2.0, mask=o + 4 < 64)\n}\n", {}, opt) >= 1);
    // Spans first, then a scalar store and a store with a mask that is not a prefix (both need
    // per-element state), then more spans; conflicts among all of them.
    CHECK(same_tile("<span-mixed>", "kernel t(out y: *f32[256]) grid(8) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n  store(y + o, 1.0)\n"
                                    "  store(y + (p * 32 + 40) % 256, 3.0)\n  store(y + (o + 16) % 256, 2.0, mask=arange(0, 32) % 3 == 0)\n"
                                    "  store(y + o, 4.0)\n}\n", {}, opt) >= 1);
    // No conflict: disjoint spans of z (only stored), tails masked by prefix masks; y is loaded and
    // stored, so tracked per element from the start.
    CHECK(same_tile("<span-clean>", "kernel t(out y: *f32[100], out z: *f32[128]) grid(4) {\n  p = program_id(0)\n  o = p * 32 + arange(0, 32)\n"
                                    "  store(y + o, o.to(f32), mask=o < 100)\n  store(y + o, o.to(f32) * 2.0, mask=o < 100)\n"
                                    "  store(z + o, load(y + o, mask=o < 100, other=0.0))\n}\n", {}, opt) == 0);
    // A buffer of several shards (1024 elements each): spans of 1500 cross shard boundaries; stored
    // twice by their instance (clean), then 2048-element spans that run 548 elements into the next
    // instance's part (conflicts across a boundary).
    CHECK(same_tile("<span-shards>", "kernel t(out y: *f32[12000]) grid(8) {\n  p = program_id(0)\n  a = arange(0, 2048)\n  o = p * 1500 + a\n"
                                      "  store(y + o, 1.0, mask=a < 1500)\n  store(y + o, 2.0, mask=a < 1500)\n}\n", {}, opt) == 0);
    CHECK(same_tile("<span-shards-ww>", "kernel t(out y: *f32[12000]) grid(8) {\n  p = program_id(0)\n  o = p * 1500 + arange(0, 2048)\n"
                                         "  store(y + o, p.to(f32), mask=o < 12000)\n}\n", {}, opt) >= 1);
    // The same in descending order: the overlap is at the end of each later span, shards past its first.
    CHECK(same_tile("<span-shards-ww-desc>", "kernel t(out y: *f32[12000]) grid(8) {\n  p = 7 - program_id(0)\n  o = p * 1500 + arange(0, 2048)\n"
                                              "  store(y + o, p.to(f32), mask=o < 12000)\n}\n", {}, opt) >= 1);
  }
  // Two threads: range stores claim spans under the map's lock; a clean kernel stays clean and
  // bit-identical, a conflicting one is found.
  InterpOptions two;
  two.threads = 2;
  auto clean_in_parallel = [&](const char* name, const char* src) {
    Module mc = parse_tile(Sources::add(name, src));
    Bindings bc = bind_params(mc, {});
    verify_module(mc, bc);
    Outcome one = run_mode(mc, bc, 3, true, InterpOptions{}), par = run_mode(mc, bc, 3, true, two);
    CHECK(par.rep.ok());
    CHECK(one.bufs.list[1].bytes == par.bufs.list[1].bytes);
  };
  clean_in_parallel("<span-par>", "kernel t(x: *f32[4096], out y: *f32[4096]) grid(64) {\n  p = program_id(0)\n"
                                  "  o = p * 64 + arange(0, 64)\n  store(y + o, load(x + o) * 2.0)\n}\n");
  // The same over a buffer of 94 shards, spans crossing shard boundaries.
  clean_in_parallel("<span-par-shards>", "kernel t(x: *f32[96000], out y: *f32[96000]) grid(64) {\n  p = program_id(0)\n"
                                         "  o = p * 1500 + arange(0, 2048)\n  m = arange(0, 2048) < 1500\n"
                                         "  store(y + o, load(x + o, mask=m) * 2.0, mask=m)\n}\n");
  Module m2 = parse_tile(Sources::add("<span-par-ww>", "kernel t(out y: *f32[4096]) grid(64) {\n  p = program_id(0)\n"
                                                      "  o = p * 64 + arange(0, 128)\n  store(y + o, p.to(f32), mask=o < 4096)\n}\n"));
  Bindings b2 = bind_params(m2, {});
  verify_module(m2, b2);
  // Each of the 63 neighbouring pairs conflicts once; the finding goes to whichever instance of the
  // pair stores second, one finding per instance and statement. One thread runs them in order: 63.
  // Two threads may run an instance after both its neighbours, which then reports both pairs in one
  // finding: between 32 and 63, never none.
  InterpOptions seq;
  seq.keep_going = true;
  CHECK(run_mode(m2, b2, 3, true, seq).rep.findings_count == 63);
  CHECK(run_mode(m2, b2, 3, false, seq).rep.findings_count == 63);
  two.keep_going = true;
  for (bool fast : {true, false}) {
    int64_t n = run_mode(m2, b2, 3, fast, two).rep.findings_count;
    CHECK(n >= 32);
    CHECK(n <= 63);
  }
}

TEST_CASE("masks of consecutive offsets against a scalar: prefixes at every boundary, wrapping offsets") {
  // o runs from (p - 3) * 16: masks all false, partly true and all true across instances; i64
  // offsets near INT64_MAX wrap inside the tile for the last instances (no prefix: element-wise);
  // the scalar on either side; the scalar a load.
  std::string src = R"(kernel t(k: *i32[4], out y: *i1[8, 448], n: i32 = 37) grid(8) {
  p = program_id(0)
  o = (p - 3) * 16 + arange(0, 64)
  q = o.to(i64) + (9223372036854775807 - 70)
  r = p * 16 + arange(0, 64) + 2147483647 - 140
  b = y + p * 448 + arange(0, 64)
  store(b, o < n)
  store(b + 64, o <= n)
  store(b + 128, n > o)
  store(b + 192, load(k + 1) >= o)
  store(b + 256, q < 9223372036854775807 - 20)
  store(b + 320, q <= -9223372036854775807)
  store(b + 384, r < 2147483647 - 30)
}
)";
  CHECK(same_tile("<prefix-cmp>", src) == 0);
}

TEST_CASE("2-d pointer tiles whose rows are ranges: masks, tails, other, halves, findings") {
  InterpOptions kg, off, kgoff;
  kg.keep_going = true;
  off.sanitize = Sanitize::None;
  kgoff = kg;
  kgoff.sanitize = Sanitize::None;
  for (InterpOptions opt : {InterpOptions{}, kg, off}) {
    // Matmul-like tiles with row and column tails (prefix masks per row), a column mask that is no
    // prefix, a mask of broadcast shape (per lane), other as a scalar and as a tile, an f16 operand,
    // rows K apart and rows overlapping (stride 3 < 8), stores with a tile and with a literal.
    std::string src = R"(kernel t(a: *f32[37, 21], h: *f16[37, 21], out c: *f32[40, 24], out d: *f32[40, 24], out e: *f32[200]) grid(5, 3) {
  pm = program_id(0)
  pn = program_id(1)
  rm = pm * 8 + arange(0, 8)
  rn = pn * 8 + arange(0, 8)
  m = (rm[:, None] < 37) & (rn[None, :] < 21)
  x = load(a + rm[:, None] * 21 + rn[None, :], mask=m, other=-2.0)
  y = load(h + rm[:, None] * 21 + rn[None, :], mask=m & (rn[None, :] % 3 != 0))
  z = load(a + rm[:, None] * 21 + rn[None, :], mask=rm[:, None] < 35, other=x)
  w = load(a + (rm[:, None] % 37) * 3 + rn[None, :], other=0.5)
  store(c + rm[:, None] * 24 + rn[None, :], x * 2.0 + y - z + w, mask=(rm[:, None] < 40) & (rn[None, :] < 24))
  store(d + rm[:, None] * 24 + rn[None, :], 3.0, mask=m & (rn[None, :] != 5))
  if pn == 0 {
    store(e + pm * 40 + arange(0, 8)[:, None] * 3 + arange(0, 8)[None, :], x, mask=(rm[:, None] < 50) & (rn[None, :] < 99))
  }
}
)";
    CHECK(same_tile("<rows>", src, {}, opt) == 0);
  }
  for (InterpOptions opt : {InterpOptions{}, kg, kgoff}) {
    // The last rows leave the buffer (bounds), in a load and in a store.
    CHECK(same_tile("<rows-oob-load>", "kernel t(a: *f32[30, 8], out c: *f32[32, 8]) grid(4) {\n  r = program_id(0) * 8 + arange(0, 8)\n"
                                       "  p = r[:, None] * 8 + arange(0, 8)[None, :]\n  store(c + p, load(a + p))\n}\n", {}, opt) >= (opt.sanitize == Sanitize::None ? 0 : 1));
    CHECK(same_tile("<rows-oob-store>", "kernel t(a: *f32[32, 8], out c: *f32[30, 8]) grid(4) {\n  r = program_id(0) * 8 + arange(0, 8)\n"
                                        "  p = r[:, None] * 8 + arange(0, 8)[None, :]\n  store(c + p, load(a + p))\n}\n", {}, opt) >= (opt.sanitize == Sanitize::None ? 0 : 1));
  }
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // One row reads never-written elements; rows of neighbouring instances overlap (write-write)
    // and one instance loads rows another stores (read-write).
    CHECK(same_tile("<rows-uninit>", "kernel t(out y: *f32[16, 8], out z: *f32[16, 8]) grid(2) {\n  r = program_id(0) * 8 + arange(0, 8)\n"
                                     "  p = r[:, None] * 8 + arange(0, 8)[None, :]\n  store(y + p, 1.0, mask=r[:, None] != 11)\n  store(z + p, load(y + p) + 1.0)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<rows-ww>", "kernel t(out y: *f32[20, 8]) grid(3) {\n  r = program_id(0) * 6 + arange(0, 8)\n"
                                 "  store(y + r[:, None] * 8 + arange(0, 8)[None, :], r[:, None].to(f32) + arange(0, 8)[None, :].to(f32) + program_id(0).to(f32), mask=r[:, None] < 20)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<rows-rw>", "kernel t(y: *f32[24, 8]) grid(2) {\n  r = program_id(0) * 8 + arange(0, 8)\n  p = r[:, None] * 8 + arange(0, 8)[None, :]\n"
                                 "  v = load(y + p + 32, mask=r[:, None] < 20)\n  store(y + p, v * 2.0)\n}\n", {}, opt) >= 1);
  }
  // Two threads: row stores of a stored-only buffer claim spans; clean and bit-identical.
  InterpOptions two;
  two.threads = 2;
  Module m = parse_tile(Sources::add("<rows-par>", "kernel t(x: *f32[64, 64], out y: *f32[64, 64]) grid(8, 8) {\n  r = program_id(0) * 8 + arange(0, 8)\n"
                                                   "  q = program_id(1) * 8 + arange(0, 8)\n  p = r[:, None] * 64 + q[None, :]\n  store(y + p, load(x + p) * 2.0)\n}\n"));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  Outcome one = run_mode(m, b, 3, true, InterpOptions{}), par = run_mode(m, b, 3, true, two), slow = run_mode(m, b, 3, false, InterpOptions{});
  CHECK(par.rep.ok());
  CHECK(one.bufs.list[1].bytes == par.bufs.list[1].bytes);
  CHECK(one.bufs.list[1].bytes == slow.bufs.list[1].bytes);
}

TEST_CASE("stored elementwise values computed straight into the buffer: tails, types, masks, findings") {
  InterpOptions kg, off;
  kg.keep_going = true;
  off.sanitize = Sanitize::None;
  for (InterpOptions opt : {InterpOptions{}, kg, off}) {
    // One op and trees; prefix masks at every boundary (n = 70 with tiles of 32), no mask, a mask
    // that is no prefix (tile path), an i1 and an i32 result, an f16 buffer (tile path), a scalar
    // operand, a value of the pointer's shape in 2-d, a value longer than a chunk (1100 lanes).
    std::string src = R"(kernel t(x: *f32[70], h: *f16[70], out y: *f32[70], out z: *f32[96], out b: *i1[96], out k: *i32[96], out g: *f16[70],
         out w: *f32[4, 32], out u: *f32[1100], n: i32 = 70) grid(3) {
  p = program_id(0)
  o = p * 32 + arange(0, 32)
  m = o < n
  a = load(x + o, mask=m, other=1.5)
  c = load(h + o, mask=m)
  store(y + o, a + c.to(f32), mask=m)
  store(z + o, -a)
  store(b + o, a < 0.25)
  store(k + o, (a * 8.0).to(i32) + p, mask=o % 3 != 0)
  store(g + o, c * 2.0 + 1.0, mask=m)
  q = arange(0, 4)[:, None] * 32 + arange(0, 32)[None, :]
  if p == 1 {
    store(w + p * 0 + q, sqrt(abs(load(x + q % 70))) * a[None, :])
    store(u + arange(0, 1024), load(x + arange(0, 1024) % 70) * 3.0 - 1.0)
    store(u + 1024 + arange(0, 128), exp(load(x + arange(0, 128) % 70) * 0.5) + 0.0, mask=arange(0, 128) < 76)
  }
}
)";
    CHECK(same_tile("<direct>", src, {}, opt) == 0);
  }
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // Findings: a tail out of bounds; instances overlapping (write-write) on a stored-only buffer;
    // a range another instance loads (read-write); a store over lanes loaded uninitialized.
    CHECK(same_tile("<direct-oob>", "kernel t(x: *f32[96], out y: *f32[80]) grid(3) {\n  o = program_id(0) * 32 + arange(0, 32)\n  store(y + o, load(x + o) + 1.0)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<direct-ww>", "kernel t(x: *f32[96], out y: *f32[96]) grid(3) {\n  o = program_id(0) * 24 + arange(0, 32)\n  store(y + o, load(x + o) * (2.0 + program_id(0).to(f32)), mask=o < 96)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<direct-rw>", "kernel t(y: *f32[96]) grid(3) {\n  o = program_id(0) * 32 + arange(0, 32)\n  v = load(y + (o + 16) % 96)\n  store(y + o, v - 1.0)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<direct-uninit>", "kernel t(out y: *f32[64], out z: *f32[64]) grid(2) {\n  o = program_id(0) * 32 + arange(0, 32)\n  store(y + o, 1.0, mask=o < 50)\n  store(z + o, load(y + o) * 3.0)\n}\n", {}, opt) >= 1);
  }
}

TEST_CASE("pointer tiles stepped in place: p = p +/- offsets in loops, with scalars and tiles") {
  InterpOptions kg;
  kg.keep_going = true;
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // A matmul loop (both pointers stepped), a pointer stepped back by a tile, a pointer stepped by
    // a loaded offset, a copy that is not a step; the last trips of `r` step out of bounds.
    std::string src = R"(kernel t(a: *f32[20, 24], b: *f32[24, 16], k: *i32[4], out c: *f32[20, 16], out y: *f32[64]) grid(3, 2) {
  rm = program_id(0) * 8 + arange(0, 8)
  rn = program_id(1) * 8 + arange(0, 8)
  rk = arange(0, 8)
  pa = a + rm[:, None] * 24 + rk[None, :]
  pb = b + rk[:, None] * 16 + rn[None, :]
  acc = zeros([8, 8], f32)
  for j in range(0, 24, 8) {
    ta = load(pa, mask=rm[:, None] < 20, other=0.0)
    tb = load(pb)
    acc += dot(ta, tb)
    pa += 8
    pb = pb + 8 * 16
  }
  store(c + rm[:, None] * 16 + rn[None, :], acc, mask=rm[:, None] < 20)
  r = y + arange(0, 16)
  q = r
  for i in range(0, 3) {
    r = r + arange(0, 16)
    r = r - 2
    r = r - arange(0, 16) + load(k + i) % 4 + 16
    q = r + 1
  }
  store(r - 1, arange(0, 16).to(f32), mask=program_id(0) + program_id(1) == 0)
  store(q, load(q - 1) * 2.0, mask=program_id(0) + program_id(1) == 1)
}
)";
    same_tile("<step>", src, {}, opt);
  }
}

TEST_CASE("loads left in the buffer for the fused trees that read them: tails, aliasing, reuse, findings") {
  InterpOptions kg, off;
  kg.keep_going = true;
  off.sanitize = Sanitize::None;
  for (InterpOptions opt : {InterpOptions{}, kg, off}) {
    // add with a tail (n = 70, tiles of 32); a load read by two trees (a reduction and a store) and
    // by a store whose mask is no prefix (the tree made as a tile); a 2-d range; a one-element tile
    // broadcast in a tree; a load into the buffer it is stored to, one lane further on (the view is
    // copied before the store writes); loads not left in the buffer: read by a plain reduction, read
    // after a store, read by a print-free loop body that stores first; f16 (converted) and i1 loads.
    std::string src = R"(kernel t(x: *f32[70], y: *f32[70], h: *f16[70], bb: *i1[70], out z: *f32[70], out s: *f32[3], out r: *f32[70],
         out w: *f32[4, 32], io: *f32[100], out q: *f32[96], out g: *f32[70], out gg: *f32[96], n: i32 = 70) grid(3) {
  p = program_id(0)
  o = p * 32 + arange(0, 32)
  m = o < n
  a = load(x + o, mask=m)
  b = load(y + o, mask=m, other=0.5)
  store(z + o, a + b, mask=m)
  v = load(x + o, mask=m, other=0.0)
  t = sum(v * v, axis=0) / 32.0
  store(s + p, t)
  e = load(y + o, mask=m, other=1.0)
  store(r + o, e * t + v, mask=m & (o % 3 != 0))
  u = load(x + arange(0, 2)[:, None] * 32 + arange(0, 32)[None, :])
  one = load(y + p + arange(0, 1))
  store(w + 64 * p + arange(0, 2)[:, None] * 32 + arange(0, 32)[None, :], u * 2.0 - one + 0.0, mask=p < 2)
  if p == 0 {
    k = load(io + arange(0, 64))
    store(io + 1 + arange(0, 64), k * 2.0)
  }
  c = load(x + o % 64)
  mx = max(c, axis=0)
  d = load(y + o % 64)
  store(q + o, c + mx)
  store(gg + o, d * 3.0 + 1.0)
  f = load(h + o, mask=m)
  l = load(bb + o, mask=m)
  store(g + o, where(l, f.to(f32) * 2.0, d + 0.0), mask=m & (p > 0))
  for i in range(0, 2) {
    j = load(z + o, mask=m)
    store(z + o, j * 0.5 + 1.0, mask=m)
  }
}
)";
    CHECK(same_tile("<views>", src, {}, opt) == 0);
  }
  for (InterpOptions opt : {InterpOptions{}, kg}) {
    // Findings through a load that would be left in the buffer: a tail out of bounds, lanes read
    // uninitialized. (A range another instance stores, a read-write conflict, is `<direct-rw>`
    // above: its load, tracked, is copied.)
    CHECK(same_tile("<views-oob>", "kernel t(x: *f32[80], y: *f32[96], out z: *f32[96]) grid(3) {\n  o = program_id(0) * 32 + arange(0, 32)\n  a = load(x + o)\n  b = load(y + o)\n  store(z + o, a + b)\n}\n", {}, opt) >= 1);
    CHECK(same_tile("<views-uninit>", "kernel t(out y: *f32[64], out z: *f32[64]) grid(2) {\n  o = program_id(0) * 32 + arange(0, 32)\n  store(y + o, 1.0, mask=o < 50)\n  a = load(y + o)\n  store(z + o, a * 3.0 + 1.0)\n}\n", {}, opt) >= 1);
  }
}

TEST_CASE("pointer tiles held as rows plus columns: steps, tails, broadcasts, wraparound, findings") {
  InterpOptions kg, off, two;
  kg.keep_going = true;
  off.sanitize = Sanitize::None;
  two.threads = 2;
  // A matmul with tails on every axis: one pointer made with its offsets first, steps by an i64
  // parameter, by subtraction and with the scalar first; an `other` of one row (broadcast: the
  // tile path); the store through an outer pointer made in the statement.
  std::string mm = R"(kernel t(a: *f32[20, 24], b: *f32[24, 18], out c: *f32[20, 18], st: i64 = 8) grid(3, 3) {
  rm = program_id(0) * 8 + arange(0, 8)
  rn = program_id(1) * 8 + arange(0, 8)
  rk = arange(0, 8)
  pa = a + rm[:, None] * 24 + rk[None, :]
  pb = rk[:, None] * 18 + (b + rn[None, :])
  acc = zeros([8, 8], f32)
  for j in range(0, 24, 8) {
    ta = load(pa, mask=(rm[:, None] < 20) & (rk[None, :] + j < 24), other=0.0)
    tb = load(pb, mask=(rk[:, None] + j < 24) & (rn[None, :] < 18), other=rn[None, :].to(f32) + 0.5)
    acc += dot(ta, tb)
    pa = pa + st
    pa = pa - 1
    pa = 1 + pa
    pb += 8 * 18
  }
  store(c + rm[:, None] * 18 + rn[None, :], acc, mask=(rm[:, None] < 20) & (rn[None, :] < 18))
}
)";
  for (InterpOptions opt : {InterpOptions{}, kg, off, two}) CHECK(same_tile("<rowptr-mm>", mm, {}, opt) == 0);
  // Masks of a column and a row (rows masked off in bounds, all set, columns no prefix, `and`);
  // shapes: rows of 2 (the tile path), one row, one column (one range), a literal stored, a value
  // of one column broadcast (the tile path), f16 elements converted, a pointer whose columns are not
  // consecutive (a transposed load: the tile path), and one whose steps wrap around 2^64.
  std::string shapes = R"(kernel t(x: *f32[64], h: *f16[8, 8], out z: *f32[96], out zh: *f16[8, 8], out zm: *f32[4, 64], big: i64 = 9223372036854775807) grid(1) {
  r = arange(0, 8)
  pm = x + r[:, None] * 8 + r[None, :]
  om = zm + r[:, None] * 8 + r[None, :]
  store(om, load(pm, mask=(r[:, None] < 5) & (r[None, :] < 6), other=-2.0))
  store(om + 64, load(pm, mask=(r[:, None] < 8) & (r[None, :] < 8)))
  store(om + 128, load(pm, mask=(r[:, None] >= 2) & (r[None, :] % 3 != 1), other=-3.0))
  store(om + 192, load(pm, mask=(r[:, None] % 2 == 0) and (r[None, :] >= 0), other=-4.0))
  p2 = x + arange(0, 4)[:, None] * 8 + arange(0, 2)[None, :]
  p1 = x + 3 + arange(0, 1)[:, None] + r[None, :]
  pc = x + r[:, None] * 8 + arange(0, 1)[None, :]
  pw = x + r[:, None] * 8 + r[None, :]
  store(z + arange(0, 4)[:, None] * 2 + arange(0, 2)[None, :], load(p2))
  store(z + 8 + arange(0, 1)[:, None] + r[None, :], load(p1) * 2.0)
  store(z + 16 + r[:, None] + arange(0, 1)[None, :], load(pc))
  q = z + 24 + arange(0, 4)[:, None] * 8 + r[None, :]
  store(q, 2.5)
  store(z + 56 + r[:, None] * 4 + arange(0, 4)[None, :], load(pc) + 1.0, mask=r[:, None] < 5)
  t = load(x + r[:, None] + r[None, :] * 8)
  store(z + 88 + arange(0, 1)[:, None] + r[None, :], sum(t, axis=0)[None, :])
  ph = h + r[:, None] * 8 + r[None, :]
  oh = zh + r[:, None] * 8 + r[None, :]
  pw += big
  pw += big
  u = load(pw, mask=(r[:, None] < 0) & (r[None, :] < 8), other=-1.0)
  pw += 2
  store(oh, load(ph) * 2.0 + load(pw) + u)
}
)";
  for (InterpOptions opt : {InterpOptions{}, off}) CHECK(same_tile("<rowptr-shapes>", shapes, {}, opt) == 0);
  // Findings through RowPtrs: loads stepped out of bounds (and back), a store whose columns two
  // instances share (write-write), a load of never-written elements; and pointers not held as rows:
  // one printed, one first made inside a loop.
  std::string bad = R"(kernel t(a: *f32[16, 16], out y: *f32[8, 16], out z: *f32[16, 64], out w: *f32[16, 16]) grid(2) {
  r = arange(0, 8)
  p = a + (program_id(0) * 8 + r)[:, None] * 16 + r[None, :]
  q = z + r[:, None] * 64 + program_id(0) * 32 + r[None, :]
  for i in range(0, 4) {
    v = load(p)
    store(q, v * 2.0)
    p += 6
    q = q + 8
  }
  store(y + r[:, None] * 16 + (r + program_id(0) * 4)[None, :], r[:, None].to(f32))
  u = load(w + r[:, None] * 16 + r[None, :])
  pp = a + r[:, None] * 16 + r[None, :]
  print(pp)
  for i in range(0, 2) {
    pl = z + (program_id(0) * 8 + r)[:, None] * 64 + r[None, :]
    pl += i * 8
    store(pl, load(pp) + u)
  }
}
)";
  for (InterpOptions opt : {InterpOptions{}, kg}) CHECK(same_tile("<rowptr-findings>", bad, {}, opt) >= 1);
  CHECK(same_tile("<rowptr-findings>", bad, {}, off) == 0);
}

namespace {
// Records every defined variable before every statement, as a debugger shows them.
struct Transcript : DebugHooks {
  std::string text;
  void before_stmt(Frame& f, const Stmt& s) override {
    text += "line " + std::to_string(s.loc.line) + "\n";
    for (size_t i = 0; i < f.slots.size(); ++i)
      if (f.slots[i].defined()) text += "  " + f.kernel->slot_names[i] + " = " + format_value(f.slots[i]) + "\n";
  }
};
}  // namespace

TEST_CASE("under the debugger every pointer tile is made: stepped pointers visible at every statement") {
  std::string src = R"(kernel t(a: *f32[8, 12], b: *f32[12, 8], out c: *f32[8, 8]) grid(1) {
  r = arange(0, 4)
  pa = a + r[:, None] * 12 + r[None, :]
  pb = b + r[:, None] * 8 + r[None, :]
  acc = zeros([4, 4], f32)
  for k in range(0, 12, 4) {
    acc += dot(load(pa), load(pb))
    pa += 4
    pb += 4 * 8
  }
  store(c + r[:, None] * 8 + r[None, :], acc)
}
)";
  // The debugger's transcript of `src`, with the per-element path (0) and the fast paths (1).
  auto transcripts = [](const char* name, const std::string& text_src, std::string (&out)[2]) {
    for (int fast = 0; fast < 2; ++fast) {
      Module m = parse_tile(Sources::add(name, text_src));
      Bindings b = bind_params(m, {});
      verify_module(m, b);
      Buffers bufs = make_buffers(m, b, 3);
      Transcript hooks;
      InterpOptions opt;
      opt.fast = fast == 1;
      opt.hooks = &hooks;
      CHECK(run_module(m, b, bufs, opt).ok());
      out[fast] = hooks.text;
    }
  };
  std::string text[2];
  transcripts("<dbg-rowptr>", src, text);
  // Offsets and masks too: every statement shows them made.
  src = R"(kernel t(x: *f32[40], out z: *f32[40], n: i32 = 40) grid(2) {
  o = program_id(0) * 32 + arange(0, 32)
  m = o < n
  store(z + o, load(x + o, mask=m) + 1.0, mask=m)
}
)";
  std::string text2[2];
  transcripts("<dbg-lazy>", src, text2);
  CHECK(text2[0] == text2[1]);
  CHECK(text2[1].find("m = [ True  True  True  True") != std::string::npos);
  CHECK(text2[1].find("o = [32 33 34") != std::string::npos);
  CHECK(text[0] == text[1]);
  // pa after its third step: a + r * 12 + r[None, :] + 12 (the offsets into a).
  CHECK(text[1].find("pa = ") != std::string::npos);
  CHECK(text[1].find("pa = [[12 13 14 15]") != std::string::npos);
}

TEST_CASE("consecutive offsets and prefix masks held unmade: wraparound, casts, every reader, findings") {
  InterpOptions kg, off, two;
  kg.keep_going = true;
  off.sanitize = Sanitize::None;
  two.threads = 2;
  // Offsets made every way iota() knows (arange, scalar first, subtraction, casts both ways, a
  // copy, a step in a loop) and read every way: range loads and stores with their masks (<, <=, >,
  // >=; empty, partial, full), a load left in the buffer, and readers that need the tiles made
  // (arithmetic, a reduction, where(), a mask combined with &, print). `hi` puts the offsets of the
  // last instance across 2^31 in i32 (their i64 widening is then no sequence).
  std::string src = R"(kernel t(x: *f32[200], y: *f32[200], out z: *f32[200], out w: *f32[200], out s: *i64[8], n: i32 = 150, hi: i32 = 2147483600) grid(5) {
  p = program_id(0)
  o = p * 32 + arange(0, 32)
  m = o < n
  a = load(x + o, mask=m)
  b = load(y + o, mask=m, other=2.0)
  store(z + o, a + b, mask=m)
  q = 7 + (arange(0, 32) + p * 32).to(i64) - 7
  mq = n > q
  store(w + q, load(x + q, mask=mq) * 2.0, mask=mq)
  r = o
  ml = r <= n - 40
  mg = 100 >= r
  store(w + r, load(y + r, mask=ml & mg, other=0.0) + 1.0, mask=ml)
  h = hi + arange(0, 32) + p * 16
  hw = h.to(i64)
  ht = hw.to(i32) - hi
  store(s + p, sum(hw - hi, axis=0) + sum(ht, axis=0))
  u = o.to(i64).to(i32)
  print(p, sum(u * 2, axis=0), sum(where(m, o, 0 - o), axis=0), sum(where(mg, 1, 0), axis=0))
  for i in range(0, 2) {
    o = o + 200
    mi = o < 200 + n
    store(z + (o - 200), load(z + (o - 200), mask=mi) * 0.5, mask=mi)
  }
}
)";
  for (InterpOptions opt : {InterpOptions{}, kg, off, two}) CHECK(same_tile("<lazy>", src, {}, opt) == 0);
  // Findings through unmade offsets and masks: a tail read out of bounds (the mask covers too many
  // lanes), a read of never-written elements, a store two instances share.
  std::string bad = R"(kernel t(x: *f32[100], out y: *f32[100], out z: *f32[100], n: i32 = 110) grid(4) {
  o = program_id(0) * 32 + arange(0, 32)
  m = o < n
  v = load(x + o, mask=m)
  store(y + o, v, mask=o < 60)
  store(z + o, load(y + o, mask=m) + v, mask=m)
  store(y + (o - 16), v, mask=o < 40)
}
)";
  for (InterpOptions opt : {InterpOptions{}, kg}) CHECK(same_tile("<lazy-findings>", bad, {}, opt) >= 1);
}

// Row stores that land in the gaps between spans recorded before (a tile's rows, pid 1's rows
// between pid 0's; in reverse order a later instance's rows first): a claim that fits a gap
// inserts its span there, or extends the span before it (the same instance and statement); one
// that reaches into a recorded span of another instance conflicts.
TEST_CASE("conflict spans: claims in the gaps between recorded spans") {
  const char* rows = R"(kernel t(out y: *f32[16, 64]) grid(2, 2) {
  r = program_id(0) * 8 + arange(0, 8)
  for k in range(0, 2) {
    c = program_id(1) * 32 + k * 16 + arange(0, 16)
    store(y + expand_dims(r, 1) * 64 + expand_dims(c, 0), 1.0)
  }
}
)";
  const char* over = R"(kernel t(out y: *f32[16, 64]) grid(2, 2) {
  r = program_id(0) * 8 + arange(0, 8)
  for k in range(0, 2) {
    c = program_id(1) * 32 + k * 16 + arange(0, 16) + (program_id(1) == 0).to(i32) * k
    store(y + expand_dims(r, 1) * 64 + expand_dims(c, 0), program_id(1).to(f32))
  }
}
)";
  for (Order order : {Order::Sequential, Order::Reverse, Order::Shuffle})
    for (bool keep : {false, true}) {
      CAPTURE(static_cast<int>(order));
      CAPTURE(keep);
      InterpOptions opt;
      opt.order = order;
      opt.keep_going = keep;
      CHECK(same_tile("<gap-rows>", rows, {}, opt) == 0);
      CHECK(same_tile("<gap-rows-over>", over, {}, opt) >= 1);
    }
}

TEST_CASE("conflict spans: own overlaps, gaps, shard borders, every order and thread count") {
  // Each instance of `a` stores four overlapping ranges of its 512 elements (the second a prefix
  // mask), leaving [100, 150) of them unwritten; the ranges cross the 1024-element shards. `b`
  // reads everything back (uninitialized reads in the gaps and past the last instance). In `c`
  // each instance's second store runs past its first (a span of its own statement), and one
  // instance stores into the previous one's second span (a write-write conflict whose note names
  // that statement).
  std::string src = R"(kernel a(out y: *f32[5000]) grid(9) {
  p = program_id(0)
  o = p * 512 + arange(0, 256)
  store(y + o + 256, 1.0)
  store(y + o, 2.0, mask=o < p * 512 + 100)
  store(y + o + 150, 3.0)
  store(y + o + 200, 4.0)
}
kernel b(y: *f32[5000], out z: *f32[5000]) grid(10) {
  o = program_id(0) * 512 + arange(0, 512)
  store(z + o, load(y + o, mask=o < 5000), mask=o < 5000)
}
)";
  std::string conflict = src + R"(kernel c(out w: *f32[5000]) grid(9) {
  p = program_id(0)
  o = p * 512 + arange(0, 256)
  store(w + o, 1.0)
  store(w + o + 128, 2.0)
  store(w + o - 200, 5.0, mask=p == 1)
}
)";
  for (Order order : {Order::Sequential, Order::Reverse, Order::Shuffle}) {
    InterpOptions opt;
    opt.keep_going = true;
    opt.order = order;
    CHECK(same_tile("<spans>", src, {}, opt) == 10);
    CHECK(same_tile("<spans-conflict>", conflict, {}, opt) == 11);
    opt.keep_going = false;
    CHECK(same_tile("<spans-conflict>", conflict, {}, opt) == 1);
    // Two threads: the same buffers and findings (reported in an order that may vary).
    opt.keep_going = true;
    opt.threads = 2;
    Module m = parse_tile(Sources::add("<spans-2t>", src));
    Bindings b = bind_params(m, {});
    verify_module(m, b);
    Outcome slow = run_mode(m, b, 7, false, opt), fast = run_mode(m, b, 7, true, opt);
    for (size_t i = 0; i < slow.bufs.list.size(); ++i) CHECK(slow.bufs.list[i].bytes == fast.bufs.list[i].bytes);
    auto sorted = [](const RunReport& r) {
      std::vector<std::string> v;
      for (const Finding& f : r.findings) v.push_back(f.message);
      std::sort(v.begin(), v.end());
      return v;
    };
    CHECK(fast.rep.findings_count == 10);
    CHECK(sorted(slow.rep) == sorted(fast.rep));
  }
}

TEST_CASE("sums of products folded as they are multiplied: f32, f64, a broadcast factor, tails, f16 left out") {
  // 3000 lanes in tiles of 1024 (two chunks each; the last tile 952 lanes, the rest `other`): the
  // products of random values round before every add, so any fused multiply-add would show.
  std::string src = R"(kernel t(x: *f32[3000], y: *f32[3000], d: *f64[3000], e: *f64[3000], h: *f16[3000], out s: *f32[8], out sd: *f64[3]) grid(3) {
  p = program_id(0)
  o = p * 1024 + arange(0, 1024)
  m = o < 3000
  a = load(x + o, mask=m, other=0.0)
  b = load(y + o, mask=m, other=-0.0)
  store(s + p, sum(a * b, axis=0))
  store(s + 3 + p, sum((a + 1.0) * 3.0, axis=0))
  da = load(d + o, mask=m, other=0.0)
  store(sd + p, sum(da * load(e + o, mask=m, other=0.0), axis=0))
  hh = load(h + o, mask=m, other=0.0)
  store(s + 6 + p % 2, sum(hh * hh, axis=0).to(f32), mask=p < 2)
}
)";
  for (InterpOptions opt : {InterpOptions{}, InterpOptions{.threads = 2}}) CHECK(same_tile("<mul-sum>", src, {}, opt) == 0);
}

TEST_CASE("offsets, masks and pointers known without their tiles: scalar loads in them are evaluated once") {
  // Scalar loads out of bounds (findings, read as 0 with keep_going) inside offsets whose i64
  // widening wraps (no sequence), a comparison that wraps (no prefix), offsets, a prefix mask, an
  // inline offsets expression whose range fails (its tile is then made), and a mask of a column
  // and a row whose load takes the tile path (a broadcast `other`).
  std::string src = R"(kernel t(k: *i32[2], x: *f32[64], a: *f32[8, 8], out z: *f32[64], out w: *f32[8, 8], out qs: *i64[2], out u: *f32[64],
         hi: i32 = 2147483640) grid(2) {
  q = load(k + 15) + (hi + arange(0, 32)).to(i64)
  store(qs + program_id(0), sum(q, axis=0))
  hh = hi + arange(0, 32)
  mm = load(k + 13) > hh
  store(u + program_id(0) * 32 + arange(0, 32), 1.0, mask=mm)
  o = load(k + program_id(0) * 5) + arange(0, 32)
  m = arange(0, 32) < load(k + 3) + 20
  store(z + o, load(x + (load(k + 7) + arange(0, 32) + 40), mask=m), mask=m)
  store(z + 32 + arange(0, 32), load(x + arange(0, 32), mask=arange(0, 32) < load(k + 9) + 100))
  r = arange(0, 8)
  t = load(a + r[:, None] * 8 + r[None, :], mask=(r[:, None] < load(k + 11) + 6) & (r[None, :] < 8), other=r[None, :].to(f32))
  store(w + r[:, None] * 8 + r[None, :], t, mask=program_id(0) == 0)
}
)";
  InterpOptions kg;
  kg.keep_going = true;
  CHECK(same_tile("<once>", src, {}, kg) > 0);
}

// RunMemory (state kept across runs of one module): each run with it, with runtime values, order of
// runs and thread counts changing between runs, leaves the same buffers and the same findings as a
// run without it; a second module passed to the same memory too.
TEST_CASE("RunMemory: runs that keep state between them equal fresh runs, findings included") {
  const char* gather = R"(kernel fwd(t: *f32[8, 32], out y: *f32[64, 32], n: i32 = 64) grid(4, 2) {
  m = program_id(0) * 16 + arange(0, 16)
  c = program_id(1) * 16 + arange(0, 16)
  ids = (m * 5) % 8
  mask = expand_dims(m < n, 1) && expand_dims(c < 32, 0)
  v = load(t + expand_dims(ids, 1) * 32 + expand_dims(c, 0), mask)
  store(y + expand_dims(m, 1) * 32 + expand_dims(c, 0), v * 2.0, mask)
}
)";
  const char* scatter = R"(kernel bwd(g: *f32[64, 32], inout w: *f32[8, 32], n: i32 = 64) grid(4, 2) {
  m = program_id(0) * 16 + arange(0, 16)
  c = program_id(1) * 16 + arange(0, 16)
  ids = (m * 3) % 8
  mask = expand_dims(m < n, 1) && expand_dims(c < 32, 0)
  v = load(g + expand_dims(m, 1) * 32 + expand_dims(c, 0), mask)
  atomic_add(w + expand_dims(ids, 1) * 32 + expand_dims(c, 0), v, mask=mask)
}
)";
  // write-write when n != 64 makes two instances store the same elements (each its own values);
  // none otherwise
  const char* overlap = R"(kernel ww(x: *f32[256], out z: *f32[256], n: i32 = 64) grid(4) {
  offs = (program_id(0) * n + arange(0, 64)) % 256
  store(z + offs, load(x + offs) + 1.0 + program_id(0).to(f32))
}
)";
  // read-write between instances when n is 1 (each loads its neighbour's first element)
  const char* shift = R"(kernel shift(inout z: *f32[128], n: i32 = 0) grid(2) {
  r = program_id(0) * 64 + arange(0, 64)
  store(z + r, r.to(f32))
  v = load(z + (r + n) % 128)
  store(z + r, v + 1.0)
}
)";
  struct Case {
    const char* name;
    const char* src;
    std::vector<const char*> ns;
  };
  std::vector<Case> cases = {{"gather.tile", gather, {"64", "40", "64", "1"}},
                             {"scatter.tile", scatter, {"64", "37", "64"}},
                             {"ww.tile", overlap, {"64", "80", "64", "48"}},
                             {"shift.tile", shift, {"0", "1", "0", "1"}}};
  std::vector<Module> modules;
  for (const Case& k : cases) {
    modules.push_back(parse_tile(Sources::add(k.name, k.src)));
    verify_module(modules.back(), bind_params(modules.back(), {}));  // once, as a compiled launch is; runtime values bind per run
  }
  auto outcome = [](const Module& m, const Bindings& b, InterpOptions opt) {
    Outcome o;
    o.bufs = make_buffers(m, b, 11);
    std::ostringstream os;
    opt.out = &os;
    o.rep = run_module(m, b, o.bufs, opt);
    o.out = os.str();
    return o;
  };
  int64_t findings = 0;
  for (bool fast : {true, false})
    for (Sanitize san : {Sanitize::All, Sanitize::None}) {
      RunMemory mem;  // one for every run below: modules switch too
      for (size_t ci = 0; ci < cases.size(); ++ci)
        for (size_t ri = 0; ri < cases[ci].ns.size(); ++ri)
          for (int threads : {1, 2, 1}) {
            const Module& m = modules[ci];
            const std::string n = cases[ci].ns[ri];
            std::string name = cases[ci].name;
            CAPTURE(name);
            CAPTURE(n);
            CAPTURE(threads);
            CAPTURE(fast);
            Bindings b = bind_params(m, {{"n", n}});
            InterpOptions opt;
            opt.fast = fast;
            opt.sanitize = san;
            opt.threads = threads;
            Outcome fresh = outcome(m, b, opt);
            opt.memory = &mem;
            Outcome kept = outcome(m, b, opt);
            // On two threads atomics add in either order, and the planted races (and the findings
            // that stop a run) land as the threads meet them: such runs are not compared bit for bit.
            const bool racy = ci == 1 || (ci == 2 && n != "64") || (ci == 3 && n == "1");
            if (threads > 1 && racy) continue;
            REQUIRE(fresh.bufs.list.size() == kept.bufs.list.size());
            for (size_t i = 0; i < fresh.bufs.list.size(); ++i) CHECK(fresh.bufs.list[i].bytes == kept.bufs.list[i].bytes);
            CHECK(fresh.rep.findings_count == kept.rep.findings_count);
            CHECK(fresh.rep.instances == kept.rep.instances);
            REQUIRE(fresh.rep.findings.size() == kept.rep.findings.size());
            for (size_t i = 0; i < fresh.rep.findings.size(); ++i) CHECK(fresh.rep.findings[i].message == kept.rep.findings[i].message);
            findings += kept.rep.findings_count;
            if (san == Sanitize::All && threads == 1 && fast) {  // the planted conflicts are found with kept state too
              CHECK(kept.rep.findings_count == (racy && ci != 1 ? 1 : 0));
            }
          }
    }
  CHECK(findings > 0);
}

// Stores of gathered rows (a pointer of rows plus columns) into a buffer whose conflicts are tracked
// as spans: on one thread the rows of such a store are claimed together when they are ascending,
// disjoint and overlap no earlier span; otherwise row by row. Both ways give the same buffers and
// findings as the lane-by-lane path: rows in order (k = 1; rows of 41 elements, so that row 49's
// last 8 columns cross the spans' shard boundary at element 2048), out of order within an instance
// (k = 3), two instances storing the same row (k = 2: write-write), every row the same (k = 0), and
// a second store of the same rows by the same instance (no conflict).
TEST_CASE("gathered-row stores claimed together: the same buffers and findings as lane by lane") {
  std::string src = R"(kernel rows(w: *f32[16, 40], out y: *f32[80, 41], k: i32 = 1, again: i32 = 0) grid(10, 5) {
  m = program_id(0) * 8 + arange(0, 8)
  c = program_id(1) * 8 + arange(0, 8)
  v = load(w + (m % 16)[:, None] * 40 + c[None, :])
  store(y + ((m * k) % 80 * 41)[:, None] + c[None, :], v)
  if again > 0 {
    store(y + ((m * k) % 80 * 41)[:, None] + c[None, :], v * 2.0)
  }
}
)";
  for (const char* k : {"1", "3", "2", "0"})
    for (const char* again : {"0", "1"})
      for (bool keep_going : {false, true}) {
        CAPTURE(k);
        CAPTURE(again);
        CAPTURE(keep_going);
        int64_t found = same_tile("<rows>", src, {{"k", k}, {"again", again}}, one_thread(keep_going));
        CHECK((found > 0) == (std::string(k) == "2" || std::string(k) == "0"));
      }
}

TEST_CASE("2-d outer masks held unmade when all ones or all zeros: loads, stores, atomics, other readers, findings") {
  // mask = mm[:, None] & mn[None, :] named once and used by a gathered load, a store and an atomic
  // (as a kernel read from TTIR names it): interior instances have every lane on, edge instances a
  // partial mask (made as a tile), the last row of instances and `r0` give all-zero masks; `use`
  // reads the mask in arithmetic too (the lazy slot made for that reader); n beyond y's rows plants
  // rows that wrap onto rows another instance stores, `dup` makes rows of y stored by two instances
  // (conflicts: each instance adds its pid to what it stores).
  std::string src = R"(kernel om(w: *f32[40, 24], ids: *i64[64], out y: *f32[64, 24], inout acc: *f32[40, 24],
          n: i32 = 64, r0: i32 = 0, use: i32 = 0, dup: i32 = 0) grid(9, 3) {
  om = program_id(0) * 8 + arange(0, 8)
  mm = om < n
  mm2 = om >= r0
  idx = load(ids + om % 64, mask=mm, other=0)
  on = program_id(1) * 8 + arange(0, 8)
  mask = (mm & mm2)[:, None] & (on < 24)[None, :]
  v = load(w + ((idx % 40 + 40) % 40)[:, None] * 24 + on[None, :], mask=mask, other=0.0)
  if use > 0 {
    v = where(mask, v * 2.0, -1.0)
  }
  store(y + ((om % (64 - 32 * dup)) * 24)[:, None] + on[None, :], v + program_id(0).to(f32), mask=mask)
  atomic_add(acc + ((idx % 40 + 40) % 40)[:, None] * 24 + on[None, :], v, mask=mask)
}
)";
  for (std::string n : {"64", "60", "70"})
    for (std::string r0 : {"0", "5", "100"})
      for (std::string use : {"0", "1"})
        for (std::string dup : {"0", "1"}) {
          CAPTURE(n);
          CAPTURE(r0);
          CAPTURE(use);
          CAPTURE(dup);
          int64_t found = same_tile("<om>", src, {{"n", n}, {"r0", r0}, {"use", use}, {"dup", dup}}, one_thread(true));
          const bool oob = n == "70" && r0 != "100";
          CHECK((found > 0) == (oob || (dup == "1" && r0 != "100")));
        }
}
