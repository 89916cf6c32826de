// Unit tests of the verifier's type rules (built with the IR builders, no parser).
#include <doctest/doctest.h>

#include "ir/Verify.h"

using namespace dtsim;

namespace {
Kernel vector_add() {
  Kernel k;
  k.name = "add";
  Param x{"x", ParamKind::Pointer, Scalar::F32, {make_var("n")}, BufIO::In, nullptr, {}, -1};
  Param z{"z", ParamKind::Pointer, Scalar::F32, {make_var("n")}, BufIO::Out, nullptr, {}, -1};
  Param n{"n", ParamKind::Scalar, Scalar::I32, {}, BufIO::In, make_const_int(100), {}, -1};
  Param bl{"BLOCK", ParamKind::Constexpr, Scalar::I32, {}, BufIO::In, make_const_int(64), {}, -1};
  k.params = {x, z, n, bl};
  k.grid = {make_binary(BinOp::Cdiv, make_var("n"), make_var("BLOCK"))};
  k.body.push_back(make_assign("offs", make_binary(BinOp::Add, make_binary(BinOp::Mul, make_program_id(0), make_var("BLOCK")),
                                                   make_arange(make_const_int(0), make_var("BLOCK")))));
  k.body.push_back(make_assign("mask", make_binary(BinOp::Lt, make_var("offs"), make_var("n"))));
  k.body.push_back(make_store(make_binary(BinOp::Add, make_var("z"), make_var("offs")),
                              make_binary(BinOp::Mul, make_load(make_binary(BinOp::Add, make_var("x"), make_var("offs")), make_var("mask")),
                                          make_const_float(2.0)),
                              make_var("mask")));
  return k;
}
}  // namespace

TEST_CASE("verifier types a vector add") {
  Module m;
  m.kernels.push_back(vector_add());
  Bindings b = bind_params(m, {});
  CHECK(b.at("BLOCK").i == 64);
  verify_module(m, b);
  const Kernel& k = m.kernels[0];
  CHECK(k.body[0]->args[0]->type.str() == "i32[64]");
  CHECK(k.body[1]->args[0]->type.str() == "i1[64]");
  CHECK(k.body[2]->args[0]->type.str() == "*f32[64]");
  CHECK(k.body[2]->args[1]->type.str() == "f32[64]");
  CHECK(k.stmts.size() == 3);
}

TEST_CASE("verifier rejects a runtime scalar as a tile extent") {
  Module m;
  m.kernels.push_back(vector_add());
  m.kernels[0].body[0]->args[0]->args[1]->args[1] = make_var("n");
  CHECK_THROWS_WITH_AS(verify_module(m, bind_params(m, {})), doctest::Contains("compile-time constant"), UserError);
}

TEST_CASE("weak literals adopt the other operand's type") {
  Module m;
  Kernel k = vector_add();
  k.body.push_back(make_assign("h", make_cast(make_var("offs"), Scalar::F16)));
  k.body.push_back(make_assign("h2", make_binary(BinOp::Mul, make_var("h"), make_const_float(0.5))));
  k.body.push_back(make_assign("w", make_binary(BinOp::Add, make_var("offs"), make_const_float(0.5))));
  k.body.push_back(make_assign("q", make_binary(BinOp::Div, make_var("offs"), make_const_int(2))));
  m.kernels.push_back(k);
  verify_module(m, bind_params(m, {}));
  CHECK(m.kernels[0].body[4]->args[0]->type.str() == "f16[64]");
  CHECK(m.kernels[0].body[5]->args[0]->type.str() == "f32[64]");
  CHECK(m.kernels[0].body[6]->args[0]->type.str() == "f32[64]");
}

TEST_CASE("reassignment must keep the type") {
  Module m;
  Kernel k = vector_add();
  k.body.push_back(make_assign("offs", make_cast(make_var("offs"), Scalar::I64)));
  m.kernels.push_back(k);
  CHECK_THROWS_WITH_AS(verify_module(m, bind_params(m, {})), doctest::Contains("changes type from i32[64] to i64[64]"), UserError);
}

TEST_CASE("bind_params: overrides, unknown names and bad values") {
  Module m;
  m.kernels.push_back(vector_add());
  CHECK(bind_params(m, {{"n", "1000"}}).at("n").i == 1000);
  CHECK_THROWS_WITH_AS(bind_params(m, {{"nn", "3"}}), doctest::Contains("no scalar parameter 'nn'"), UserError);
  CHECK_THROWS_WITH_AS(bind_params(m, {{"n", "3x"}}), doctest::Contains("bad value '3x'"), UserError);
  CHECK_THROWS_WITH_AS(bind_params(m, {{"x", "3"}}), doctest::Contains("is a pointer"), UserError);
}
