// Unit tests of the debugger's Triton expressions: numpy indexing of an evaluated value (index_value:
// indices, negative ones, slices with clipping and negative steps, new axes, errors with their
// location) and PyDebugExpr (names read, syntax errors with a caret, lowering to IR or a
// compile-time value, subscripts applied after evaluation, errors of the lowering).
#include <doctest/doctest.h>

#include <climits>
#include <variant>

#include "ir/Diag.h"
#include "pyfront/DebugExpr.h"
#include "repl/Condition.h"

using namespace dtsim;

namespace {

// An i32 tile of `shape` holding 0, 1, 2, ... in row-major order.
Value iota(const Shape& shape) {
  Value v;
  v.type = Type{Scalar::I32, false, shape};
  xt::xarray<int32_t> a;
  a.resize(std::vector<size_t>(shape.begin(), shape.end()));
  for (size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<int32_t>(i);
  v.data = a;
  return v;
}

std::vector<int64_t> elems(const Value& v) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < v.type.numel(); ++i) out.push_back(static_cast<int64_t>(v.get(i)));
  return out;
}

IndexItem idx(int64_t i) { return IndexItem{IndexItem::Index, i, std::nullopt, std::nullopt, 1, SourceLoc{}}; }
IndexItem sl(std::optional<int64_t> lo, std::optional<int64_t> hi, int64_t step = 1) {
  return IndexItem{IndexItem::Slice, 0, lo, hi, step, SourceLoc{}};
}
IndexItem newaxis() { return IndexItem{IndexItem::NewAxis, 0, std::nullopt, std::nullopt, 1, SourceLoc{}}; }

std::string error_of(const Value& v, const std::vector<IndexItem>& items) {
  try {
    index_value(v, items);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("index_value: an index drops the axis; negative indices count from the end") {
  Value x = iota({8});
  Value a = index_value(x, {idx(3)});
  CHECK(a.type.shape.empty());
  CHECK(elems(a) == std::vector<int64_t>{3});
  CHECK(elems(index_value(x, {idx(-1)})) == std::vector<int64_t>{7});
  Value y = iota({4, 8});
  Value row = index_value(y, {idx(2)});
  CHECK(row.type.shape == Shape{8});
  CHECK(elems(row) == std::vector<int64_t>{16, 17, 18, 19, 20, 21, 22, 23});
  Value col = index_value(y, {sl(std::nullopt, std::nullopt), idx(0)});
  CHECK(col.type.shape == Shape{4});
  CHECK(elems(col) == std::vector<int64_t>{0, 8, 16, 24});
  CHECK(elems(index_value(y, {idx(1), idx(-2)})) == std::vector<int64_t>{14});
}

TEST_CASE("index_value: slices as Python's slice.indices (clipped bounds, steps, reversed)") {
  Value x = iota({8});
  CHECK(elems(index_value(x, {sl(1, 4)})) == std::vector<int64_t>{1, 2, 3});
  CHECK(elems(index_value(x, {sl(std::nullopt, std::nullopt, 3)})) == std::vector<int64_t>{0, 3, 6});
  CHECK(elems(index_value(x, {sl(-3, std::nullopt)})) == std::vector<int64_t>{5, 6, 7});
  CHECK(elems(index_value(x, {sl(5, 100)})) == std::vector<int64_t>{5, 6, 7});
  CHECK(elems(index_value(x, {sl(std::nullopt, std::nullopt, -1)})) == std::vector<int64_t>{7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(elems(index_value(x, {sl(6, 1, -2)})) == std::vector<int64_t>{6, 4, 2});
  CHECK(elems(index_value(x, {sl(1, std::nullopt, INT64_MAX)})) == std::vector<int64_t>{1});
  CHECK(elems(index_value(x, {sl(std::nullopt, std::nullopt, INT64_MIN)})) == std::vector<int64_t>{7});
  Value empty = index_value(x, {sl(4, 2)});
  CHECK(empty.type.shape == Shape{0});
  Value y = iota({4, 8});
  Value block = index_value(y, {sl(1, 3), sl(2, 5)});
  CHECK(block.type.shape == Shape{2, 3});
  CHECK(elems(block) == std::vector<int64_t>{10, 11, 12, 18, 19, 20});
}

TEST_CASE("index_value: None inserts a unit axis; the type keeps its element type") {
  Value x = iota({4});
  Value r = index_value(x, {newaxis(), sl(std::nullopt, 2)});
  CHECK(r.type == Type{Scalar::I32, false, {1, 2}});
  CHECK(elems(r) == std::vector<int64_t>{0, 1});
  CHECK(std::holds_alternative<xt::xarray<int32_t>>(r.data));
}

TEST_CASE("index_value: errors") {
  Value x = iota({8});
  CHECK(error_of(x, {idx(8)}) == "index 8 is out of bounds for axis 0 with size 8");
  CHECK(error_of(x, {idx(-9)}) == "index -9 is out of bounds for axis 0 with size 8");
  CHECK(error_of(x, {idx(1), idx(2)}) == "too many indices for a tile of rank 1 (2 given)");
  CHECK(error_of(x, {sl(std::nullopt, std::nullopt, 0)}) == "slice step cannot be zero");
  CHECK(error_of(index_value(x, {idx(0)}), {idx(0)}) == "too many indices for a scalar (1 given)");
}

TEST_CASE("PyDebugExpr: names read, syntax errors with a caret") {
  PyDebugExpr e("tl.max(x * y, axis=0) + x", "<print>");
  std::vector<std::string> names;
  for (const auto& [n, loc] : e.names()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"tl", "x", "y"});
  try {
    PyDebugExpr bad("x +", "<print>");
    FAIL("parsed");
  } catch (const UserError& err) {
    CHECK(err.loc.col == 4);
  }
  try {
    PyDebugExpr bad("pid0 == 1 || x", "<break-if>");
    FAIL("parsed");
  } catch (const UserError& err) {
    CHECK(std::string(err.what()) == "'||' is not Python: write 'or' (or '|' on tensors)");
    CHECK(err.loc.col == 11);
  }
}

TEST_CASE("PyDebugExpr: lowering with the scope's names, through the kernel lowering") {
  int file = Sources::add("k.py", "import triton\nimport triton.language as tl\nSCALE = tl.constexpr(2)\n");
  DebugScope scope = [](const std::string& n) -> std::optional<DebugBinding> {
    DebugBinding b;
    if (n == "x") {
      b.type = Type{Scalar::F32, false, {16}};
      return b;
    }
    if (n == "BLOCK") {
      b.kind = DebugBinding::Constexpr;
      b.value = 16;
      return b;
    }
    return std::nullopt;
  };
  const std::vector<std::string> known = {"x", "BLOCK"};
  auto lower = [&](const std::string& text) {
    return PyDebugExpr(text, "<print>").lower(Sources::name(file), Sources::text(file), scope, known);
  };
  LoweredDebugExpr m = lower("tl.sum(x, axis=0)");
  REQUIRE(m.ir);
  CHECK(m.ir->kind == ExprKind::Reduce);
  CHECK(m.constant.empty());
  CHECK(lower("x.to(tl.float16)").ir->kind == ExprKind::Cast);
  CHECK(lower("x.shape").constant == "(16,)");
  CHECK(lower("x.dtype").constant == "tl.float32");
  CHECK(lower("BLOCK * SCALE").constant == "32");  // a constexpr parameter and a module constant
  CHECK(lower("float('inf')").constant == "inf");
  LoweredDebugExpr s = lower("(x + 1)[1:4]");
  REQUIRE(s.subscripts.size() == 1);
  CHECK(s.subscripts[0][0].kind == DebugIndex::Slice);
  CHECK(s.ir->kind == ExprKind::Binary);
  auto error = [&](const std::string& text) {
    try {
      lower(text);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("y + 1") == "'y' is not defined (names: x, BLOCK)");
  CHECK(error("tl.device_print('x', x)").find("the debugger evaluates expressions only") != std::string::npos);
  CHECK(error("x[3] + 1").find("write the subscript last") != std::string::npos);
  CHECK(error("(x, x)").find("a tuple of tensors") != std::string::npos);
}
