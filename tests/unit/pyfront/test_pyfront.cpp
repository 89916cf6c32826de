// Triton frontend unit tests: the tokenizer's INDENT/DEDENT structure and literals, the parser's
// f-strings and skipped host code, and the lowering's compile-time folding, Python semantics on
// constexprs, entry points and located errors.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "ir/Printer.h"
#include "pyfront/PyAst.h"
#include "pyfront/PyLexer.h"
#include "pyfront/Triton.h"

using namespace dtsim;

namespace {

std::vector<py::Token> lex(const std::string& text) { return py::lex_python(Sources::add("<test.py>", text)); }

std::string kinds(const std::vector<py::Token>& toks) {
  std::string s;
  for (const auto& t : toks) {
    switch (t.kind) {
      case py::Tok::Name: s += "N"; break;
      case py::Tok::Int: s += "I"; break;
      case py::Tok::Float: s += "F"; break;
      case py::Tok::String: s += "S"; break;
      case py::Tok::Op: s += t.text; break;
      case py::Tok::Newline: s += ";"; break;
      case py::Tok::Indent: s += "{"; break;
      case py::Tok::Dedent: s += "}"; break;
      case py::Tok::Eof: s += "$"; break;
    }
  }
  return s;
}

// Writes `text` to a temporary .py file and lowers it.
struct PyFile {
  std::string path;
  explicit PyFile(const std::string& text) {
    path = (std::filesystem::temp_directory_path() / ("dtsim_pyfront_" + std::to_string(counter()++) + ".py")).string();
    std::ofstream(path) << text;
  }
  ~PyFile() { std::remove(path.c_str()); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

TritonLaunch launch(std::map<std::string, std::string> args = {}) {
  TritonLaunch l;
  l.args = std::move(args);
  l.buffers = {TritonBuffer{"x_ptr", Scalar::F32, {64}, false}, TritonBuffer{"z_ptr", Scalar::F32, {64}, false}};
  l.grid = {"1"};
  return l;
}

std::string lowered(const std::string& body, std::map<std::string, std::string> args = {}) {
  PyFile f("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, z_ptr, C: tl.constexpr = -7):\n" + body);
  return print_module(lower_triton_file(f.path, launch(std::move(args))).module);
}

std::string error_of(const std::string& body) {
  try {
    lowered(body);
  } catch (const UserError& e) {
    return format_loc(e.loc).substr(format_loc(e.loc).find(':') + 1) + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("indentation becomes INDENT/DEDENT; blank and comment lines vanish") {
  CHECK(kinds(lex("def f(a):\n    x = a\n\n    # note\n    if x:\n        y = 1\n    z = 2\n")) ==
        "NN(N):;{N=N;NN:;{N=I;}N=I;}$");
}

TEST_CASE("brackets and backslashes continue lines") {
  CHECK(kinds(lex("x = f(a,\n      b)\ny = 1 + \\\n    2\n")) == "N=N(N,N);N=I+I;$");
}

TEST_CASE("literals: numbers, strings with prefixes, docstrings") {
  auto t = lex("0x1F 1_000 2.5e-3 .5 r'a\\n' f\"v={x}\" '''doc\nmore'''\n");
  CHECK(t[0].ival == 31);
  CHECK(t[1].ival == 1000);
  CHECK(t[2].fval == doctest::Approx(2.5e-3));
  CHECK(t[3].fval == doctest::Approx(0.5));
  CHECK(t[4].text == "a\\n");
  CHECK(t[5].fstring);
  CHECK(t[6].text == "doc\nmore");
  CHECK(lex("99999999999999999999999\n")[0].big);
}

TEST_CASE("lexer errors are located") {
  try {
    lex("x = 'abc\n");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.loc.line == 1);
    CHECK(e.loc.col == 5);
  }
  try {
    lex("if a:\n        x = 1\n    y = 2\n");
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("unindent") != std::string::npos);
  }
}

TEST_CASE("f-strings split into literal parts and fields; host code is skipped") {
  py::PyModule m = py::parse_python(Sources::add("<f.py>",
      "class Host:\n    x = {1: 2}\nif __name__ == '__main__':\n    run()\ns = f'a {x} b {y!r:>4} c'\n"));
  REQUIRE(m.body.size() == 3);
  CHECK(m.body[0]->kind == py::NK::Other);
  CHECK(m.body[1]->kind == py::NK::Other);
  const py::Node& f = *m.body[2]->kids[1];
  REQUIRE(f.kind == py::NK::FStr);
  CHECK(f.parts == std::vector<std::string>{"a ", " b ", " c"});
  CHECK(f.kids.size() == 2);
}

TEST_CASE("constexpr branches fold; runtime branches stay") {
  std::string ir = lowered("    if C < 0:\n        tl.store(z_ptr, 1.0)\n    else:\n        tl.store(z_ptr, 2.0)\n");
  CHECK(ir.find("if") == std::string::npos);
  CHECK(ir.find("store(z_ptr, 1.0)") != std::string::npos);
  ir = lowered("    if tl.program_id(0) < 1:\n        tl.store(z_ptr, 1.0)\n");
  CHECK(ir.find("if program_id(0) < 1 {") != std::string::npos);
}

TEST_CASE("compile-time // and % are Python's; runtime ones are C's") {
  std::string ir = lowered("    tl.store(z_ptr, C // 2)\n    tl.store(z_ptr + 1, C % 2)\n    p = tl.program_id(0) - 7\n"
                           "    tl.store(z_ptr + 2, p // 2)\n");
  CHECK(ir.find("store(z_ptr, -4)") != std::string::npos);
  CHECK(ir.find("store(z_ptr + 1, 1)") != std::string::npos);
  CHECK(ir.find("p // 2") != std::string::npos);
}

TEST_CASE("static_range unrolls; helpers inline; constexpr arguments override defaults") {
  std::string ir = lowered("    for i in tl.static_range(3):\n        tl.store(z_ptr + i, i)\n", {{"C", "5"}});
  CHECK(ir.find("store(z_ptr + 2, 2)") != std::string::npos);
  CHECK(ir.find("C: constexpr = 5") != std::string::npos);
}

TEST_CASE("static_range inside a runtime loop; compile-time names bound outside a runtime loop stay fixed") {
  std::string ir = lowered("    acc = 0.0\n    for j in range(tl.program_id(0)):\n        for i in tl.static_range(2):\n"
                           "            acc += i\n    tl.store(z_ptr, acc)\n");
  CHECK(ir.find("acc += 0") != std::string::npos);
  CHECK(ir.find("acc += 1") != std::string::npos);
  CHECK(error_of("    m = 'a'\n    for j in range(tl.program_id(0)):\n        m = 'b'\n") ==
        "8:9: 'm' is a compile-time value and cannot be changed inside a runtime if/for/while");
}

TEST_CASE("an early return is an IR return; a name bound in both branches of a runtime if lives on") {
  std::string ir = lowered("    pid = tl.program_id(0)\n    if pid >= 1:\n        return\n    x = tl.load(x_ptr + pid)\n"
                           "    if x > 0:\n        y = x\n    else:\n        y = -x\n    tl.store(z_ptr + pid, y)\n");
  CHECK(ir.find("if pid >= 1 {\n    return\n  }") != std::string::npos);
  CHECK(ir.find("y = 0.to(f32)\n  if x > 0 {\n    y = x\n  } else {\n    y = -x\n  }") != std::string::npos);
}

TEST_CASE("while on a runtime condition is an IR while; compile-time trips unroll first") {
  std::string ir = lowered("    i = 0\n    while i < tl.program_id(0):\n        i += 1\n    tl.store(z_ptr + i, 1.0)\n");
  CHECK(ir.find("  i = 0\n  while i < program_id(0) {\n    i += 1\n  }\n") != std::string::npos);
  // The first trip's condition is known (0 < 5); the rest depends on the loaded value.
  ir = lowered("    x = 0.0\n    while x < 5:\n        x = x + tl.load(x_ptr)\n    tl.store(z_ptr, x)\n");
  CHECK(ir.find("x = 0.0 + load(x_ptr)") != std::string::npos);
  CHECK(ir.find("while x < 5 {\n    x = x + load(x_ptr)\n  }") != std::string::npos);
  // A compile-time condition still unrolls completely.
  ir = lowered("    i = 0\n    while i < 3:\n        tl.store(z_ptr + i, 1.0)\n        i += 1\n");
  CHECK(ir.find("while") == std::string::npos);
  CHECK(ir.find("store(z_ptr + 2, 1.0)") != std::string::npos);
  CHECK(error_of("    x = tl.load(x_ptr + tl.arange(0, 64))\n    while x < 1.0:\n        x = x * 2.0\n") ==
        "7:11: a while condition must be a scalar, got tensor i1[64] (reduce it, e.g. with tl.max or tl.sum)");
  CHECK(error_of("    m = 'a'\n    while tl.program_id(0) < 0:\n        m = 'b'\n") ==
        "8:9: 'm' is a compile-time value and cannot be changed inside a runtime if/for/while");
}

TEST_CASE("a while condition calling a helper with statements is computed before the loop and at the end of each trip") {
  PyFile f(
      "import triton\nimport triton.language as tl\n\n@triton.jit\ndef more(a, b):\n    d = b - a\n    return d > 0\n\n"
      "@triton.jit\ndef k(x_ptr, z_ptr):\n    i = 0\n    n = tl.load(x_ptr).to(tl.int32)\n    while more(i, n):\n"
      "        i += 2\n    tl.store(z_ptr, i)\n");
  std::string ir = print_module(lower_triton_file(f.path, launch()).module);
  INFO(ir);
  CHECK(ir.find("  d = n - i\n  cond = d > 0\n  while cond {\n    i += 2\n    d_1 = n - i\n    cond = d_1 > 0\n  }\n") !=
        std::string::npos);
}

TEST_CASE("launch options and tl.range(num_stages=) become the kernel's hints") {
  std::string ir = lowered("    for i in tl.range(0, 4, num_stages=5):\n        tl.store(z_ptr + i, 1.0)\n");
  CHECK(ir.find("num_warps(4) num_stages(5)") != std::string::npos);
  ir = lowered("    tl.store(z_ptr, 1.0)\n", {{"num_warps", "8"}, {"num_stages", "2"}});
  CHECK(ir.find("num_warps(8) num_stages(2)") != std::string::npos);
}

TEST_CASE("the entry point is the @triton.jit function no other calls") {
  PyFile f("import triton\nimport triton.language as tl\n@triton.jit\ndef helper(x):\n    return x\n"
           "@triton.jit\ndef main_k(z_ptr):\n    tl.store(z_ptr, helper(1.0))\n");
  CHECK(triton_entry_points(f.path) == std::vector<std::string>{"main_k"});
}

TEST_CASE("tl.dot_scaled: formats and operand types that do not fit are located errors") {
  const std::string a = "    a = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 4 + tl.arange(0, 16)[None, :])\n";
  CHECK(error_of(a + "    c = tl.dot_scaled(a, None, \"e3m2\", a, None, \"bf16\")\n") ==
        "7:9: tl.dot_scaled: lhs format 'e3m2' is not one of e2m1, e4m3, e5m2, bf16, fp16");
  CHECK(error_of(a + "    c = tl.dot_scaled(a, None, \"bf16\", a, None, \"bf16\")\n") ==
        "7:9: tl.dot_scaled: a bf16 lhs must hold bf16 (or its bits as i16), got f32");
  CHECK(error_of(a + "    c = tl.dot_scaled(a.to(tl.int8), None, \"e2m1\", a.to(tl.bfloat16), None, \"bf16\")\n") ==
        "7:9: tl.dot_scaled: the operands' K differ ([16, 32] @ [16, 16], e2m1 unpacked)");
  CHECK(error_of(a + "    c = tl.dot_scaled(a.to(tl.bfloat16), tl.reshape(a.to(tl.int8), (32, 8)), \"bf16\", a.to(tl.bfloat16), None, \"bf16\")\n") ==
        "7:9: tl.dot_scaled: the lhs scale must be [16, K / group] with K = 16, got [32, 8]");
}

TEST_CASE("lowering errors name the .py line and column") {
  CHECK(error_of("    tl.atomic_load(z_ptr)\n") == "6:5: tl.atomic_load is not supported yet");
  CHECK(error_of("    tl.sort(z_ptr)\n") == "6:13: tl.sort() needs a tensor of numbers, got scalar *f32");
  CHECK(error_of("    tl.histogram(z_ptr, 8)\n") == "6:5: tl.histogram() needs a 1-D integer tensor, got *f32");
  CHECK(error_of("    h = tl.histogram(tl.arange(0, 8), 12)\n") == "6:39: tl.histogram(): num_bins must be a power of two of at most 2^20, got 12");
  CHECK(error_of("    h = tl.histogram(tl.arange(0, 8), 2097152)\n") == "6:39: tl.histogram(): num_bins must be a power of two of at most 2^20, got 2097152");
  CHECK(error_of("    h = tl.histogram(tl.arange(0, 8), 8, mask=tl.arange(0, 4) < 2)\n") ==
        "6:47: tl.histogram(): the mask i1[4] does not broadcast to the input i32[8]");
  CHECK(error_of("    tl.gather(tl.arange(0, 8), tl.arange(0, 8), 1)\n") == "6:49: tl.gather(): axis 1 of a rank-1 tensor");
  CHECK(error_of("    o = tl.arange(0, tl.program_id(0))\n") == "6:22: tl.arange() argument 'end' must be a compile-time int, got scalar i32");
}
