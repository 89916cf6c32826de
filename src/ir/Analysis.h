// Analyses over a verified kernel (types, slots and Kernel::stmts filled by verify_module), built
// on the walkers of Walk.h.
//
// Pointer provenance: which pointer parameters (their buffers) a pointer expression may point
// into. A parameter's Var points into its own buffer; `p + off`, where(c, p, q), expand_dims,
// reshape, trans and broadcast point where their pointer operands do; a pointer variable points
// wherever any assignment to it (in any statement, loop-carried `p += c` included) may make it
// point. int_to_ptr may point into any of them. Anything else points nowhere we know of.
//
// Buffer access: the buffers a kernel loads from (load), stores to (store) and updates atomically
// (atomic_*: both a read and a write), with their sizes under given bindings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

// A set of a kernel's parameters, by index into Kernel::params.
class ParamSet {
 public:
  ParamSet() = default;
  explicit ParamSet(size_t n) : bits_(n, false) {}
  bool has(size_t i) const { return i < bits_.size() && bits_[i]; }
  void add(size_t i) {
    if (i >= bits_.size()) bits_.resize(i + 1, false);
    bits_[i] = true;
  }
  // Adds every member of o; returns whether this set grew.
  bool merge(const ParamSet& o);
  bool empty() const;
  std::vector<size_t> list() const;  // the members, ascending
  bool operator==(const ParamSet& o) const { return list() == o.list(); }

 private:
  std::vector<bool> bits_;
};

class PointerProvenance {
 public:
  explicit PointerProvenance(const Kernel& k);  // a fixpoint over the kernel's pointer variables
  // The pointer parameters `e` may point into; empty when `e` is not a pointer.
  ParamSet sources(const Expr& e) const;
  // The same for the variable in frame slot `slot`.
  const ParamSet& slot_sources(int slot) const { return slots_.at(static_cast<size_t>(slot)); }

 private:
  const Kernel& k_;
  std::vector<ParamSet> slots_;
};

struct BufferAccess {
  ParamSet loaded;   // a Load's pointer may point into it
  ParamSet stored;   // a Store's pointer may point into it
  ParamSet atomic;   // an Atomic statement's pointer may point into it
  ParamSet reads() const;   // loaded + atomic
  ParamSet writes() const;  // stored + atomic
};

// Which buffers the kernel's loads, stores and atomics may touch (every statement, reached or not).
BufferAccess buffer_access(const Kernel& k);
BufferAccess buffer_access(const Kernel& k, const PointerProvenance& prov);

// The bytes of a pointer parameter's whole buffer (element size times its shape under `b`).
int64_t param_bytes(const Param& p, const Bindings& b);

// One buffer a kernel touches.
struct BufferUse {
  std::string name;  // the parameter
  size_t param = 0;  // its index in Kernel::params
  bool read = false, written = false;
  int64_t bytes = 0;  // the whole buffer, under the bindings
};
// The buffers a kernel reads or writes, in parameter order.
std::vector<BufferUse> kernel_buffers(const Kernel& k, const Bindings& b);

}  // namespace dtsim
