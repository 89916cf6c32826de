// The compile driver (src/driver): the pass list stopped and resumed at each stage, the frontend
// table's extensions, each --in file read from disk once, and the python3 helper every emitted
// Triton module runs through (with a plain script: no Triton needed).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "driver/Driver.h"
#include "driver/Python.h"
#include "frontend/DtAst.h"
#include "host/Npy.h"
#include "ir/Diag.h"

using namespace dtsim;

namespace {

std::string example(const std::string& name) { return std::string(DTSIM_SOURCE_DIR) + "/examples/" + name; }

std::string temp_dir() {
  char t[] = "/tmp/dtsim-unit-driver-XXXXXX";
  REQUIRE(mkdtemp(t) != nullptr);
  return t;
}

}  // namespace

TEST_CASE("stage names round-trip and the list is in pass order") {
  CHECK(stage_list() == "parse, check, bind-sizes, schedule, lower, verify");
  for (Stage s : kStages) CHECK(stage_named(stage_name(s)) == s);
  CHECK_FALSE(stage_named("optimize").has_value());
  CHECK_FALSE(stage_named("Parse").has_value());
}

TEST_CASE("the frontend table picks the language by extension") {
  CHECK(file_kind_of("a/b.tile") == FileKind::Tile);
  CHECK(file_kind_of("b.dt") == FileKind::Dt);
  CHECK(file_kind_of("k.py") == FileKind::Py);
  CHECK_FALSE(file_kind_of("k.ttir").has_value());  // TTIR comes as text from Python, never by extension
  CHECK(known_extensions() == ".tile, .dt or .py");
  try {
    kind_for_path("kernel.cu");
    FAIL("no error for .cu");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == "cannot tell the language of 'kernel.cu': expected a .tile, .dt or .py file");
  }
}

TEST_CASE("a .dt program stops after each stage and resumes to the same module") {
  LaunchSpec spec;
  spec.args = {{"y_SIZE", "300"}, {"alpha", "2"}};
  Program p = compile(Source{example("add_out.dt"), std::nullopt, std::nullopt}, spec, Stage::Check);
  REQUIRE(p.done == Stage::Check);
  REQUIRE(p.dt);
  CHECK(p.module.kernels.empty());
  CHECK(p.dt->find("y")->size == 1000);  // the declared size: not bound yet
  compile_more(p, spec, Stage::BindSizes);
  CHECK(p.dt->find("y")->size == 300);
  CHECK(p.size_args == std::set<std::string>{"y_SIZE"});
  CHECK(p.dt->kernels.empty());  // not scheduled yet
  compile_more(p, spec, Stage::Schedule);
  CHECK(p.dt->kernels == std::vector<std::string>{"add_out"});
  CHECK(p.module.kernels.empty());
  compile_more(p, spec, Stage::Lower);
  REQUIRE(p.module.kernels.size() == 1);
  CHECK_FALSE(p.bound);
  compile_more(p, spec);
  CHECK(p.done == Stage::Verify);
  CHECK(p.bound);
  CHECK(p.bindings.at("alpha").as_double() == 2.0);  // a scalar --arg binds at verify
  CHECK(p.bindings.at("y_SIZE").as_int() == 300);
  compile_more(p, spec);  // nothing left to run
  CHECK(p.done == Stage::Verify);

  Program whole = compile(Source{example("add_out.dt"), std::nullopt, std::nullopt}, spec);
  CHECK(dump_program(whole) == dump_program(p));
}

TEST_CASE("an illegal .dt schedule is reported by the schedule stage, not before") {
  std::string dir = temp_dir();
  std::string f = dir + "/bad.dt";
  std::ofstream(f) << "Func f;\nIn A;\nVar x;\nf[x] = A[x];\nf.block(x:0);\nf.compile();\n";
  Program p = compile(Source{f, std::nullopt, std::nullopt}, LaunchSpec{}, Stage::BindSizes);
  CHECK_THROWS_AS(compile_more(p, LaunchSpec{}, Stage::Schedule), UserError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an --in file: the .dt sizes read its header, the input buffer its data") {
  std::string dir = temp_dir();
  std::string f = dir + "/a.npy";
  Buffer b;
  b.name = "A";
  b.dtype = Scalar::F32;
  b.shape = {6, 40};
  b.bytes.assign(6 * 40 * 4, 0);
  write_npy(f, b);
  LaunchSpec spec;
  spec.ins = {{"A", f}};
  Program p = compile(Source{example("add_out.dt"), std::nullopt, std::nullopt}, spec, Stage::BindSizes);
  CHECK(p.dt->find("y")->size == 40);  // from the file's shape
  compile_more(p, spec);
  Buffers in = read_inputs(p, spec.ins);
  REQUIRE(in.list.size() == 1);
  CHECK(in.list[0].shape == Shape{6, 40});
  CHECK(in.list[0].io == BufIO::In);
  CHECK(in.list[0].bytes.size() == 6 * 40 * 4);
  // The data is read when the buffer is made: a file gone by then is an error.
  std::filesystem::remove(f);
  CHECK_THROWS_AS(read_inputs(p, spec.ins), UserError);
  CHECK_THROWS_AS(read_inputs(p, {{"B", dir + "/missing.npy"}}), UserError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a .tile program: parse gives the module, verify binds and checks it") {
  LaunchSpec spec;
  spec.args = {{"n", "100"}};
  Program p = compile(Source{example("add.tile"), std::nullopt, std::nullopt}, spec, Stage::Parse);
  REQUIRE(p.module.kernels.size() == 1);
  CHECK_FALSE(p.bound);
  compile_more(p, spec, Stage::BindSizes);
  CHECK(p.bindings.at("n").as_int() == 100);
  spec.kernel = "nope";
  CHECK_THROWS_AS(compile(Source{example("add.tile"), std::nullopt, std::nullopt}, spec, Stage::Parse), UserError);
}

TEST_CASE("shell_quote keeps a word whole for /bin/sh") {
  CHECK(shell_quote("plain") == "'plain'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
}

TEST_CASE("run_triton_module: files, arguments, environment, lines, collect, and the folder removed") {
  TritonModuleRun run;
  run.prefix = "dtsim-unit-py";
  run.files = {{"main.py",
                "import os, sys\n"
                "print('env', os.environ.get('DTSIM_UNIT_T'))\n"
                "print('args', '|'.join(sys.argv[1:-1]))\n"
                "open(sys.argv[-1], 'w').write(open(os.path.join(os.path.dirname(sys.argv[0]), 'data.txt')).read() * 2)\n"
                "sys.exit(3)\n"},
               {"data.txt", "ab"}};
  run.args = {"a b", "it's"};
  run.env = {"DTSIM_UNIT_T=7"};
  std::filesystem::path seen_dir;
  run.prepare = [&](const std::filesystem::path& dir, std::vector<std::string>& args) {
    seen_dir = dir;
    args.push_back((dir / "out.txt").string());
  };
  std::vector<std::string> lines;
  run.line = [&](const std::string& l) { lines.push_back(l); };
  std::string written;
  int status_seen = -2;
  run.collect = [&](const std::filesystem::path& dir, const PythonResult& r) {
    status_seen = r.status;
    std::ifstream in(dir / "out.txt");
    std::getline(in, written);
  };
  PythonResult r = run_triton_module(run);
  REQUIRE(r.started);
  CHECK(r.status == 3);
  CHECK(status_seen == 3);
  CHECK(lines == std::vector<std::string>{"env 7", "args a b|it's"});
  CHECK(r.output == "env 7\nargs a b|it's\n");
  CHECK(written == "abab");
  CHECK(seen_dir.string().rfind("/tmp/dtsim-unit-py-", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(seen_dir));
}
