// Interpreter unit tests: addresses (int_to_ptr, ptr_to_int), tiles of rank above 4, permute.
#include <doctest/doctest.h>

#include "interp_test_util.h"

using namespace dtsim;
using namespace dtsim::test;

namespace {

// Kernel `addrs` writes the address of every element of x and y (in one i64 buffer); kernel `via`
// reads them back through int_to_ptr (the BODY lines) into z.
std::unique_ptr<TileRun> through_addresses(const std::string& name, const std::string& body) {
  std::string src =
      "kernel addrs(x: *f32[16], y: *f32[16], scratch a: *i64[32]) grid(1) {\n"
      "  r = arange(0, 16)\n"
      "  store(a + r, ptr_to_int(x + r))\n"
      "  store(a + 16 + r, ptr_to_int(y + r))\n"
      "}\n"
      "kernel via(scratch a: *i64[32], out z: *f32[16]) grid(1) {\n"
      "  r = arange(0, 16)\n" +
      body + "}\n";
  return run_tile(name, src);
}

}  // namespace

TEST_CASE("ptr_to_int gives the element's address; int_to_ptr points back into its buffer") {
  auto run = through_addresses("<addr>", "  p = int_to_ptr(load(a + 15 - r), f32)\n  store(z + r, load(p) + load(int_to_ptr(load(a + 16), f32)))\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  const Buffer* x = run->bufs.find("x");
  const Buffer* a = run->bufs.find("a");
  CHECK(a->as<int64_t>()[3] == static_cast<int64_t>(reinterpret_cast<uintptr_t>(x->data())) + 12);
  for (int i = 0; i < 16; ++i) CHECK(run->at("z", i) == doctest::Approx(run->at("x", 15 - i) + run->at("y", 0)));
}

TEST_CASE("int_to_ptr: a null lane is out of bounds only when accessed") {
  auto ok = through_addresses("<null>", "  v = where(r < 8, load(a + r), 0)\n  store(z + r, load(int_to_ptr(v, f32), mask=r < 8, other=2.0))\n");
  INFO(ok->messages());
  REQUIRE(ok->rep.findings_count == 0);
  CHECK(ok->at("z", 3) == ok->at("x", 3));
  CHECK(ok->at("z", 12) == 2.0);
  auto bad = through_addresses("<null2>", "  v = where(r < 8, load(a + r), 0)\n  store(z + r, load(int_to_ptr(v, f32)))\n");
  REQUIRE(bad->rep.findings_count >= 1);
  CHECK(bad->has(Finding::OutOfBounds));
  CHECK(bad->messages().find("out-of-bounds load from 'x' through a null pointer (int_to_ptr of address 0)") != std::string::npos);
}

TEST_CASE("int_to_ptr faults, located, on an address in no buffer, another type, misalignment") {
  // an address in no buffer is a pointer like any other until it is accessed (its bits come back
  // through ptr_to_int); the access is out of bounds, naming the address; a misaligned one faults
  auto kept = through_addresses("<kept>", "  store(a + r, ptr_to_int(int_to_ptr(load(a + r) * 0 + 8 + r * 4, f32)))\n");
  INFO(kept->messages());
  REQUIRE(kept->rep.findings_count == 0);
  CHECK(kept->bufs.find("a")->as<int64_t>()[3] == 20);
  auto none = through_addresses("<none>", "  store(z + r, load(int_to_ptr(load(a + r) * 0 + 8, f32)))\n");
  REQUIRE(none->rep.findings_count == 1);
  CHECK(none->rep.findings[0].kind == Finding::OutOfBounds);
  INFO(none->messages());
  CHECK(none->messages().find("<none>:8:3: error: out-of-bounds load from 'x' through address 0x8, which is in no buffer of this run (int_to_ptr)") != std::string::npos);
  auto odd = through_addresses("<odd>", "  store(z + r, load(int_to_ptr(load(a + r) * 0 + 7, f32)))\n");
  REQUIRE(odd->rep.findings_count == 1);
  CHECK(odd->messages().find("int_to_ptr(): address 0x7 is in no buffer of this run and not aligned to f32 elements (lane 0)") != std::string::npos);
  auto type = through_addresses("<type>", "  store(z + r, load(int_to_ptr(load(a + r), i32)).to(f32))\n");
  REQUIRE(type->rep.findings_count == 1);
  CHECK(type->messages().find("is in buffer 'x' of f32 elements, not i32") != std::string::npos);
  auto mis = through_addresses("<mis>", "  store(z + r, load(int_to_ptr(load(a + r) + 2, f32)))\n");
  REQUIRE(mis->rep.findings_count == 1);
  CHECK(mis->messages().find("is not aligned to an element of 'x'") != std::string::npos);
}

TEST_CASE("the sanitizer tracks stores through addresses: two instances writing one element conflict") {
  auto run = run_tile("<conf>",
                      "kernel addrs(inout x: *f32[16], scratch a: *i64[1]) grid(1) {\n"
                      "  store(a, ptr_to_int(x))\n"
                      "}\n"
                      "kernel via(scratch a: *i64[1]) grid(2) {\n"
                      "  p = int_to_ptr(load(a), f32)\n"
                      "  store(p + arange(0, 4), program_id(0).to(f32))\n"
                      "}\n");
  CHECK(run->has(Finding::WriteWrite));
}

TEST_CASE("tiles of rank above 4: reshape, broadcast, elementwise, reductions") {
  // [2]*10 as tl.sort's bitonic network uses it: an xor of partner lanes, then a sum back to [1024]
  auto run = run_tile("<rank10>",
                      "kernel t(x: *i32[1024], out z: *i32[1024], out s: *i32[2]) grid(1) {\n"
                      "  r = arange(0, 1024)\n"
                      "  v = reshape(load(x + r), [2, 2, 2, 2, 2, 2, 2, 2, 2, 2])\n"
                      "  w = v + reshape(r, [2, 2, 2, 2, 2, 2, 2, 2, 2, 2])\n"
                      "  m = sum(w, axis=4)\n"
                      "  b = broadcast_to(expand_dims(m, 4), [2, 2, 2, 2, 2, 2, 2, 2, 2, 2])\n"
                      "  store(z + r, reshape(b - w, [1024]))\n"
                      "  store(s + arange(0, 2), sum(reshape(w, [2, 512]), axis=1))\n"
                      "}\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  auto w = [&](int i) { return run->at("x", i) + i; };
  for (int i = 0; i < 1024; ++i) {
    int partner = i ^ 32;  // axis 4 of [2]*10 is bit 5 of the flat index
    CHECK(run->at("z", i) == w(partner));
  }
  double lo = 0;
  for (int i = 0; i < 512; ++i) lo += w(i);
  CHECK(run->at("s", 0) == lo);
}

TEST_CASE("permute: result axis i is the operand's axis order[i], any rank") {
  auto run = run_tile("<perm>",
                      "kernel t(out u: *i32[32], out w: *i32[32]) grid(1) {\n"
                      "  r = arange(0, 32)\n"
                      "  v = reshape(r, [2, 4, 4])\n"
                      "  store(w + r, reshape(permute(v, [2, 0, 1]), [32]))\n"
                      "  store(u + r, reshape(permute(reshape(r, [2, 2, 2, 4]), [3, 1, 0, 2]), [32]))\n"
                      "}\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  // out[k, i, j] = v[i, j, k] = i*16 + j*4 + k, flat (k*2 + i)*4 + j
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) CHECK(run->at("w", (k * 2 + i) * 4 + j) == i * 16 + j * 4 + k);
  // out[a, b, c, d] = in[c, b, d, a] of in[p, q, s, t] = p*16 + q*8 + s*4 + t
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) CHECK(run->at("u", ((a * 2 + b) * 2 + c) * 2 + d) == c * 16 + b * 8 + d * 4 + a);
  CHECK_THROWS_WITH_AS(run_tile("<perm2>", "kernel t(out z: *i32[8]) grid(1) {\n  v = permute(reshape(arange(0, 8), [2, 4]), [0, 0])\n}\n"),
                       doctest::Contains("permute() needs a permutation of the 2 axes"), UserError);
}

TEST_CASE("where() of pointers into two buffers: a condition uniform over the tile picks one; lanes that differ fault") {
  // xformers' tiled matmul picks each operand's array with tl.where(pid_m < grid_m1, A11, A21)
  auto run = run_tile("<pick>",
                      "kernel pick(x: *f32[16], y: *f32[16], out z: *f32[32]) grid(2) {\n"
                      "  pid = program_id(0)\n"
                      "  r = arange(0, 16)\n"
                      "  p = where(pid == 0, x, y)\n"
                      "  q = where(r + pid >= 0, y + r, x + r)\n"
                      "  store(z + pid * 16 + r, load(p + r) + 2.0 * load(q))\n"
                      "}\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  for (int i = 0; i < 16; ++i) {
    CHECK(run->at("z", i) == doctest::Approx(run->at("x", i) + 2.0 * run->at("y", i)));
    CHECK(run->at("z", 16 + i) == doctest::Approx(3.0 * run->at("y", i)));
  }
  auto mixed = run_tile("<mixed>",
                        "kernel mixed(x: *f32[16], y: *f32[16], out z: *f32[16]) grid(1) {\n"
                        "  r = arange(0, 16)\n"
                        "  store(z + r, load(where(r < 8, x + r, y + r)))\n"
                        "}\n");
  INFO(mixed->messages());
  REQUIRE(mixed->rep.findings_count == 0);
  for (int i = 0; i < 16; ++i) CHECK(mixed->at("z", i) == (i < 8 ? mixed->at("x", i) : mixed->at("y", i)));
}

TEST_CASE("one pointer tile into several buffers: loads, stores, atomics, compares and addresses lane by lane") {
  // lanes 0..7 address x[0], x[2], ..., x[14]; lanes 8..15 y[0], y[2], ..., y[14]
  auto two = through_addresses("<two>",
                               "  p = int_to_ptr(load(a + r * 2), f32)\n"
                               "  s = int_to_ptr(load(a), f32)\n"
                               "  store(z + r, load(p) + where(p == int_to_ptr(load(a + r * 2), f32), 100.0, 0.0) + where(p != s, 0.0, 1000.0))\n"
                               "  store(a + r, ptr_to_int(p + 1))\n");
  INFO(two->messages());
  REQUIRE(two->rep.findings_count == 0);
  const Buffer* x = two->bufs.find("x");
  const Buffer* y = two->bufs.find("y");
  const int64_t xa = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x->data())), ya = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y->data()));
  for (int i = 0; i < 16; ++i) {
    CHECK(two->at("z", i) == doctest::Approx((i < 8 ? two->at("x", 2 * i) : two->at("y", 2 * (i - 8))) + 100.0 + (i == 0 ? 1000.0 : 0.0)));
    CHECK(two->bufs.find("a")->as<int64_t>()[i] == (i < 8 ? xa + 8 * i + 4 : ya + 8 * (i - 8) + 4));
  }
  // stores and atomics split by buffer; old values of each lane from its own buffer
  auto run = run_tile("<multi>",
                      "kernel t(inout x: *i32[8], inout y: *i32[8], out z: *i32[8]) grid(1) {\n"
                      "  r = arange(0, 8)\n"
                      "  p = where(r % 2 == 0, x + r, y + r)\n"
                      "  store(p, r * 10)\n"
                      "  z0 = atomic_add(p, 1)\n"
                      "  store(z + r, z0)\n"
                      "}\n");
  INFO(run->messages());
  REQUIRE(run->rep.findings_count == 0);
  for (int i = 0; i < 8; ++i) {
    CHECK(run->at("z", i) == 10 * i);
    CHECK(run->at(i % 2 == 0 ? "x" : "y", i) == 10 * i + 1);
  }
  // the sanitizer sees each lane's buffer: two instances storing one element of y conflict; an
  // unmasked lane past y's end is out of bounds of y
  auto conf = run_tile("<mconf>",
                       "kernel t(inout x: *f32[8], inout y: *f32[8]) grid(2) {\n"
                       "  r = arange(0, 8)\n"
                       "  store(where(r < 4, x + r + program_id(0) * 4, y + r), program_id(0).to(f32))\n"
                       "}\n");
  CHECK(conf->has(Finding::WriteWrite));
  INFO(conf->messages());
  CHECK(conf->messages().find("instances [0] and [1] both store y[4]") != std::string::npos);
  auto oob = run_tile("<moob>",
                      "kernel t(x: *f32[8], y: *f32[8], out z: *f32[8]) grid(1) {\n"
                      "  r = arange(0, 8)\n"
                      "  store(z + r, load(where(r < 4, x + r, y + r + 1)))\n"
                      "}\n");
  REQUIRE(oob->rep.findings_count == 1);
  CHECK(oob->messages().find("out-of-bounds load from 'y'") != std::string::npos);
}

TEST_CASE("a buffer's slack: accesses past its end inside the caller's memory run, once a warning per statement") {
  // x is a view of 5 elements over memory of 8 (Buffer::slack 3, as python/dtsim binds a view whose
  // storage goes on): the load of x[5] and the store to x[7] run and warn; x[8] is out of bounds
  const std::map<std::string, std::string> srcs = {
      {"k",
       "kernel k(inout x: *f32[5], out z: *f32[8]) grid(2) {\n"
       "  r = arange(0, 4)\n"
       "  store(z + program_id(0) * 4 + r, load(x + 2 + r, mask=r < 4))\n"
       "  store(x + 7 - program_id(0), 9.0)\n"
       "}\n"},
      {"past",
       "kernel past(inout x: *f32[5], out z: *f32[4]) grid(1) {\n"
       "  r = arange(0, 4)\n"
       "  store(z + r, load(x + 5 + r))\n"
       "}\n"}};
  for (const auto& [kernel, src] : srcs) {
    std::vector<float> mem = {0, 1, 2, 3, 4, 5, 6, 7};
    auto run = std::make_unique<TileRun>();
    run->m = parse_tile(Sources::add("<slack_" + kernel + ">", src));
    run->b = bind_params(run->m, {});
    verify_module(run->m, run->b);
    Buffers preset;
    preset.list.push_back(Buffer::view("x", Scalar::F32, {5}, BufIO::InOut, mem.data()));
    preset.list.back().slack = 3;
    preset.list.back().defined = true;
    run->bufs = make_buffers(run->m, run->b, 1, std::move(preset));
    run->rep = run_module(run->m, run->b, run->bufs, InterpOptions{});
    INFO(run->messages());
    if (kernel == "k") {
      REQUIRE(run->rep.findings_count == 0);
      for (int i = 0; i < 8; ++i) CHECK(run->at("z", i) == 2 + i % 4);
      CHECK(mem[6] == 9.0f);
      CHECK(mem[7] == 9.0f);
      REQUIRE(run->rep.warnings.size() == 2);  // one per statement, though two instances ran each
      CHECK(run->rep.warnings[0].message.find("warning: load from 'x' past the end of the view it was given") != std::string::npos);
      CHECK(run->rep.warnings[0].flat_index == 5);
      CHECK(run->rep.warnings[1].message.find("warning: store to 'x' past the end") != std::string::npos);
    } else {
      REQUIRE(run->rep.findings_count == 1);  // x[8]: past the memory too
      CHECK(run->rep.findings[0].flat_index == 8);
      CHECK(run->rep.warnings.size() == 1);  // x[5..7] ran
    }
  }
}
