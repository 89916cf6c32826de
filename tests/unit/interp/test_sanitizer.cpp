// Interpreter unit tests: the sanitizer on planted bugs, masked loads, parallel == sequential,
// instance orders, and every example.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "interp_test_util.h"

using namespace dtsim;
using namespace dtsim::test;

static const char* kCopyPidN = R"(kernel copy_pid_n(x: *i32[n], out z: *i32[n], n: i32 = 1000, bs: constexpr = 64)
    grid(cdiv(n, bs)) {
  pid = program_id(0)
  mask = pid * bs + arange(0, bs) < n
  offs = pid * n + arange(0, bs)
  store(z + offs, load(x + offs, mask), mask)
}
)";

TEST_CASE("out-of-bounds load: exact buffer, index, lanes, pid, line") {
  auto run = run_tile("copy_pid_n.tile", kCopyPidN);
  REQUIRE(run->rep.findings_count == 1);
  const Finding& f = run->rep.findings[0];
  CHECK(f.kind == Finding::OutOfBounds);
  CHECK(f.buffer == "x");
  CHECK(f.flat_index == 1000);
  CHECK(f.lanes == 64);
  CHECK(f.pid == std::array<int64_t, 3>{1, 0, 0});
  CHECK(f.message ==
        "copy_pid_n.tile:6:3: error: out-of-bounds load from 'x'\n"
        "    store(z + offs, load(x + offs, mask), mask)\n"
        "    ^\n"
        "  buffer x: i32[1000]; first bad lane 0 -> flat index 1000 (index [1000]); 64 of 64 active lanes out of bounds; pid [1]\n");
}

TEST_CASE("keep_going counts every bad access; bad lanes touch no memory") {
  auto run = run_tile("copy_pid_n.tile", kCopyPidN, InterpOptions{.keep_going = true});
  // 15 instances (1..15) each make one bad load and one bad store.
  CHECK(run->rep.findings_count == 30);
  CHECK(run->rep.findings.size() == 20);
  CHECK(run->rep.findings[1].message.find("out-of-bounds store to 'z'") != std::string::npos);
  // The last instance (pid 15) has 40 active lanes (960..999), all out of bounds.
  CHECK(run->messages().find("40 of 40 active lanes out of bounds; pid (15, 0, 0)") == std::string::npos);  // beyond the 20 kept
  auto bounds = run_tile("copy_pid_n.tile", kCopyPidN, InterpOptions{.sanitize = Sanitize::Bounds, .keep_going = true});
  CHECK(bounds->rep.findings_count == 30);
  auto none = run_tile("copy_pid_n.tile", kCopyPidN, InterpOptions{.sanitize = Sanitize::None});
  CHECK(none->rep.ok());
  for (int i = 0; i < 64; ++i) CHECK(none->at("z", i) == none->at("x", i));
}

TEST_CASE("masked-off lanes never touch memory") {
  const char* src = R"(kernel t(x: *f32[4], out z: *f32[8]) grid(1) {
  r = arange(0, 8)
  v = load(x + r * 1000, r < 1, other=7.0)
  store(z + r, v)
  store(z + r + 1000, v, r > 100)
}
)";
  auto run = run_tile("<masked>", src);
  CHECK(run->rep.ok());
  CHECK(run->at("z", 0) == run->at("x", 0));
  CHECK(run->at("z", 5) == 7);
}

TEST_CASE("uninitialized reads are findings") {
  const char* src = R"(kernel a(out t: *f32[64]) grid(1) {
  r = arange(0, 64)
  store(t + r, r.to(f32), r < 60)
}
kernel b(t: *f32[64], out z: *f32[64]) grid(1) {
  r = arange(0, 64)
  store(z + r, load(t + r))
}
)";
  auto run = run_tile("uninit.tile", src);
  REQUIRE(run->rep.findings_count == 1);
  const Finding& f = run->rep.findings[0];
  CHECK(f.kind == Finding::Uninitialized);
  CHECK(f.flat_index == 60);
  CHECK(f.lanes == 4);
  CHECK(f.message.find("uninit.tile:7:3: error: load of uninitialized memory from 't'") == 0);
  CHECK(f.message.find("first bad lane 60 -> flat index 60 (index [60]); 4 of 64 active lanes read never-written elements") != std::string::npos);
  auto bounds = run_tile("uninit.tile", src, InterpOptions{.sanitize = Sanitize::Bounds});
  CHECK(bounds->rep.ok());
}

TEST_CASE("conflicting instances: write-write and read-write") {
  // Every instance stores z[0:64], each its own values (equal ones are a warning: test_equal_stores.cpp).
  const char* ww = R"(kernel copy_nopid(x: *f32[n], out z: *f32[n], n: i32 = 1000, bs: constexpr = 64)
    grid(cdiv(n, bs)) {
  offs = arange(0, bs)
  store(z + offs, load(x + offs) + program_id(0).to(f32))
}
)";
  auto run = run_tile("nopid.tile", ww);
  REQUIRE(run->rep.findings_count == 1);
  const Finding& f = run->rep.findings[0];
  CHECK(f.kind == Finding::WriteWrite);
  CHECK(f.message.find("nopid.tile:4:3: error: instances [0] and [1] both store z[0] (index [0])") == 0);
  CHECK(f.message.find("nopid.tile:4:3: note: instance [0] stores it here") != std::string::npos);
  CHECK(f.message.find("64 of 64 active lanes conflict") != std::string::npos);

  const char* rw = R"(kernel shift(inout z: *f32[128]) grid(2) {
  r = program_id(0) * 64 + arange(0, 64)
  store(z + r, r.to(f32))
  v = load(z + (r + 1) % 128)
}
)";
  auto r2 = run_tile("shift.tile", rw);
  REQUIRE(r2->rep.findings_count == 1);
  CHECK(r2->rep.findings[0].kind == Finding::ReadWrite);
  CHECK(r2->messages().find("error: instance [0] loads z[64] (index [64]), which instance [1] stores in the same launch") ==
        std::string::npos);  // (1,0,0) has not run yet in sequential order...
  CHECK(r2->messages().find("error: instance [1] stores z[64] (index [64]), which instance [0] loads in the same launch") !=
        std::string::npos);  // ...so the store of (1,0,0) finds the earlier read
  auto rev = run_tile("shift.tile", rw, InterpOptions{.order = Order::Reverse});
  REQUIRE(rev->rep.findings_count == 1);
  CHECK(rev->messages().find("instance [0] stores z[0] (index [0]), which instance [1] loads") != std::string::npos);
  auto par = run_tile("shift.tile", rw, InterpOptions{.threads = 4, .keep_going = true});
  CHECK(par->rep.findings_count >= 1);
  CHECK(par->has(Finding::ReadWrite));
}

namespace {
std::vector<std::array<int64_t, 3>> listed(const InstanceOrder& o) {
  std::vector<std::array<int64_t, 3>> v;
  for (int64_t i = 0; i < o.size(); ++i) v.push_back(o[i]);
  return v;
}
}  // namespace

TEST_CASE("instance orders") {
  auto seq = listed(InstanceOrder({3, 2, 1}, Order::Sequential, 0));
  CHECK(seq[1] == std::array<int64_t, 3>{1, 0, 0});
  CHECK(seq[3] == std::array<int64_t, 3>{0, 1, 0});
  auto rev = listed(InstanceOrder({3, 2, 1}, Order::Reverse, 0));
  CHECK(rev[0] == std::array<int64_t, 3>{2, 1, 0});
  auto s1 = listed(InstanceOrder({8, 8, 1}, Order::Shuffle, 5)), s2 = listed(InstanceOrder({8, 8, 1}, Order::Shuffle, 5));
  auto s3 = listed(InstanceOrder({8, 8, 1}, Order::Shuffle, 6));
  CHECK(s1 == s2);
  CHECK(s1 != s3);
  CHECK(s1 != seq);
  auto sorted = s1;
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return std::make_pair(a[1], a[0]) < std::make_pair(b[1], b[0]); });
  CHECK(sorted == listed(InstanceOrder({8, 8, 1}, Order::Sequential, 0)));
}

TEST_CASE("instance orders are permutations with inverses, for every grid size, without a list") {
  // Every size up to 300 (odd and even bit widths, 1, powers of two and their neighbours), 3-d grids.
  for (int64_t n = 1; n <= 300; ++n)
    for (Order o : {Order::Sequential, Order::Reverse, Order::Shuffle}) {
      std::array<int64_t, 3> grid = n % 6 == 0 ? std::array<int64_t, 3>{n / 6, 3, 2} : std::array<int64_t, 3>{n, 1, 1};
      InstanceOrder ord(grid, o, static_cast<uint64_t>(n) * 7919);
      REQUIRE(ord.size() == n);
      std::vector<int> seen(static_cast<size_t>(n), 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t lin = ord.linear_at(i);
        REQUIRE(lin >= 0);
        REQUIRE(lin < n);
        seen[static_cast<size_t>(lin)]++;
        REQUIRE(ord.position(ord[i]) == i);
      }
      for (int c : seen) REQUIRE(c == 1);
    }
  // The largest grid: the first and last positions and a pid's position, computed without a list.
  InstanceOrder big({INT32_MAX, 1, 1}, Order::Shuffle, 42);
  CHECK(big.size() == INT32_MAX);
  for (int64_t i : {int64_t(0), int64_t(1), int64_t(123456789), int64_t(INT32_MAX) - 1}) {
    std::array<int64_t, 3> p = big[i];
    CHECK(p[0] >= 0);
    CHECK(p[0] < INT32_MAX);
    CHECK(big.position(p) == i);
  }
  CHECK(big.position({INT32_MAX, 0, 0}) == -1);
  // A shuffle moves most instances (not a near-identity): of 4096, fewer than 64 stay in place.
  InstanceOrder sh({4096, 1, 1}, Order::Shuffle, 3);
  int fixed = 0;
  for (int64_t i = 0; i < 4096; ++i) fixed += sh.linear_at(i) == i;
  CHECK(fixed < 64);
}

TEST_CASE("parallel and shuffled runs are bit-identical to sequential") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/examples/";
  for (const char* ex : {"matmul.tile", "softmax.tile", "add.tile"}) {
    if (!std::filesystem::exists(dir + ex)) continue;
    CAPTURE(ex);
    auto a = run_file(dir + ex);
    auto b = run_file(dir + ex, InterpOptions{.threads = 4});
    auto c = run_file(dir + ex, InterpOptions{.threads = 3, .order = Order::Shuffle, .shuffle_seed = 9});
    REQUIRE(a->rep.ok());
    CHECK(b->rep.ok());
    CHECK(c->rep.ok());
    for (size_t i = 0; i < a->bufs.list.size(); ++i) {
      CHECK(a->bufs.list[i].bytes == b->bufs.list[i].bytes);
      CHECK(a->bufs.list[i].bytes == c->bufs.list[i].bytes);
    }
  }
}

TEST_CASE("every example runs clean; every planted bug is found") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DTSIM_SOURCE_DIR) / "examples";
  int clean = 0, bugs = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".tile") continue;
    CAPTURE(e.path().string());
    auto run = run_file(e.path().string());
    CHECK(run->messages() == "");
    CHECK(run->rep.ok());
    ++clean;
  }
  std::map<std::string, Finding::Kind> expect = {{"copy_pid_n.tile", Finding::OutOfBounds},
                                                 {"matmul_no_kmask.tile", Finding::OutOfBounds}};
  // Their instances store equal values to the elements they share: a write-write warning, no finding.
  std::set<std::string> warned = {"copy_nopid.tile", "overlap.tile"};
  if (fs::exists(dir / "bugs"))
    for (const auto& e : fs::directory_iterator(dir / "bugs")) {
      if (e.path().extension() != ".tile") continue;
      CAPTURE(e.path().string());
      auto run = run_file(e.path().string());
      const std::string name = e.path().filename().string();
      if (warned.count(name)) {
        CHECK(run->rep.ok());
        REQUIRE(run->rep.warnings.size() == 1);
        CHECK(run->rep.warnings[0].kind == Finding::WriteWrite);
        CHECK(run->rep.warnings[0].message.find("with equal values") != std::string::npos);
      } else {
        CHECK(!run->rep.ok());
      }
      auto it = expect.find(name);
      if (it != expect.end() && !run->rep.findings.empty()) CHECK(run->rep.findings[0].kind == it->second);
      ++bugs;
    }
  CHECK(clean >= 2);
  MESSAGE("examples run: " << clean << " clean, " << bugs << " with planted bugs");
}

TEST_CASE("Buffer::view: the run reads and writes the caller's memory; the sanitizer's state stays outside it") {
  Module m = parse_tile(Sources::add("view.tile", kCopyPidN));
  Bindings b = bind_params(m, {{"n", "100"}});
  verify_module(m, b);
  std::vector<int32_t> x(100), z(100, -7);
  for (int i = 0; i < 100; ++i) x[static_cast<size_t>(i)] = i;
  Buffers preset;
  preset.list.push_back(Buffer::view("x", Scalar::I32, {100}, BufIO::In, x.data()));
  preset.list.push_back(Buffer::view("z", Scalar::I32, {100}, BufIO::Out, z.data()));
  Buffers bufs = make_buffers(m, b, 1, std::move(preset));
  REQUIRE(bufs.find("z")->data() == reinterpret_cast<uint8_t*>(z.data()));
  CHECK(bufs.find("z")->bytes.empty());
  CHECK(bufs.find("z")->size_bytes() == 400);
  // Instance 0 copies x[0..64); instance 1 loads x[100..164): out of bounds, and the run stops there.
  RunReport rep = run_module(m, b, bufs, InterpOptions{});
  REQUIRE(rep.findings_count == 1);
  CHECK(rep.findings[0].kind == Finding::OutOfBounds);
  CHECK(rep.findings[0].pid == std::array<int64_t, 3>{1, 0, 0});
  for (int i = 0; i < 64; ++i) CHECK(z[static_cast<size_t>(i)] == i);  // written in place before the finding
  for (int i = 64; i < 100; ++i) CHECK(z[static_cast<size_t>(i)] == -7);
  CHECK(bufs.find("z")->get(5) == 5);  // Buffer::get reads through the view
}
