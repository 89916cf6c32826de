// libFuzzer target: the debugger's condition and expression parser (--break-if, --print-if, break,
// print, watch), its FILE:LINE[ if COND] specs, and the type check of a parsed condition against a
// small kernel; the same text as a Triton expression (pyfront/DebugExpr.h) against a small .py
// kernel, lowered and evaluated before every statement. UserError is the expected answer to bad text.
#include "fuzz/FuzzUtil.h"
#include "host/Buffers.h"
#include "interp/Interp.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"
#include "pyfront/Triton.h"
#include "repl/Condition.h"

using namespace dtsim;

namespace {

struct Fixture {
  Module m;
  Bindings b;
  std::vector<std::string> names;
  Fixture() {
    int id = Sources::add("<fuzz-kernel>.tile",
                          "kernel k(x: *f32[n], out z: *f32[n], n: i32 = 100, bs: constexpr = 16) grid(cdiv(n, bs)) {\n"
                          "  offs = program_id(0) * bs + arange(0, bs)\n"
                          "  mask = offs < n\n"
                          "  v = load(x + offs, mask)\n"
                          "  for k in range(0, 4) {\n"
                          "    v = v * 2.0\n"
                          "  }\n"
                          "  store(z + offs, v, mask)\n"
                          "}\n");
    m = parse_tile(id);
    b = bind_params(m, {});
    verify_module(m, b);
    names = known_names(m);
  }
};

// A .py kernel: its debugger expressions are Triton expressions.
struct PyFixture {
  Module m;
  Bindings b;
  std::vector<std::string> names;
  int file = -1;
  PyFixture() {
    TritonLaunch launch;
    const std::string path = "fuzz_kernel.py";
    launch.sources[path] =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def k(x_ptr, z_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offs < n\n"
        "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)\n"
        "    acc = x[:, None] * x[None, :]\n"
        "    for kk in range(0, 2):\n"
        "        x = x * 2.0\n"
        "    tl.store(z_ptr + offs, x, mask=mask)\n";
    launch.buffers = {TritonBuffer{"x_ptr", Scalar::F32, {40}, false}, TritonBuffer{"z_ptr", Scalar::F32, {40}, false}};
    launch.args = {{"n", "40"}, {"BLOCK", "16"}};
    launch.grid = {"cdiv(n, BLOCK)"};
    launch.kernel = "k";
    m = lower_triton_file(path, launch).module;
    b = bind_params(m, {});
    verify_module(m, b);
    names = known_names(m);
    file = python_source(m);
  }
};

// Evaluates the condition before every statement of every instance, as --break-if does.
struct EvalHooks : DebugHooks {
  const BoundExpr* be = nullptr;
  void before_stmt(Frame& f, const Stmt&) override {
    (void)be->test(f);
    (void)be->eval(f);
    (void)be->constant(f);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fx;
  static PyFixture pfx;
  std::string text(reinterpret_cast<const char*>(data), size);
  int mark = Sources::add("<fuzz-mark>", "");
  try {
    ExprP c = parse_condition(text, "<fuzz-cond>", fx.names);
    BoundExpr be(c, text);
    be.check_types(fx.m, fx.b);
    EvalHooks hooks;
    hooks.be = &be;
    InterpOptions opt;
    opt.hooks = &hooks;
    Buffers bufs = make_buffers(fx.m, fx.b, 0);
    run_module(fx.m, fx.b, bufs, opt);
  } catch (const UserError&) {
  }
  try {
    for (const std::string& piece : split_top_level(text)) {
      ExprP e = parse_debug_expr(piece, "<fuzz-expr>", fx.names);
      BoundExpr be(e, piece);
      be.check_types(fx.m, fx.b);
    }
  } catch (const UserError&) {
  }
  try {
    BoundExpr be = make_condition(text, "<fuzz-py>", pfx.names, pfx.file);
    be.check_types(pfx.m, pfx.b);
    EvalHooks hooks;
    hooks.be = &be;
    InterpOptions opt;
    opt.hooks = &hooks;
    Buffers bufs = make_buffers(pfx.m, pfx.b, 0);
    run_module(pfx.m, pfx.b, bufs, opt);
  } catch (const UserError&) {
  }
  try {
    LineSpec s = parse_line_spec(text, "--break-at");
    if (!s.cond.empty()) parse_condition(s.cond, "<fuzz-at>", fx.names);
  } catch (const UserError&) {
  }
  Sources::drop_from(mark);
  return 0;
}
