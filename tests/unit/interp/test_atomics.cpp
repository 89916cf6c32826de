// Atomics, scans and bitcasts of the tile IR on the interpreter: `.tile` syntax and printing, results
// on one thread and on several (real atomics), and the sanitizer's rules for atomics.
#include <doctest/doctest.h>

#include <cstring>

#include "interp/Exec.h"
#include "interp_test_util.h"
#include "ir/Printer.h"

using namespace dtsim;
using namespace dtsim::test;

// 64 instances add 1 to bin (x % 8) of each of their 16 lanes where x >= 0 (the bins zeroed by a
// first kernel); each writes back the old values.
static const char* kHist = R"(kernel zero(out bins: *f32[8]) grid(1) {
  store(bins + arange(0, 8), 0.0)
}
kernel hist(x: *i32[1024], inout bins: *f32[8], out old: *f32[1024]) grid(64) {
  offs = program_id(0) * 16 + arange(0, 16)
  v = load(x + offs)
  o = atomic_add(bins + v % 8, 1.0, mask=v >= 0)
  store(old + offs, o)
  atomic_max(bins, 0.0, sem=relaxed, scope=cta)
}
)";

TEST_CASE("atomic_add: every update lands, on one thread and on four; .tile round trip") {
  for (int threads : {1, 4}) {
    CAPTURE(threads);
    auto run = run_tile("hist.tile", kHist, InterpOptions{.threads = threads});
    REQUIRE(run->rep.ok());
    std::vector<int> want(8, 0);
    const Buffer* x = run->bufs.find("x");
    for (int i = 0; i < 1024; ++i) {
      int64_t v = static_cast<int64_t>(x->get(i));
      if (v >= 0) want[static_cast<size_t>(v % 8)]++;
    }
    for (int b = 0; b < 8; ++b) CHECK(run->at("bins", b) == want[static_cast<size_t>(b)]);
  }
  std::string printed = print_module(parse_tile(Sources::add("<h>", kHist)));
  CHECK(printed.find("o = atomic_add(bins + v % 8, 1.0, mask=v >= 0)") != std::string::npos);
  CHECK(printed.find("atomic_max(bins, 0.0, sem=relaxed, scope=cta)") != std::string::npos);
  CHECK(print_module(parse_tile(Sources::add("<h2>", printed))) == printed);
}

TEST_CASE("atomic old values: each element's updates see 0, 1, 2, ... in some order") {
  const char* src = R"(kernel k(out c: *i32[1], out old: *i32[256]) grid(16) {
  r = arange(0, 16)
  if program_id(0) == 0 {
    store(c, 0)
  }
}
kernel k2(inout c: *i32[1], out old: *i32[256]) grid(16) {
  r = arange(0, 16)
  o = atomic_add(c + r * 0, 1)
  store(old + program_id(0) * 16 + r, o)
}
)";
  for (int threads : {1, 3}) {
    auto run = run_tile("old.tile", src, InterpOptions{.threads = threads});
    REQUIRE(run->rep.ok());
    CHECK(run->at("c", 0) == 256);
    std::vector<int> seen(256, 0);
    for (int i = 0; i < 256; ++i) seen[static_cast<size_t>(run->at("old", i))]++;
    for (int i = 0; i < 256; ++i) CHECK(seen[static_cast<size_t>(i)] == 1);
  }
}

TEST_CASE("every atomic op, cas and unsigned compares") {
  const char* src = R"(kernel k(out z: *i32[16]) grid(1) {
  r = arange(0, 16)
  store(z + r, r - 8)
  a = atomic_max(z + r, 0, mask=r < 4)
  atomic_min(z + r, 0, mask=(r >= 4) && (r < 8))
  atomic_and(z + 8, 6)
  atomic_or(z + 9, 6)
  atomic_xor(z + 10, 6)
  b = atomic_xchg(z + 11, 100)
  c = atomic_cas(z + 12, 4, 40)
  d = atomic_cas(z + 13, 0, 50)
  atomic_umax(z + 14, -1)
  atomic_umin(z + 15, -1)
}
)";
  auto run = run_tile("ops.tile", src);
  REQUIRE(run->rep.ok());
  for (int i = 0; i < 8; ++i) CHECK(run->at("z", i) == (i < 4 ? 0 : i - 8));
  CHECK(run->at("z", 8) == (0 & 6));
  CHECK(run->at("z", 9) == (1 | 6));
  CHECK(run->at("z", 10) == (2 ^ 6));
  CHECK(run->at("z", 11) == 100);
  CHECK(run->at("z", 12) == 40);  // 4 == cmp: swapped
  CHECK(run->at("z", 13) == 5);   // 5 != 0: kept
  CHECK(run->at("z", 14) == -1);  // unsigned max of 6 and 0xffffffff
  CHECK(run->at("z", 15) == 7);   // unsigned min
}

TEST_CASE("sanitizer: atomics do not conflict; a plain store racing an atomic does; a spin lock orders") {
  const char* ok = R"(kernel k(inout c: *f32[4]) grid(8) {
  atomic_add(c + arange(0, 4), 1.0)
}
)";
  CHECK(run_tile("ok.tile", ok)->rep.ok());
  const char* racy = R"(kernel k(inout c: *f32[4]) grid(2) {
  r = arange(0, 4)
  if program_id(0) == 0 {
    store(c + r, 1.0)
  } else {
    atomic_add(c + r, 1.0)
  }
}
)";
  auto bad = run_tile("racy.tile", racy);
  REQUIRE(bad->rep.findings_count == 1);
  CHECK(bad->rep.findings[0].kind == Finding::WriteWrite);
  CHECK(bad->messages().find("instance [1] updates c[0] (index [0]) atomically, which instance [0] stores in the same launch without an atomic") !=
        std::string::npos);
  CHECK(bad->messages().find("racy.tile:4:5: note: instance [0] stores it here") != std::string::npos);
  auto rev = run_tile("racy.tile", racy, InterpOptions{.order = Order::Reverse});  // the atomic first: the store reports
  REQUIRE(rev->rep.findings_count == 1);
  CHECK(rev->messages().find("which instance [1] updates atomically in the same launch") != std::string::npos);
  // tutorial 05's lock: plain loads and stores of a shared row between taking and giving back the lock
  const char* locked = R"(kernel init(out lock: *i32[2]) grid(1) {
  store(lock + arange(0, 2), 0)
}
kernel k(inout lock: *i32[2], inout acc: *f32[16]) grid(8) {
  r = arange(0, 16)
  got = atomic_cas(lock, 0, 1)
  while got == 1 {
    got = atomic_cas(lock, 0, 1)
  }
  store(acc + r, load(acc + r) + 1.0)
  atomic_xchg(lock, 0)
}
)";
  for (int threads : {1, 4}) {
    auto run = run_tile("locked.tile", locked, InterpOptions{.threads = threads});
    CHECK(run->rep.ok());
  }
  // without the lock the same accesses conflict
  const char* unlocked = R"(kernel k(inout acc: *f32[16]) grid(8) {
  r = arange(0, 16)
  store(acc + r, load(acc + r) + 1.0)
}
)";
  CHECK(!run_tile("unlocked.tile", unlocked)->rep.ok());
}

// Release/acquire through a scalar atomic: instance 0 stores data, then sets a flag; instance 1
// spins until it reads the flag, then loads the data (stream-K, lean attention). And a counter: every
// instance stores its partial and counts itself in; the one that counts last sums every partial.
static std::string flag_kernel(const char* sem, bool load_first) {
  std::string s = R"(kernel init(out flag: *i32[1]) grid(1) {
  store(flag + arange(0, 1), 0)
}
kernel k(x: *f32[16], inout flag: *i32[1], out data: *f32[16], out y: *f32[16]) grid(2) {
  r = arange(0, 16)
  if program_id(0) == 0 {
    store(data + r, load(x + r) * 2.0)
    atomic_xchg(flag, 1, sem=SEM)
  } else {
)";
  s += load_first ? "    v = load(data + r)\n" : "";
  s += R"(    got = atomic_cas(flag, 1, 1, sem=SEM)
    while got != 1 {
      got = atomic_cas(flag, 1, 1, sem=SEM)
    }
)";
  s += load_first ? "" : "    v = load(data + r)\n";
  s += "    store(y + r, v)\n  }\n}\n";
  for (size_t at; (at = s.find("SEM")) != std::string::npos;) s.replace(at, 3, sem);
  return s;
}

TEST_CASE("sanitizer: data passed through an atomic flag or counter (release, then acquire) is no conflict") {
  for (const char* sem : {"acq_rel", "release"}) {  // the producer's sem; the consumer's is the same name
    CAPTURE(sem);
    const std::string src = flag_kernel(sem, false);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      auto run = run_tile("flag.tile", src.c_str(), InterpOptions{.threads = threads}, {}, 3);
      bool acquires = std::string(sem) != "release";  // a release-only cas acquires nothing
      CHECK(run->rep.ok() == acquires);
      if (acquires)
        for (int i = 0; i < 16; ++i) CHECK(run->at("y", i) == run->at("x", i) * 2.0);
    }
  }
  // relaxed atomics order nothing; a load before the acquire is not ordered by it
  for (const auto& p : {std::pair{"relaxed", false}, std::pair{"acq_rel", true}}) {
    const char* sem = p.first;
    const bool load_first = p.second;
    CAPTURE(sem);
    CAPTURE(load_first);
    auto bad = run_tile("flag.tile", flag_kernel(sem, load_first).c_str());
    REQUIRE(bad->rep.findings_count == 1);
    CHECK(bad->messages().find("instance [1] loads data[0] (index [0]), which instance [0] stores in the same launch") != std::string::npos);
  }
  const char* counter = R"(kernel init(out count: *i32[1], out total: *f32[1]) grid(1) {
  store(count + arange(0, 1), 0)
  store(total + arange(0, 1), 0.0)
}
kernel k(x: *f32[8, 16], inout count: *i32[1], out part: *f32[8], inout total: *f32[1]) grid(8) {
  pid = program_id(0)
  store(part + pid, sum(load(x + pid * 16 + arange(0, 16)), 0))
  n = atomic_add(count, 1, sem=SEM)
  if n == 7 {
    store(total, sum(load(part + arange(0, 8)), 0))
  }
}
)";
  std::string ordered = counter, unordered = counter;
  ordered.replace(ordered.find("SEM"), 3, "acq_rel");
  unordered.replace(unordered.find("SEM"), 3, "relaxed");
  for (Order order : {Order::Sequential, Order::Reverse, Order::Shuffle})
    for (int threads : {1, 4}) {
      CAPTURE(static_cast<int>(order));
      CAPTURE(threads);
      auto run = run_tile("counter.tile", ordered.c_str(), InterpOptions{.threads = threads, .order = order}, {}, 5);
      REQUIRE(run->rep.ok());
      double want = 0;
      for (int i = 0; i < 8 * 16; ++i) want += run->at("x", i);
      CHECK(run->at("total", 0) == doctest::Approx(want).epsilon(1e-5));
    }
  auto bad = run_tile("counter.tile", unordered.c_str());
  REQUIRE(bad->rep.findings_count == 1);
  CHECK(bad->messages().find("instance [7] loads part[0] (index [0]), which instance [0] stores in the same launch") != std::string::npos);
  // What an instance does after its release is not ordered by it: a persistent kernel that takes
  // tiles from a counter and then stores overlapping ranges, and a producer that stores again after
  // setting the flag, are conflicts.
  const char* tiles = R"(kernel init(out count: *i32[1]) grid(1) {
  store(count + arange(0, 1), 0)
}
kernel k(inout count: *i32[1], out y: *f32[40]) grid(4) {
  t = atomic_add(count, 1)
  store(y + t * 8 + arange(0, 16), t.to(f32))
}
)";
  auto late = run_tile("tiles.tile", tiles);
  REQUIRE(late->rep.findings_count == 1);
  CHECK(late->messages().find("instances [0] and [1] both store y[8] (index [8])") != std::string::npos);
  std::string again = flag_kernel("acq_rel", false);
  again.insert(again.find("  } else {"), "    store(data + r, 0.0)\n");
  auto after_flag = run_tile("flag.tile", again.c_str());
  REQUIRE(after_flag->rep.findings_count == 1);
  CHECK(after_flag->messages().find("instance [1] loads data[0] (index [0]), which instance [0] stores in the same launch") != std::string::npos);
}

TEST_CASE("instance sets of the sanitizer's synchronization: ranges with epochs, merged") {
  exec::IdRanges s;
  s.add(4, 8, 0);
  s.add(8, 10, 0);  // adjacent, same epoch: one range
  REQUIRE(s.r.size() == 1);
  CHECK(s.epoch_of(3) == -1);
  CHECK(s.epoch_of(4) == 0);
  CHECK(s.epoch_of(9) == 0);
  CHECK(s.epoch_of(10) == -1);
  s.add(6, 12, 2);  // overlap keeps the larger epoch
  CHECK(s.epoch_of(5) == 0);
  CHECK(s.epoch_of(6) == 2);
  CHECK(s.epoch_of(11) == 2);
  s.add(0, 20, 1);
  CHECK(s.epoch_of(0) == 1);
  CHECK(s.epoch_of(5) == 1);
  CHECK(s.epoch_of(7) == 2);
  CHECK(s.epoch_of(15) == 1);
  CHECK(s.epoch_of(20) == -1);
  for (size_t i = 1; i < s.r.size(); ++i) CHECK(s.r[i - 1].hi <= s.r[i].lo);
  exec::IdRanges t;
  for (int i = 0; i < 100; i += 2) t.add(i, i + 1, 0);
  for (int i = 1; i < 100; i += 2) t.add(i, i + 1, 0);
  CHECK(t.r.size() == 1);
  CHECK(exec::stamp_stmt(exec::access_stamp(17, 3)) == 17);
  CHECK(exec::stamp_epoch(exec::access_stamp(17, 3)) == 3);
  CHECK(exec::access_stamp(-1, 0) == -1);
  CHECK(exec::stamp_stmt(exec::access_stamp(-1, 5)) == -1);
  CHECK(exec::stamp_epoch(exec::access_stamp(4, 1 << 20)) == exec::kMaxEpoch);
}

// Only buffers a plain store writes, or an atomic updates while a load reads them, are tracked per
// element: atomics alone cannot conflict. A load racing an atomic is still found, in either order.
TEST_CASE("sanitizer: a load racing an atomic conflicts; atomics alone need no tracking") {
  const char* racy = R"(kernel k(inout c: *f32[4], out o: *f32[4]) grid(2) {
  r = arange(0, 4)
  if program_id(0) == 0 {
    store(o + r, load(c + r))
  } else {
    atomic_add(c + r, 1.0)
  }
}
)";
  for (Order order : {Order::Sequential, Order::Reverse}) {
    CAPTURE(static_cast<int>(order));
    auto bad = run_tile("racy_load.tile", racy, InterpOptions{.order = order});
    REQUIRE(bad->rep.findings_count == 1);
    CHECK(bad->rep.findings[0].kind == Finding::ReadWrite);
  }
  // 16 instances add into the same 4 rows (the whole-row path), then 4 instances of a second
  // kernel add again: every update lands, no finding
  const char* only = R"(kernel k(inout w: *f32[4, 64]) grid(16) {
  atomic_add(w + expand_dims(arange(0, 4), 1) * 64 + expand_dims(arange(0, 64), 0), 1.0)
}
kernel k2(inout w: *f32[4, 64]) grid(4) {
  atomic_add(w + expand_dims(arange(0, 4), 1) * 64 + expand_dims(arange(0, 64), 0), 0.5)
}
)";
  for (int threads : {1, 4}) {
    auto run = run_tile("atomics_only.tile", only, InterpOptions{.threads = threads}, {}, 7);
    REQUIRE(run->rep.ok());
    Module m0 = parse_tile(Sources::add("atomics_only0.tile", only));
    auto fresh = make_buffers(m0, bind_params(m0, {}), 7);
    int differ = 0;
    for (int i = 0; i < 4 * 64; ++i) differ += !(run->at("w", i) == doctest::Approx(fresh.find("w")->get(i) + 18.0).epsilon(1e-5));
    CHECK(differ == 0);
  }
}

TEST_CASE("scans: cumsum, cumprod, cummax, cummin, reverse, along either axis") {
  const char* src = R"(kernel k(x: *f32[4, 8], out s: *f32[4, 8], out p: *f32[4, 8], out m: *f32[4, 8], out q: *i32[4, 8]) grid(1) {
  o = arange(0, 4)[:, None] * 8 + arange(0, 8)[None, :]
  v = load(x + o)
  store(s + o, cumsum(v, axis=1))
  store(p + o, cumprod(v, axis=0, reverse=True))
  store(m + o, cummax(v, axis=1) + cummin(v, axis=0))
  store(q + o, cumsum(v > 0.0, axis=1))
}
)";
  auto run = run_tile("scan.tile", src);
  REQUIRE(run->rep.ok());
  auto x = [&](int i, int j) { return static_cast<float>(run->at("x", i * 8 + j)); };
  for (int i = 0; i < 4; ++i) {
    float s = 0, mx = -1e30f;
    int q = 0;
    for (int j = 0; j < 8; ++j) {
      s += x(i, j);
      mx = std::max(mx, x(i, j));
      q += x(i, j) > 0;
      float p = 1, mn = 1e30f;
      for (int k = 3; k >= i; --k) p *= x(k, j);
      for (int k = 0; k <= i; ++k) mn = std::min(mn, x(k, j));
      CHECK(run->at("s", i * 8 + j) == doctest::Approx(s));
      CHECK(run->at("p", i * 8 + j) == doctest::Approx(p));
      CHECK(run->at("m", i * 8 + j) == doctest::Approx(mx + mn));
      CHECK(run->at("q", i * 8 + j) == q);
    }
  }
  std::string printed = print_module(parse_tile(Sources::add("<s>", src)));
  CHECK(printed.find("cumprod(v, axis=0, reverse=True)") != std::string::npos);
}

TEST_CASE("bitcast: the same bits as another type of the same width") {
  std::vector<double> b = eval8("(r.to(f32) * 0.5).to(i32, bitcast=True)");
  for (int i = 0; i < 8; ++i) {
    float f = static_cast<float>(i) * 0.5f;
    int32_t want;
    std::memcpy(&want, &f, 4);
    CHECK(b[static_cast<size_t>(i)] == want);
  }
  std::vector<double> back = eval8("(r * 1065353216).to(f32, bitcast=True).to(i32)", "i32");  // 0x3f800000 = 1.0f
  CHECK(back[1] == 1);
  CHECK_THROWS_WITH_AS(eval8("r.to(i64, bitcast=True)"), doctest::Contains("bitcast from i32 to i64 is not supported"), UserError);
}

TEST_CASE("reduce and associative_scan with a combine function: .tile syntax, printing, results") {
  const char* src = R"(kernel k(x: *f32[16], out m: *f32[1], out s: *i32[16]) grid(1) {
  r = arange(0, 16)
  v = load(x + r)
  store(m, reduce(v, axis=0, combine=(p, q) -> where(abs(p) >= abs(q), p, q)))
  k = (r // 4) * 65536 + 1
  store(s + r, associative_scan(k, axis=0, combine=(a, b) -> where((a & -65536) == (b & -65536), a + b - (a & -65536), b)) & 65535)
}
)";
  auto run = run_tile("combine.tile", src);
  REQUIRE(run->rep.ok());
  double best = 0;
  for (int i = 0; i < 16; ++i)
    if (std::abs(run->at("x", i)) > std::abs(best)) best = run->at("x", i);
  CHECK(run->at("m", 0) == best);
  for (int i = 0; i < 16; ++i) CHECK(run->at("s", i) == i % 4 + 1);  // a count restarting with every key
  std::string printed = print_module(parse_tile(Sources::add("<c>", src)));
  CHECK(printed.find("reduce(v, axis=0, combine=(a, b) -> where(abs(a) >= abs(b), a, b))") != std::string::npos);
  CHECK(print_module(parse_tile(Sources::add("<c2>", printed))) == printed);
  CHECK_THROWS_WITH_AS(run_tile("bad.tile", R"(kernel k(x: *f32[16], out m: *f32[1]) grid(1) {
  v = load(x + arange(0, 16))
  store(m, reduce(v, axis=0, combine=(a, b) -> a + v))
}
)"), doctest::Contains("a combine function may use only its arguments"), UserError);
}

// Liger's embedding backward in small: each instance adds a [16, 16] tile of g into the rows of w
// that its ids pick (ids repeat within a tile: rows of a histogram), masked at the edges. Without
// old values the rows of consecutive elements take the whole-row path on one thread; with old
// values (o = ...) every lane takes the per-lane path. Both must add every lane, in lane order.
// The mask keeps rows m < M and columns n < N: (60, 28) leaves every row some masked lanes,
// (64, 32) none, (60, 32) whole rows on or off.
static std::string embedding_backward(bool old_values, int M = 60, int N = 28) {
  return std::string(R"(kernel k(g: *f32[64, 32], inout w: *f32[8, 32], out o: *f32[64, 32]) grid(4, 2) {
  m = program_id(0) * 16 + arange(0, 16)
  n = program_id(1) * 16 + arange(0, 16)
  ids = (m * 5) % 8
  mask = expand_dims(m < )") + std::to_string(M) + ", 1) && expand_dims(n < " + std::to_string(N) + R"(, 0)
  v = load(g + expand_dims(m, 1) * 32 + expand_dims(n, 0))
  )" + (old_values ? "r = " : "") + R"(atomic_add(w + expand_dims(ids, 1) * 32 + expand_dims(n, 0), v, mask=mask)
}
)";
}

TEST_CASE("atomic_add of gathered rows (an embedding backward): every lane, masks, lane order on one thread") {
  for (auto mn : {std::pair{60, 28}, std::pair{64, 32}, std::pair{60, 32}}) {
    const int M = mn.first, N = mn.second;  // not a structured binding: CAPTURE's lambda takes them
    CAPTURE(M);
    CAPTURE(N);
    std::vector<double> w0, g;
    Module m0 = parse_tile(Sources::add("emb0.tile", embedding_backward(false, M, N)));
    auto fresh = make_buffers(m0, bind_params(m0, {}), 7);
    for (int i = 0; i < 8 * 32; ++i) w0.push_back(fresh.find("w")->get(i));
    for (int i = 0; i < 64 * 32; ++i) g.push_back(fresh.find("g")->get(i));
    // the reference, in double: every unmasked lane added once
    std::vector<double> want = w0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) want[static_cast<size_t>((m * 5) % 8 * 32 + n)] += g[static_cast<size_t>(m * 32 + n)];
    std::vector<std::vector<double>> got;
    for (bool old_values : {false, true})
      for (Sanitize s : {Sanitize::All, Sanitize::None})
        for (int threads : {1, 4}) {
          CAPTURE(old_values);
          CAPTURE(threads);
          auto run = run_tile("emb.tile", embedding_backward(old_values, M, N), InterpOptions{.threads = threads, .sanitize = s}, {}, 7);
          REQUIRE(run->rep.ok());
          std::vector<double> w;
          for (int i = 0; i < 8 * 32; ++i) w.push_back(run->at("w", i));
          for (int i = 0; i < 8 * 32; ++i) CHECK(w[static_cast<size_t>(i)] == doctest::Approx(want[static_cast<size_t>(i)]).epsilon(1e-5));
          if (threads == 1) got.push_back(w);
        }
    // one thread: the whole-row path and the per-lane path add in the same (lane) order: the same bits
    REQUIRE(got.size() == 4);
    for (size_t k = 1; k < got.size(); ++k) CHECK(got[k] == got[0]);
  }
}

TEST_CASE("atomic_add of rows: a plain store of an element, or a never-written element, is reported as per lane") {
  const char* racy = R"(kernel k(inout w: *f32[4, 16]) grid(2) {
  n = arange(0, 16)
  if program_id(0) == 0 {
    store(w + 16 + n, 1.0)
  } else {
    atomic_add(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(n, 0), 1.0)
  }
}
)";
  auto bad = run_tile("racy_rows.tile", racy);
  REQUIRE(bad->rep.findings_count == 1);
  CHECK(bad->rep.findings[0].kind == Finding::WriteWrite);
  CHECK(bad->messages().find("instance [1] updates w[16] (index [1, 0]) atomically, which instance [0] stores in the same launch without an atomic") !=
        std::string::npos);
  CHECK(bad->messages().find("16 of 64 active lanes") != std::string::npos);
  const char* uninit = R"(kernel k(out w: *f32[4, 16]) grid(1) {
  n = arange(0, 16)
  store(w + n, 0.0)
  x = load(w + n)
  atomic_add(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(n, 0), 1.0)
}
)";
  auto u = run_tile("uninit_rows.tile", uninit);  // (loaded: its writes are tracked)
  REQUIRE(u->rep.findings_count == 1);
  CHECK(u->rep.findings[0].kind == Finding::Uninitialized);
  CHECK(u->messages().find("48 of 64 active lanes updated never-written elements") != std::string::npos);
}

TEST_CASE("an atomic on a buffer no kernel loads reads its never-written elements: reported, on one thread and on four") {
  // w only atomics touch (not conflict-tracked), yet each update reads the element it changes.
  const char* only = R"(kernel k(out w: *f32[16]) grid(4) {
  atomic_add(w + arange(0, 16), 1.0)
}
)";
  for (int threads : {1, 4}) {
    CAPTURE(threads);
    auto u = run_tile("atomic_only.tile", only, InterpOptions{.threads = threads});
    REQUIRE(u->rep.findings_count == 1);
    CHECK(u->rep.findings[0].kind == Finding::Uninitialized);
    CHECK(u->messages().find("atomic_only.tile:2:3: error: atomic_add of uninitialized memory in 'w'") != std::string::npos);
    CHECK(u->messages().find("16 of 16 active lanes updated never-written elements") != std::string::npos);
  }
  // A first kernel stores elements 0..7 (row updates that are all written take the one-pass path,
  // the others the lanes one by one): the 8 others are reported; masked-off lanes are not.
  const char* half = R"(kernel zero(out w: *f32[4, 16]) grid(1) {
  n = arange(0, 16)
  store(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(n, 0), 0.0, mask=expand_dims(n < 8, 0))
}
kernel add(inout w: *f32[4, 16]) grid(2) {
  n = arange(0, 16)
  atomic_add(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(n, 0), 1.0, mask=expand_dims(n < 8 + 4 * program_id(0), 0))
}
)";
  for (int threads : {1, 4}) {
    CAPTURE(threads);
    auto h = run_tile("atomic_half.tile", half, InterpOptions{.threads = threads});
    REQUIRE(h->rep.findings_count == 1);
    CHECK(h->rep.findings[0].kind == Finding::Uninitialized);
    CHECK(h->messages().find("atomic_half.tile:7:3: error: atomic_add of uninitialized memory in 'w'") != std::string::npos);
    CHECK(h->messages().find("16 of 48 active lanes updated never-written elements") != std::string::npos);
    CHECK(h->messages().find("pid [1]") != std::string::npos);
  }
  // Every element stored first: no finding, and the sums are the same as without the sanitizer.
  const char* whole = R"(kernel zero(out w: *f32[4, 16]) grid(1) {
  store(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(arange(0, 16), 0), 0.0)
}
kernel add(inout w: *f32[4, 16]) grid(3) {
  atomic_add(w + expand_dims(arange(0, 4), 1) * 16 + expand_dims(arange(0, 16), 0), 1.0)
}
)";
  auto ok = run_tile("atomic_whole.tile", whole);
  CHECK(ok->rep.ok());
  for (int i = 0; i < 64; ++i) CHECK(ok->at("w", i) == 3.0);
}

// `w + (X + Y)`: a scalar pointer plus offsets that are the sum of a [R, 1] and a [1, C] tile (as
// Triton's TTIR gives `ptr + (ids[:, None] * s + cols[None, :])`), held as rows plus columns;
// `ptr + offs` with the offsets in a variable takes the tile path. Both must add the same bits and
// report the same findings with the same texts: ids reach rows 8 and 9 of an [8, 32] w (out of
// bounds), `S` 2 makes the columns non-consecutive (per lane), the gather load of g goes through
// the same form, and with i32 offsets `K1`, `K2` move the two parts by large amounts (sums that
// do not wrap: rows plus columns; sums that wrap: the tile path).
static std::string nested_ptr(int64_t K1, int64_t K2) {
  return "((expand_dims(ids, 1) * 32 + " + std::to_string(K1) + ") + (expand_dims(c, 0) + " + std::to_string(K2) + "))";
}
static std::string nested_gather(bool nested, int S, int ids_mod, bool i64, int64_t K1, int64_t K2) {
  std::string p = nested ? nested_ptr(K1, K2) : "offs";
  return std::string(R"(kernel k(g: *f32[64, 32], inout w: *f32[8, 32], out o: *f32[64, 32]) grid(4, 2) {
  m = program_id(0) * 16 + arange(0, 16)
  n = program_id(1) * 16 + arange(0, 16)
  c = (n * )") + std::to_string(S) + R"() % 32
  ids = ((m * 7) % )" + std::to_string(ids_mod) + (i64 ? ").to(i64)" : ")") + R"(
  offs = )" + nested_ptr(K1, K2) + R"(
  mask = expand_dims(m < 60, 1) && expand_dims(n < 28, 0)
  v = load(g + )" + p + R"(, mask=mask, other=0.0)
  store(o + expand_dims(m, 1) * 32 + expand_dims(n, 0), v)
  atomic_add(w + )" + p + R"(, v, mask=mask)
}
)";
}

TEST_CASE("atomic_add and load through `ptr + (rows[:, None] + cols[None, :])`: the tile path's bits and findings") {
  struct V {
    int S, ids_mod;
    bool i64;
    int64_t K1, K2;
  };
  const std::vector<V> variants{{1, 8, true, 0, 0},           {2, 8, true, 0, 0},          {1, 10, true, 0, 0},
                                {2, 10, true, 0, 0},          {1, 8, false, 0, 0},         {1, 10, false, 0, 0},
                                {1, 8, false, 2147483000, -2147483000},  // large parts, sums in range
                                {1, 8, false, 2147483000, 1000}};        // sums that wrap: every lane out of bounds
  for (const V& x : variants)
    for (bool keep : {false, true})
      for (int threads : {1, 4}) {
        CAPTURE(x.S);
        CAPTURE(x.ids_mod);
        CAPTURE(x.i64);
        CAPTURE(x.K2);
        CAPTURE(keep);
        CAPTURE(threads);
        const bool bad = x.ids_mod == 10 || x.K2 == 1000;
        InterpOptions opt{.threads = threads, .keep_going = keep};
        auto a = run_tile("nested.tile", nested_gather(true, x.S, x.ids_mod, x.i64, x.K1, x.K2), opt, {}, 7);
        auto b = run_tile("nested.tile", nested_gather(false, x.S, x.ids_mod, x.i64, x.K1, x.K2), opt, {}, 7);
        if (threads == 1 || keep) CHECK(a->rep.findings_count == b->rep.findings_count);
        CHECK((a->rep.findings_count > 0) == bad);
        if (bad) {
          REQUIRE(a->rep.findings.size() > 0);
          CHECK(a->rep.findings[0].kind == Finding::OutOfBounds);
        }
        if (threads == 1) {  // the same texts, but for the quoted source line's pointer operand
          std::string am = a->messages();
          const std::string np = nested_ptr(x.K1, x.K2);
          for (size_t at; (at = am.find(np)) != std::string::npos;) am.replace(at, np.size(), "offs");
          CHECK(am == b->messages());
        }
        if (threads > 1 && !keep && bad) continue;  // stopped at some instance's finding
        for (const char* buf : {"w", "o"}) {
          const int64_t n = a->bufs.find(buf)->numel();
          int differ = 0;
          for (int64_t i = 0; i < n; ++i) {
            const double p = a->at(buf, i), q = b->at(buf, i);
            // one thread: the same lane order, the same bits; four: the same sums up to order
            if (threads == 1 ? !(p == q || (p != p && q != q)) : !(p == doctest::Approx(q).epsilon(1e-5))) ++differ;
          }
          CAPTURE(buf);
          CHECK(differ == 0);
        }
      }
}

TEST_CASE("a while loop that cannot end is reported, not run forever; long loops that make progress are not") {
  // instance 0 waits for a flag that instance 1 sets: with one instance at a time in the default
  // order, instance 0 spins forever (a trip changes nothing); in reverse order, or with two
  // threads, the flag is set first or meanwhile
  const char* spin = R"(kernel init(out flag: *i32[1]) grid(1) {
  store(flag, 0)
}
kernel k(inout flag: *i32[1], out y: *f32[2]) grid(2) {
  p = program_id(0)
  if p == 0 {
    got = atomic_cas(flag, 1, 1)
    while got != 1 {
      got = atomic_cas(flag, 1, 1)
    }
    store(y, 1.0)
  } else {
    atomic_xchg(flag, 1)
    store(y + 1, 2.0)
  }
}
)";
  InterpOptions keep;
  keep.keep_going = true;
  auto stuck = run_tile("spin.tile", spin, keep);
  REQUIRE(stuck->rep.findings_count == 1);
  CHECK(stuck->messages().find("this while loop cannot end") != std::string::npos);
  CHECK(stuck->rep.findings[0].loc.line == 8);
  CHECK(stuck->rep.findings[0].kind == Finding::Fault);
  CHECK(stuck->at("y", 1) == 2.0);  // the other instance still ran
  InterpOptions rev;
  rev.order = Order::Reverse;
  auto fine = run_tile("spin.tile", spin, rev);
  CHECK(fine->rep.ok());
  CHECK(fine->at("y", 0) == 1.0);
  // 3 million trips that change a counter, and 3 million that change memory only: no finding
  const char* longer = R"(kernel k(inout x: *i32[4]) grid(1) {
  i = 0
  while i < 3000000 {
    i = i + 1
  }
  store(x, i)
  store(x + 1, 0)
  while load(x + 1) < 3000000 {
    store(x + 1, load(x + 1) + 1)
  }
}
)";
  auto ok = run_tile("long.tile", longer);
  CHECK(ok->rep.ok());
  CHECK(ok->at("x", 0) == 3000000.0);
  CHECK(ok->at("x", 1) == 3000000.0);
}
