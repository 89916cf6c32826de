// Interpreter unit tests: addresses (int_to_ptr, ptr_to_int) and tiles of rank above 4.
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
}

TEST_CASE("int_to_ptr faults, located, on an address in no buffer, two buffers, another type, misalignment") {
  auto none = through_addresses("<none>", "  store(z + r, load(int_to_ptr(load(a + r) * 0 + 8, f32)))\n");
  REQUIRE(none->rep.findings_count == 1);
  CHECK(none->rep.findings[0].kind == Finding::Fault);
  CHECK(none->messages().find("<none>:8:21: error: int_to_ptr(): address 0x8 is in no buffer of this run (lane 0)") != std::string::npos);
  auto two = through_addresses("<two>", "  store(z + r, load(int_to_ptr(load(a + r * 2), f32)))\n");
  REQUIRE(two->rep.findings_count == 1);
  CHECK(two->messages().find("point into two buffers, 'x' and 'y'") != std::string::npos);
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
                      "  store(p + arange(0, 4), 1.0)\n"
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
