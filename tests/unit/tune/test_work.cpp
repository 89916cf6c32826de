// kernel_work's walk through `while` loops: trips counted when the condition follows from program
// ids and scalars, unknown when it depends on loaded data, and bounded on a loop that never ends.
#include <doctest/doctest.h>

#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "tools/Work.h"

using namespace dtsim;

namespace {
KernelWork work_of(const char* src, int64_t max_steps = 50'000'000) {
  Module m = parse_tile(Sources::add("<work>", src));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  return kernel_work(m.kernels[0], b, max_steps);
}
}  // namespace

TEST_CASE("kernel_work counts the dots of every while trip") {
  // Instance p runs p + 1 trips of a 16x16x16 dot: 1 + 2 + 3 + 4 = 10 dots.
  KernelWork w = work_of(
      "kernel k(a: *f32[16, 16], out c: *f32[16, 16]) grid(4) {\n"
      "  r = arange(0, 16)\n"
      "  t = load(a + r[:, None] * 16 + r[None, :])\n"
      "  acc = zeros([16, 16], f32)\n"
      "  i = 0\n"
      "  while i <= program_id(0) {\n"
      "    acc = dot(t, t, acc)\n"
      "    i += 1\n"
      "  }\n"
      "  store(c + r[:, None] * 16 + r[None, :], acc)\n"
      "}\n");
  CHECK(w.flops_known);
  CHECK(w.dot_flops == 10 * 2.0 * 16 * 16 * 16);
}

TEST_CASE("kernel_work gives up on a data-dependent while condition and on a loop that never ends") {
  // (the walk runs only for kernels with a dot)
  KernelWork w = work_of(
      "kernel k(a: *f32[16, 16], out c: *f32[16, 16]) grid(1) {\n"
      "  r = arange(0, 16)\n"
      "  t = load(a + r[:, None] * 16 + r[None, :])\n"
      "  x = load(a)\n"
      "  while x < 10.0 {\n"
      "    t = dot(t, t)\n"
      "    x = x * 2.0\n"
      "  }\n"
      "  store(c + r[:, None] * 16 + r[None, :], t)\n"
      "}\n");
  CHECK_FALSE(w.flops_known);
  CHECK(w.flops_note.find("a loop condition depends on data") != std::string::npos);
  w = work_of(
      "kernel k(a: *f32[16, 16], out c: *f32[16, 16]) grid(1) {\n"
      "  r = arange(0, 16)\n"
      "  t = load(a + r[:, None] * 16 + r[None, :])\n"
      "  while 1 {\n"
      "  }\n"
      "  store(c + r[:, None] * 16 + r[None, :], dot(t, t))\n"
      "}\n",
      1000);
  CHECK_FALSE(w.flops_known);
  CHECK(w.flops_note.find("too many statements to walk") != std::string::npos);
}
