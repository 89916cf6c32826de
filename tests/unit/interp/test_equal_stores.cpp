// Interpreter unit tests: two instances storing bit-identical values to one element are a warning,
// not a write-write conflict, on every store path (a range, rows, lanes, a scalar, a masked store),
// in every instance order and on several threads; different bits (-0.0 against 0.0 too), an atomic
// against a plain store, and a load racing a store of the same value stay findings. With
// InterpOptions::equal_stores_conflict (--equal-stores=conflict), equal values conflict as
// different ones do.
#include <doctest/doctest.h>

#include "interp/RunOptions.h"
#include "interp_test_util.h"

using namespace dtsim;
using namespace dtsim::test;

namespace {
// A kernel over grid(4) whose store `STORE` (with `r` = arange(0, 8) and `pid` = program_id(0) in
// scope) writes the same elements from every instance; `VALUE` is what it stores.
std::string eq_kernel(const std::string& store, const std::string& value) {
  std::string k = "kernel k(x: *f32[64], out z: *f32[64]) grid(4) {\n  r = arange(0, 8)\n  pid = program_id(0)\n  v = " + value + "\n  " +
                  store + "\n}\n";
  return k;
}

// The equal-value run: no finding, one warning naming the statement; `per`: element stores per
// instance, so (grid - 1) * per in all.
void eq_check_equal(const std::string& name, const std::string& src, int64_t per, InterpOptions opt = {}) {
  auto run = run_tile(name, src, opt);
  INFO(name << "\n" << run->messages());
  CHECK(run->rep.ok());
  REQUIRE(run->rep.warnings.size() == 1);
  const Finding& w = run->rep.warnings[0];
  CHECK(w.kind == Finding::WriteWrite);
  CHECK(w.buffer == "z");
  CHECK(w.lanes == 3 * per);
  CHECK(w.message.find(name + ":5:3: warning: instances ") == 0);
  CHECK(w.message.find(" both store z[") != std::string::npos);
  CHECK(w.message.find("with equal values") != std::string::npos);
  CHECK(w.message.find(name + ":5:3: note: instance ") != std::string::npos);
  CHECK(w.message.find("; " + std::to_string(3 * per) + " element stores in this run found the bits they store") != std::string::npos);
}

// The different-value run: a write-write finding, as before.
void eq_check_conflict(const std::string& name, const std::string& src, InterpOptions opt = {}) {
  auto run = run_tile(name, src, opt);
  INFO(name << "\n" << run->messages());
  REQUIRE(run->rep.findings_count >= 1);
  CHECK(run->rep.findings[0].kind == Finding::WriteWrite);
  CHECK(run->rep.findings[0].message.find(": error: instances ") != std::string::npos);
}

struct EqPath {
  const char* name;
  const char* store;
  int64_t per;  // elements each instance stores
};
// A range (claim_span, then the per-lane path), rows of a 2-D tile, gathered lanes, a scalar (the
// fused scalar store), a masked store whose mask is no prefix, an elementwise value computed
// straight into the buffer (store_range_direct).
const EqPath kEqPaths[] = {
    {"range.tile", "store(z + r, v)", 8},
    {"rows.tile", "store(z + r[:, None] * 8 + arange(0, 4)[None, :], v[:, None] + arange(0, 4)[None, :].to(f32))", 32},
    {"lanes.tile", "store(z + (r * 5) % 8, v)", 8},
    {"scalar.tile", "store(z + 3, load(x + 3))", 1},
    {"masked.tile", "store(z + r, v, r % 2 == 0)", 4},
    {"direct.tile", "store(z + r, load(x + r) * 2.0 + v)", 8},  // computed straight into the buffer
};
}  // namespace

TEST_CASE("equal values from two instances: a warning on every store path, in every order") {
  for (const EqPath& p : kEqPaths) {
    std::string equal = eq_kernel(p.store, "load(x + r)");
    eq_check_equal(p.name, equal, p.per);
    eq_check_equal(p.name, equal, p.per, InterpOptions{.order = Order::Reverse});
    eq_check_equal(p.name, equal, p.per, InterpOptions{.order = Order::Shuffle, .shuffle_seed = 7});
    eq_check_equal(p.name, equal, p.per, InterpOptions{.threads = 4});
    eq_check_equal(p.name, equal, p.per, InterpOptions{.fast = false});
    // The instances' values differ: a write-write conflict, in every order and on four threads.
    std::string differ = eq_kernel(p.store, "load(x + r) + pid.to(f32)");
    if (std::string(p.name) == "scalar.tile") differ = eq_kernel("store(z + 3, load(x + 3) + pid.to(f32))", "load(x + r)");
    eq_check_conflict(p.name, differ);
    eq_check_conflict(p.name, differ, InterpOptions{.order = Order::Reverse});
    eq_check_conflict(p.name, differ, InterpOptions{.threads = 4, .keep_going = true});
  }
}

TEST_CASE("equal-value warning: exact text, one per statement pair and buffer, the result stored") {
  const char* src = R"(kernel copy_nopid(x: *f32[n], out z: *f32[n], n: i32 = 256, bs: constexpr = 64)
    grid(cdiv(n, bs)) {
  offs = arange(0, bs)
  store(z + offs, load(x + offs))
}
)";
  auto run = run_tile("nopid.tile", src);
  CHECK(run->rep.ok());
  REQUIRE(run->rep.warnings.size() == 1);
  CHECK(run->rep.warnings[0].message ==
        "nopid.tile:4:3: warning: instances [0] and [1] both store z[0] (index [0]) with equal values\n"
        "    store(z + offs, load(x + offs))\n"
        "    ^\n"
        "nopid.tile:4:3: note: instance [0] stores it here\n"
        "    store(z + offs, load(x + offs))\n"
        "    ^\n"
        "  buffer z: f32[256]; 192 element stores in this run found the bits they store, stored there by another instance; first: lane 0 of pid [1]\n"
        "  note: no write-write conflict: the element ends the same whichever store lands last (bit-identical values; different ones would "
        "conflict)\n");
  for (int i = 0; i < 64; ++i) CHECK(run->at("z", i) == run->at("x", i));
}

TEST_CASE("bit-identical is the rule: -0.0 against 0.0 conflicts") {
  // 0.0 * 1.0 in pid 0, 0.0 * -1.0 = -0.0 in pid 1: equal as floats, not as bits.
  const char* src = R"(kernel k(out z: *f32[8]) grid(2) {
  r = arange(0, 8)
  store(z + r, 0.0 * (1 - 2 * program_id(0)).to(f32) * (r + 1).to(f32))
}
)";
  auto run = run_tile("zero.tile", src);
  REQUIRE(run->rep.findings_count == 1);
  CHECK(run->rep.findings[0].kind == Finding::WriteWrite);
  CHECK(run->rep.warnings.empty());
}

TEST_CASE("the comparison is with what the element holds: a first writer's later store conflicts") {
  // pid 0 stores x, then x + 1 over it; pid 1 stores x. In order: pid 1 finds x + 1 (its x differs).
  // Reversed: pid 0's x finds pid 1's x (equal), then its x + 1 finds x: a conflict either way.
  const char* src = R"(kernel k(x: *f32[8], out z: *f32[8]) grid(2) {
  r = arange(0, 8)
  store(z + r, load(x + r))
  store(z + r, load(x + r) + 1.0, program_id(0) == 0)
}
)";
  for (Order o : {Order::Sequential, Order::Reverse}) {
    auto run = run_tile("later.tile", src, InterpOptions{.order = o});
    INFO(run->messages());
    REQUIRE(run->rep.findings_count == 1);
    CHECK(run->rep.findings[0].kind == Finding::WriteWrite);
  }
  // The same kernel storing x + 1 from pid 1 too: whichever order, the element ends x + 1.
  const char* same_last = R"(kernel k(x: *f32[8], out z: *f32[8]) grid(2) {
  r = arange(0, 8)
  store(z + r, load(x + r) + 1.0, program_id(0) == 1)
  store(z + r, load(x + r), program_id(0) == 0)
  store(z + r, load(x + r) + 1.0, program_id(0) == 0)
}
)";
  auto run = run_tile("last.tile", same_last);
  INFO(run->messages());
  CHECK(run->rep.ok());
  CHECK(run->rep.warnings.size() == 1);
  // Reversed, pid 0's x finds pid 1's x + 1: a conflict (the check is conservative where the first
  // writer stores an element more than once).
  auto rev = run_tile("last.tile", same_last, InterpOptions{.order = Order::Reverse});
  REQUIRE(rev->rep.findings_count == 1);
  CHECK(rev->rep.findings[0].kind == Finding::WriteWrite);
}

TEST_CASE("an atomic against a plain store of the same value, and a load racing it, stay conflicts") {
  // pid 1 stores 1.0 where pid 0 exchanged in 1.0 atomically (the element holds 1.0 either way).
  const char* atomic = R"(kernel k(inout z: *f32[8]) grid(2) {
  r = arange(0, 8)
  atomic_xchg(z + r, 1.0, mask=program_id(0) == 0)
  store(z + r, r.to(f32) * 0.0 + 1.0, program_id(0) == 1)
}
)";
  auto run = run_tile("atomic.tile", atomic);
  REQUIRE(run->rep.findings_count == 1);
  CHECK(run->rep.findings[0].kind == Finding::WriteWrite);
  CHECK(run->rep.findings[0].message.find("updates atomically") != std::string::npos);
  // pid 0 loads z; pid 1 stores back what it loaded (what z holds): still a read/write conflict.
  const char* rw = R"(kernel k(inout z: *f32[8]) grid(2) {
  r = arange(0, 8)
  v = load(z + r)
  store(z + r, v, program_id(0) == 1)
}
)";
  auto r2 = run_tile("rw.tile", rw);
  REQUIRE(r2->rep.findings_count == 1);
  CHECK(r2->rep.findings[0].kind == Finding::ReadWrite);
  auto rev = run_tile("rw.tile", rw, InterpOptions{.order = Order::Reverse});
  REQUIRE(rev->rep.findings_count == 1);
  CHECK(rev->rep.findings[0].kind == Finding::ReadWrite);
}

TEST_CASE("equal stores on many threads: one warning, every element counted, nothing lost") {
  // 64 instances store the same 1024 elements (range path, spans then per-element state).
  const char* src = R"(kernel k(x: *f32[1024], out z: *f32[1024]) grid(64) {
  r = arange(0, 1024)
  store(z + r, load(x + r) * 2.0)
}
)";
  for (int rep = 0; rep < 3; ++rep) {
    auto run = run_tile("many.tile", src, InterpOptions{.threads = 8});
    CHECK(run->rep.ok());
    REQUIRE(run->rep.warnings.size() == 1);
    CHECK(run->rep.warnings[0].lanes == 63 * 1024);
    for (int i = 0; i < 1024; i += 97) CHECK(run->at("z", i) == 2 * run->at("x", i));
  }
}

TEST_CASE("equal_stores_conflict: equal values are write-write conflicts on every store path, in every order") {
  for (const EqPath& p : kEqPaths) {
    std::string equal = eq_kernel(p.store, "load(x + r)");
    for (InterpOptions o : {InterpOptions{.equal_stores_conflict = true}, InterpOptions{.equal_stores_conflict = true, .order = Order::Reverse},
                            InterpOptions{.equal_stores_conflict = true, .order = Order::Shuffle, .shuffle_seed = 7},
                            InterpOptions{.threads = 4, .equal_stores_conflict = true},
                            InterpOptions{.equal_stores_conflict = true, .fast = false}}) {
      auto run = run_tile(p.name, equal, o);
      INFO(p.name << " order " << static_cast<int>(o.order) << " threads " << o.threads << "\n" << run->messages());
      // on several threads, instances already running when the first conflict stops the run may
      // report theirs too
      REQUIRE(run->rep.findings_count >= 1);
      if (o.threads <= 1) CHECK(run->rep.findings_count == 1);
      CHECK(run->rep.findings[0].kind == Finding::WriteWrite);
      CHECK(run->rep.findings[0].buffer == "z");
      CHECK(run->rep.findings[0].message.find(std::string(p.name) + ":5:3: error: instances ") == 0);
      CHECK(run->rep.findings[0].message.find("equal values") == std::string::npos);
      CHECK(run->rep.warnings.empty());
    }
  }
  // The planted forgotten program id: the message a different value would give.
  const char* src = R"(kernel copy_nopid(x: *f32[n], out z: *f32[n], n: i32 = 256, bs: constexpr = 64)
    grid(cdiv(n, bs)) {
  offs = arange(0, bs)
  store(z + offs, load(x + offs))
}
)";
  auto run = run_tile("nopid.tile", src, InterpOptions{.equal_stores_conflict = true});
  REQUIRE(run->rep.findings_count == 1);
  CHECK(run->rep.findings[0].message.find("nopid.tile:4:3: error: instances [0] and [1] both store z[0] (index [0])\n") == 0);
  // keep_going: one finding for each instance after the first, none a warning
  auto all = run_tile("nopid.tile", src, InterpOptions{.keep_going = true, .equal_stores_conflict = true});
  CHECK(all->rep.findings_count == 3);
  CHECK(all->rep.warnings.empty());
}

TEST_CASE("equal-stores run option: warn or conflict, checked as the other run options") {
  RunSettings s;
  CHECK(set_run_option(s, "equal-stores", "conflict") == "");
  CHECK(s.equal_stores_conflict);
  InterpOptions o;
  s.apply(o);
  CHECK(o.equal_stores_conflict);
  CHECK(set_run_option(s, "equal_stores", "warn") == "");
  CHECK(!s.equal_stores_conflict);
  CHECK(set_run_option(s, "equal-stores", "strict") == "expects warn or conflict, got 'strict'");
  CHECK(set_run_option(s, "equal-stores", "") == "expects warn or conflict, got ''");
  CHECK(!s.equal_stores_conflict);
  CHECK(!InterpOptions{}.equal_stores_conflict);
}

TEST_CASE("an instance loading an element it stored (itself, or with equal bits) races nobody") {
  // Every instance stores the same table (an exclusive cumulative sum) and then loads its own entry:
  // whichever store lands last, each load reads the table's bits. A warning, no finding, in every
  // order and on several threads.
  const char* table = R"(kernel k(x: *i32[8], out z: *i32[8], out y: *i32[8]) grid(8) {
  r = arange(0, 8)
  v = load(x + r)
  store(z + r, cumsum(v, 0) - v)
  pid = program_id(0)
  store(y + pid, load(z + pid) * 2)
}
)";
  for (InterpOptions opt : {InterpOptions{}, InterpOptions{.order = Order::Reverse}, InterpOptions{.order = Order::Shuffle, .shuffle_seed = 3},
                            InterpOptions{.threads = 4}, InterpOptions{.fast = false}}) {
    auto run = run_tile("table.tile", table, opt);
    INFO(run->messages());
    CHECK(run->rep.ok());
    REQUIRE(run->rep.warnings.size() == 1);
    CHECK(run->rep.warnings[0].message.find("with equal values") != std::string::npos);
    int64_t sum = 0;
    for (int i = 0; i < 8; ++i) {
      CHECK(run->at("y", i) == 2 * sum);
      sum += static_cast<int64_t>(run->at("x", i));
    }
  }
  // An instance that loads the entry before storing the table reads what was there before, or
  // another instance's table: a read/write conflict in every order.
  const char* before = R"(kernel k(x: *i32[8], inout z: *i32[8], out y: *i32[8]) grid(8) {
  r = arange(0, 8)
  pid = program_id(0)
  store(y + pid, load(z + pid))
  v = load(x + r)
  store(z + r, cumsum(v, 0) - v)
}
)";
  for (InterpOptions opt : {InterpOptions{}, InterpOptions{.order = Order::Reverse}, InterpOptions{.threads = 4}}) {
    auto run = run_tile("before.tile", before, opt);
    INFO(run->messages());
    REQUIRE(run->rep.findings_count >= 1);
    CHECK(run->rep.findings[0].kind == Finding::ReadWrite);
  }
  // An instance that only loads an entry others store: a read/write conflict.
  const char* reader = R"(kernel k(x: *i32[8], inout z: *i32[8], out y: *i32[8]) grid(8) {
  r = arange(0, 8)
  v = load(x + r)
  pid = program_id(0)
  store(z + r, cumsum(v, 0) - v, mask=pid > 0)
  store(y + pid, load(z + pid), mask=pid == 0)
}
)";
  for (InterpOptions opt : {InterpOptions{}, InterpOptions{.order = Order::Reverse}}) {
    auto run = run_tile("reader.tile", reader, opt);
    INFO(run->messages());
    REQUIRE(run->rep.findings_count >= 1);
    CHECK(run->rep.findings[0].kind == Finding::ReadWrite);
  }
}
