// The verifier: binds parameter values, type-checks kernels and annotates the IR for the executors.
//
// After verify_module(), every Expr has `type`, every Var its `slot`, Arange/Full/Reshape/Broadcast
// their resolved constants in `ints`, Reduce its normalized axis in `ints[0]`, every Stmt its `id` and
// slots, and every Kernel its slot table and statement list. Errors are UserErrors with the location
// of the offending node.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "ir/IR.h"

namespace dtsim {

// name -> value of every Scalar/Constexpr parameter of a module (parameters are shared by name
// across the kernels of a module).
using Bindings = std::map<std::string, ScalarValue>;

// Values for every Scalar/Constexpr parameter: an override (from `--arg name=value`, text parsed
// according to the parameter's type) wins, else the parameter's default, evaluated in declaration
// order. Errors: an override naming no parameter, a malformed value, a parameter with no value.
Bindings bind_params(const Module& m, const std::map<std::string, std::string>& overrides);

// Evaluates a parameter expression (grid, buffer shape, default value, or a constant in the body):
// literals, parameters in `b`, + - * // % cdiv minimum maximum, unary minus, comparisons, casts.
// When `kernel` is given, only its Constexpr parameters may appear (a runtime scalar is an error
// "… must be a compile-time constant").
ScalarValue eval_param_expr(const ExprP& e, const Bindings& b, const Kernel* constexpr_only = nullptr);

// The launch's grid extents, axes the kernel does not name = 1. Errors (at the axis's expression): a
// float extent, an extent < 1. Each executor adds its own limits (the interpreter's 2^31 instances,
// CUDA's per-axis ones).
std::array<int64_t, 3> grid_extents(const Kernel& k, const Bindings& b);

// Type-checks and annotates every kernel. Parameters of the same name must agree across kernels.
void verify_module(Module& m, const Bindings& b);
void verify_kernel(Kernel& k, const Bindings& b);

// Type-checks and annotates a free-standing expression against a verified kernel (debugger `print`,
// `--break-if` conditions): `lookup(name)` returns the slot of a visible variable or -1 (then
// "'name' is not defined").
void verify_expr(const ExprP& e, const Kernel& k, const Bindings& b,
                 const std::function<int(const std::string&)>& lookup);

// The common element type of two verified numeric operands (IR.h "Type promotion": weak literals,
// float beats int, wider wins, f16 with bf16 gives f32). Executors use it where a node's own type
// does not say in which type its operands combine (comparisons).
Scalar promote_operands(const Expr& a, const Expr& b);

// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Maximum rank and element count of a tile.
constexpr int kMaxRank = 16;
constexpr int64_t kMaxTileElems = int64_t(1) << 20;

}  // namespace dtsim
