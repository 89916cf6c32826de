// Loads and stores of the interpreter, with the sanitizer's per-lane checks: out-of-bounds lanes,
// reads of never-written elements (a shadow byte per element), and conflicting instances (per
// element: the writing instance and up to two reading instances, updated with atomics so that the
// parallel mode detects every conflict too).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

#include "host/Buffers.h"
#include "interp/Elem.h"
#include "ir/Verify.h"

namespace dtsim::exec {

std::string pid_str(const Ctx& c, const std::array<int64_t, 3>& p) {
  return pid_text(p, c.f->kernel ? c.f->kernel->grid.size() : 3);
}

std::array<int64_t, 3> unlinear(int64_t lin, const std::array<int64_t, 3>& g) {
  return {lin % g[0], (lin / g[0]) % g[1], lin / (g[0] * g[1])};
}

ConflictMap& ConflictMap::operator=(ConflictMap&& o) noexcept {
  writer = std::move(o.writer), wstmt = std::move(o.wstmt);
  reader1 = std::move(o.reader1), r1stmt = std::move(o.r1stmt), reader2 = std::move(o.reader2), r2stmt = std::move(o.r2stmt);
  shards = std::move(o.shards);
  nshards = o.nshards, shift = o.shift, init = o.init;
  o.nshards = 0;
  n = o.n;
  tracked = o.tracked;
  is_dense.store(o.is_dense.load());
  return *this;
}

int32_t IdRanges::epoch_of(int32_t id) const {
  auto it = std::upper_bound(r.begin(), r.end(), id, [](int32_t v, const R& x) { return v < x.lo; });
  return it != r.begin() && id < std::prev(it)->hi ? std::prev(it)->ep : -1;
}

void IdRanges::add(int32_t lo, int32_t hi, int32_t ep) {
  if (lo >= hi) return;
  std::vector<R> out;
  out.reserve(r.size() + 2);
  auto push = [&](int32_t a, int32_t b, int32_t e) {
    if (a >= b) return;
    if (!out.empty() && out.back().hi == a && out.back().ep == e) out.back().hi = b;
    else out.push_back(R{a, b, e});
  };
  int32_t cur = lo;  // the first point of [lo, hi) not placed yet
  for (const R& x : r) {
    if (x.hi <= lo || x.lo >= hi) {  // before or after the new range
      if (x.lo >= hi) push(cur, hi, ep), cur = hi;
      push(x.lo, x.hi, x.ep);
      continue;
    }
    push(x.lo, lo, x.ep);    // x's part before it
    push(cur, x.lo, ep);     // the new range's part before x
    int32_t b = std::min(x.hi, hi);
    push(std::max(x.lo, lo), b, std::max(x.ep, ep));
    cur = b;
    push(hi, x.hi, x.ep);    // x's part after it
  }
  push(cur, hi, ep);
  r.swap(out);
}

void ConflictMap::reset(int64_t count, bool readers) {
  n = count;
  tracked = count > 0;
  for (auto* v : {&writer, &wstmt, &reader1, &r1stmt, &reader2, &r2stmt}) v->clear();
  // At most 256 shards of at least 1024 elements.
  int sh = 10;
  while (sh < 62 && (std::max<int64_t>(count, 1) - 1) >> sh >= 256) ++sh;
  int64_t want = ((std::max<int64_t>(count, 1) - 1) >> sh) + 1;
  if (want != nshards || !shards) shards = std::make_unique<Shard[]>(static_cast<size_t>(want)), nshards = want;
  else
    for (int64_t i = 0; i < nshards; ++i) shards[i].spans.clear();
  shift = sh;
  is_dense.store(readers);
  if (!readers) return;  // range mode until dense()
  for (auto* v : {&writer, &wstmt, &reader1, &r1stmt, &reader2, &r2stmt}) v->assign(static_cast<size_t>(n), -1);
}

namespace {
// Shards [s0, s1] locked in ascending order for the life of the object (`on`: else nothing).
struct ShardLocks {
  ConflictMap& cm;
  int64_t s0, s1;
  bool on;
  ShardLocks(ConflictMap& m, int64_t a, int64_t b, bool lock = true) : cm(m), s0(a), s1(b), on(lock) {
    if (on)
      for (int64_t s = s0; s <= s1; ++s) cm.shards[s].mu.lock();
  }
  ~ShardLocks() {
    if (on)
      for (int64_t s = s1; s >= s0; --s) cm.shards[s].mu.unlock();
  }
};

// Every shard locked.
void densify_locked(ConflictMap& cm) {
  cm.writer.assign(static_cast<size_t>(cm.n), -1);
  cm.wstmt.assign(static_cast<size_t>(cm.n), -1);
  for (int64_t s = 0; s < cm.nshards; ++s) {
    for (const ConflictMap::Span& sp : cm.shards[s].spans) {
      std::fill(cm.writer.begin() + sp.lo, cm.writer.begin() + sp.hi, sp.inst);
      std::fill(cm.wstmt.begin() + sp.lo, cm.wstmt.begin() + sp.hi, sp.stmt);
      if (cm.init) std::memset(cm.init + sp.lo, 1, static_cast<size_t>(sp.hi - sp.lo));
    }
    cm.shards[s].spans.clear();
  }
  cm.is_dense.store(true, std::memory_order_release);
}

// The index of the first span of `v` that may overlap [lo, ...) (spans sorted and disjoint, so
// their ends are sorted too).
size_t first_overlap(const std::vector<ConflictMap::Span>& v, int64_t lo) {
  if (v.empty() || v.back().hi <= lo) return v.size();
  return static_cast<size_t>(std::partition_point(v.begin(), v.end(), [lo](const ConflictMap::Span& x) { return x.hi <= lo; }) - v.begin());
}

// Records [plo, phi) (one shard's part of a claim, no other instance's span in it) in that shard's
// spans: the parts no span covers yet, as new spans of `me` (the last one extends the span before
// it when that span is this statement's and ends where it starts).
void record_span(std::vector<ConflictMap::Span>& v, int64_t plo, int64_t phi, int32_t me, int32_t sid) {
  size_t j = first_overlap(v, plo);
  if (j == v.size()) {  // past every span: the usual claim of consecutive instances
    if (!v.empty() && v.back().hi == plo && v.back().inst == me && v.back().stmt == sid) v.back().hi = phi;
    else v.push_back(ConflictMap::Span{plo, phi, me, sid});
    return;
  }
  if (v[j].lo >= phi) {  // in the gap before span j (a row between rows stored before): as below, with one piece
    if (j > 0 && v[j - 1].hi == plo && v[j - 1].inst == me && v[j - 1].stmt == sid) v[j - 1].hi = phi;
    else v.insert(v.begin() + static_cast<std::ptrdiff_t>(j), ConflictMap::Span{plo, phi, me, sid});
    return;
  }
  std::vector<ConflictMap::Span> add;
  int64_t cur = plo;
  size_t k = j;
  for (; k < v.size() && v[k].lo < phi; ++k) {
    if (v[k].lo > cur) add.push_back(ConflictMap::Span{cur, v[k].lo, me, sid});
    cur = std::max(cur, v[k].hi);
  }
  if (cur < phi) {
    ConflictMap::Span* prev = k > 0 && v[k - 1].hi == cur ? &v[k - 1] : nullptr;
    if (add.empty() && prev && prev->inst == me && prev->stmt == sid) prev->hi = phi;
    else add.push_back(ConflictMap::Span{cur, phi, me, sid});
  }
  for (const ConflictMap::Span& a : add) {
    auto at = std::partition_point(v.begin(), v.end(), [&](const ConflictMap::Span& x) { return x.lo < a.lo; });
    v.insert(at, a);
  }
}

// Range mode: records elements [lo, hi) as stored by instance `me` at statement `sid` (the parts
// not stored before; this instance's earlier spans keep their statement) and calls `store()`, which
// stores them, unless another instance stored any of them: then the map switches to per-element
// state and nothing is recorded. Returns whether the span was recorded. `lock`: instances run on
// several threads; the values are then stored under the shard locks, so that once the map is
// per-element (densify takes every lock) each claimed element holds its writer's value, which
// another instance's store compares its own with (store_op).
template <class Store>
bool claim_span(ConflictMap& cm, int64_t lo, int64_t hi, int32_t me, int32_t sid, bool lock, Store&& store) {
  const int64_t s0 = lo >> cm.shift, s1 = (hi - 1) >> cm.shift;
  bool conflict = false;
  {
    ShardLocks held(cm, s0, s1, lock);
    if (cm.is_dense.load(std::memory_order_relaxed)) return false;
    for (int64_t s = s0; s <= s1 && !conflict; ++s) {
      const auto& v = cm.shards[s].spans;
      int64_t plo = std::max(lo, s << cm.shift), phi = std::min(hi, (s + 1) << cm.shift);
      for (size_t j = first_overlap(v, plo); j < v.size() && v[j].lo < phi; ++j)
        if (v[j].inst != me) {
          conflict = true;
          break;
        }
    }
    if (!conflict) {
      for (int64_t s = s0; s <= s1; ++s)
        record_span(cm.shards[s].spans, std::max(lo, s << cm.shift), std::min(hi, (s + 1) << cm.shift), me, sid);
      store();
      return true;
    }
  }
  cm.densify();  // (after letting go of the shards: densify takes them all, in order)
  return false;
}

// One thread, range mode: claims for instance `me` at statement `sid` the R rows of W elements at
// bases[0..R) (ascending, disjoint, in bounds) in one pass over each shard they touch, when no span
// of any instance overlaps any of them (then no row conflicts, and every element of every row is
// new, as claim_span would record it row by row). False, having changed nothing, otherwise (the
// caller then claims the rows one by one, which finds and reports what this declined).
bool claim_rows(ConflictMap& cm, const int64_t* bases, int64_t R, int64_t W, int32_t me, int32_t sid) {
  if (R <= 0 || W <= 0 || cm.nshards == 0 || cm.is_dense.load(std::memory_order_relaxed)) return false;
  for (int64_t i = 1; i < R; ++i)
    if (bases[i] < bases[i - 1] + W) return false;
  if (bases[0] < 0 || bases[R - 1] + W > cm.n) return false;
  const int sh = cm.shift;
  // The rows' pieces, one per shard a row touches, ascending (so grouped by shard).
  thread_local std::vector<std::pair<int64_t, ConflictMap::Span>> pieces;
  pieces.clear();
  for (int64_t i = 0; i < R; ++i) {
    const int64_t lo = bases[i], hi = lo + W;
    for (int64_t s = lo >> sh; s <= (hi - 1) >> sh; ++s)
      pieces.push_back({s, ConflictMap::Span{std::max(lo, s << sh), std::min(hi, (s + 1) << sh), me, sid}});
  }
  // No span overlaps a piece: per shard, one search and then a cursor moving forward.
  for (size_t k = 0; k < pieces.size();) {
    const int64_t s = pieces[k].first;
    const std::vector<ConflictMap::Span>& v = cm.shards[s].spans;
    size_t j = first_overlap(v, pieces[k].second.lo);
    for (; k < pieces.size() && pieces[k].first == s; ++k) {
      const ConflictMap::Span& p = pieces[k].second;
      while (j < v.size() && v[j].hi <= p.lo) ++j;
      if (j < v.size() && v[j].lo < p.hi) return false;
    }
  }
  // Recorded: per shard, the pieces merged into its sorted spans (a piece that starts where the
  // span before it ends, of this instance and statement, extends that span).
  thread_local std::vector<ConflictMap::Span> merged;
  for (size_t k = 0; k < pieces.size();) {
    const int64_t s = pieces[k].first;
    std::vector<ConflictMap::Span>& v = cm.shards[s].spans;
    auto put = [&](std::vector<ConflictMap::Span>& out, const ConflictMap::Span& p) {
      if (!out.empty() && out.back().hi == p.lo && out.back().inst == me && out.back().stmt == sid && p.inst == me && p.stmt == sid) out.back().hi = p.hi;
      else out.push_back(p);
    };
    if (v.empty() || v.back().hi <= pieces[k].second.lo) {  // past every span: appended
      for (; k < pieces.size() && pieces[k].first == s; ++k) put(v, pieces[k].second);
      continue;
    }
    merged.clear();
    size_t j = 0;
    for (; k < pieces.size() && pieces[k].first == s; ++k) {
      const ConflictMap::Span& p = pieces[k].second;
      for (; j < v.size() && v[j].lo < p.lo; ++j) merged.push_back(v[j]);
      put(merged, p);
    }
    for (; j < v.size(); ++j) merged.push_back(v[j]);
    v.assign(merged.begin(), merged.end());
  }
  return true;
}
}  // namespace

void ConflictMap::flush_init() {
  if (!init || is_dense.load(std::memory_order_acquire)) return;
  for (int64_t s = 0; s < nshards; ++s)
    for (const Span& sp : shards[s].spans) std::memset(init + sp.lo, 1, static_cast<size_t>(sp.hi - sp.lo));
}

void ConflictMap::densify() {
  if (nshards == 0) {  // (a map never reset: nothing tracked, nothing shared)
    if (!is_dense.load(std::memory_order_relaxed)) densify_locked(*this);
    return;
  }
  ShardLocks all(*this, 0, nshards - 1);
  if (!is_dense.load(std::memory_order_relaxed)) densify_locked(*this);
}

namespace {


SourceLoc where_loc(const Ctx& c, SourceLoc fallback) { return c.stmt && c.stmt->loc.valid() ? c.stmt->loc : fallback; }

std::string loc2_note(const Ctx& c) {
  if (c.stmt && c.stmt->loc2.valid()) return format_diag(c.stmt->loc2, "note", "from this schedule line");
  return "";
}

struct Issue {
  // " through a null pointer ..." when the first bad offset came from address 0, else "".
  // esz: the element size, for the address an int_to_ptr lane outside every buffer holds.
  std::string null_note(int64_t esz) const {
    if (!count || !null_offset(off)) return "";
    if (off == kNullOffset) return " through a null pointer (int_to_ptr of address 0)";
    std::ostringstream a;
    a << std::hex << static_cast<uint64_t>(off - kNullOffset) * static_cast<uint64_t>(esz);
    return " through address 0x" + a.str() + ", which is in no buffer of this run (int_to_ptr)";
  }
  int64_t count = 0;
  int64_t lane = -1;
  int64_t off = 0;
  int32_t other = -1;       // conflicts: the other instance
  int32_t other_stmt = -1;  // conflicts: its statement
  bool other_wrote = false;
  bool other_atomic = false;  // the other instance updated the element atomically
  // conflicts: instances ordered before this one by synchronization (Ctx::after; null: none), whose
  // accesses are no conflict
  const IdRanges* after = nullptr;
  // whether `who`'s access stamped `st` (access_stamp) is ordered before this one
  bool ordered(int32_t who, int32_t st) const {
    if (!after) return false;
    int32_t ep = after->epoch_of(who);
    return ep >= 0 && stamp_epoch(st) <= ep;
  }
  void hit(int64_t l, int64_t o) {
    if (count++ == 0) lane = l, off = o;
  }
};

template <class T> T aload(T& x) { return std::atomic_ref<T>(x).load(); }

// ConflictMap::writer entries: -1 none; >= 0 the first instance that stored the element; <= -2 the
// first instance that updated it atomically (-2 - id). The instance behind entry `w` that a plain
// access by `me` conflicts with, or -1.
inline int32_t atomic_mark(int32_t me) { return -2 - me; }
inline int32_t other_writer(int32_t w, int32_t me) {
  int32_t who = w < -1 ? -2 - w : w;
  return who == me ? -1 : who;
}
inline void note_conflict(Issue& conf, ConflictMap& cm, size_t u, int32_t w, int32_t who, int64_t o, int64_t off) {
  const int32_t st = std::atomic_ref<int32_t>(cm.wstmt[u]).load(std::memory_order_relaxed);
  if (conf.ordered(who, st)) return;
  if (conf.count == 0) {
    conf.other = who;
    conf.other_stmt = stamp_stmt(st);
    conf.other_wrote = true;
    conf.other_atomic = w < -1;
  }
  conf.hit(o, off);
}
// The statement a new writer of an element publishes (wstmt: -1 means "claimed, value not stored
// yet", so a stamp of -1, an access outside any statement, is published as kNoStmt: the same
// statement and epoch to stamp_stmt and stamp_epoch).
inline int32_t published(int32_t sid) { return sid < 0 ? kNoStmt : sid; }
// Publishes element u's first store: its value is in memory (release: whoever acquires the stamp
// reads that value, writer_stamp).
inline void publish_writer(ConflictMap& cm, size_t u, int32_t sid) {
  std::atomic_ref<int32_t>(cm.wstmt[u]).store(published(sid), std::memory_order_release);
}
// Records `mark` (an instance, or its atomic_mark) as the first writer of element u when it has
// none; returns the writer it had (-1: none, `mark` now is). `publish`: stamp wstmt now; a plain
// store stamps it after storing its value instead (publish_writer), so that another instance that
// finds the claim can compare its own value with the stored one (with several threads too).
inline int32_t claim_writer(ConflictMap& cm, size_t u, int32_t mark, int32_t sid, bool publish = true) {
  std::atomic_ref<int32_t> w(cm.writer[u]);
  int32_t cur = w.load();
  if (cur == -1) {
    int32_t expect = -1;
    if (w.compare_exchange_strong(expect, mark)) {
      if (publish) std::atomic_ref<int32_t>(cm.wstmt[u]).store(published(sid), std::memory_order_release);
    } else {
      cur = expect;
    }
  } else if (cur == mark && stamp_epoch(sid) > 0) {
    std::atomic_ref<int32_t>(cm.wstmt[u]).store(sid, std::memory_order_relaxed);  // its latest epoch
  }
  return cur;
}
// The stamp of element u's first writer, once its value is in memory: with several threads
// (`wait`) the writer may have claimed the element and not stored it yet, a few instructions that
// never block (store_op, store_scalar); one thread runs one instance at a time, so the other
// instance's stores are all done.
inline int32_t writer_stamp(ConflictMap& cm, size_t u, bool wait) {
  std::atomic_ref<int32_t> ws(cm.wstmt[u]);
  int32_t st = ws.load(std::memory_order_acquire);
  while (wait && st == -1) {
    std::this_thread::yield();
    st = ws.load(std::memory_order_acquire);
  }
  return st;
}

// Records `me` as a reader of element `off` (keeps up to two distinct readers).
void note_reader(ConflictMap& cm, size_t off, int32_t me, int32_t stmt) {
  std::atomic_ref<int32_t> r1(cm.reader1[off]);
  int32_t cur = r1.load();
  if (cur == me) {
    if (stamp_epoch(stmt) > 0) std::atomic_ref<int32_t>(cm.r1stmt[off]).store(stmt, std::memory_order_relaxed);  // its latest epoch
    return;
  }
  if (cur == -1) {
    int32_t expect = -1;
    if (r1.compare_exchange_strong(expect, me)) {
      std::atomic_ref<int32_t>(cm.r1stmt[off]).store(stmt, std::memory_order_relaxed);
      return;
    }
    if (expect == me) return;
  }
  std::atomic_ref<int32_t> r2(cm.reader2[off]);
  int32_t expect = -1;
  if (r2.compare_exchange_strong(expect, me)) std::atomic_ref<int32_t>(cm.r2stmt[off]).store(stmt, std::memory_order_relaxed);
}

// A reader of element `off` other than `me` and not ordered before it (`is`: Issue::ordered), and
// its statement, or -1.
std::pair<int32_t, int32_t> other_reader(ConflictMap& cm, size_t off, int32_t me, const Issue* is = nullptr) {
  std::atomic_ref<int32_t> r1(cm.reader1[off]), r2(cm.reader2[off]);
  std::atomic_ref<int32_t> s1(cm.r1stmt[off]), s2(cm.r2stmt[off]);
  for (auto [r, st] : {std::pair{r1.load(), s1.load(std::memory_order_relaxed)}, std::pair{r2.load(), s2.load(std::memory_order_relaxed)}})
    if (r != -1 && r != me && !(is && is->ordered(r, st))) return {r, stamp_stmt(st)};
  return {-1, -1};
}
// A store or atomic of element u by `me` against a load of it by another instance (where the
// buffer's readers are tracked).
inline void note_reader_conflict(Issue& conf, ConflictMap& cm, size_t u, int32_t me, int64_t o, int64_t off) {
  if (cm.reader1.empty()) return;
  auto [r, rs] = other_reader(cm, u, me, &conf);
  if (r == -1) return;
  if (conf.count == 0) conf.other = r, conf.other_stmt = rs, conf.other_wrote = false;
  conf.hit(o, off);
}

std::string access_details(const Ctx& c, const Buffer& B, const Issue& is, int64_t active, const char* what, const Shape& tile) {
  std::ostringstream os;
  os << "  buffer " << B.name << ": " << Type{B.dtype, false, B.shape}.str() << "; first bad lane " << lane_text(is.lane, tile) << " -> flat index "
     << is.off << " (index " << index_text(is.off, B.shape) << "); " << is.count << " of " << active << " active lanes " << what
     << "; pid " << pid_str(c, c.f->pid) << "\n";
  return os.str();
}

// The enclosing loops' iterations, innermost first: "  in loop k = 32, in loop m = 1\n" ("" outside
// loops; a while loop has no variable: "in a while loop"). The GPU's status words do not carry them.
std::string loop_context(Ctx& c) {
  std::string out;
  for (auto it = c.f->loop_stack.rbegin(); it != c.f->loop_stack.rend(); ++it) {
    const Stmt* loop = *it;
    std::string part = "in a while loop";
    if (!loop->targets.empty() && !loop->slots.empty() && loop->slots[0] >= 0) {
      int slot = loop->slots[0];
      c.flush(slot);
      const Value& v = c.f->slots[static_cast<size_t>(slot)];
      if (!v.defined()) continue;
      part = "in loop " + loop->targets[0] + " = " + std::to_string(static_cast<int64_t>(v.get(0)));
    }
    out += (out.empty() ? "  " : ", ") + part;
  }
  return out.empty() ? out : out + "\n";
}

// A finding (or warning) of this instance's access at `loc` to B, at the access's first element and
// lane count, without its message.
Finding finding_at(Ctx& c, Finding::Kind kind, SourceLoc loc, const Buffer& B, const Issue& is) {
  Finding f;
  f.kind = kind;
  f.loc = loc;
  f.pid = c.f->pid;
  f.buffer = B.name;
  f.flat_index = is.off;
  f.lanes = is.count;
  return f;
}

void emit(Ctx& c, Finding::Kind kind, SourceLoc loc, const std::string& head, const std::string& body, const Buffer& B, const Issue& is) {
  Finding f = finding_at(c, kind, loc, B, is);
  f.message = format_diag(loc, "error", head) + loc2_note(c) + body + loop_context(c);
  report_finding(c, std::move(f));
}

// Lanes past the buffer's end inside its slack (the caller's storage goes on): they ran. One warning
// per statement and buffer in a run (the first instance's), never a stop.
void warn_past_end(Ctx& c, SourceLoc loc, const char* what, const Buffer& B, const Issue& is, int64_t active, const Shape& tile) {
  if (!c.rs) return;
  RunState& rs = *c.rs;
  std::lock_guard<std::mutex> lock(rs.mu);
  for (const Finding& w : rs.report->warnings)
    if (w.buffer == B.name && w.loc.line == loc.line && w.loc.col == loc.col && w.loc.file == loc.file) return;
  if (rs.report->warnings.size() >= 20) return;
  Finding f = finding_at(c, Finding::OutOfBounds, loc, B, is);
  std::ostringstream os;
  os << "  buffer " << B.name << ": " << Type{B.dtype, false, B.shape}.str() << ", its storage going on for " << B.slack
     << " more elements; first such lane " << lane_text(is.lane, tile) << " -> flat index " << is.off << "; " << is.count << " of "
     << active << " active lanes past the end; pid " << pid_str(c, c.f->pid) << "\n"
     << "  note: the access ran (--view-bounds=warn); --view-bounds=span makes it an error, --view-bounds=storage silences it\n";
  f.message = format_diag(loc, "warning", std::string(what) + " '" + B.name + "' past the end of the view it was given (inside its storage)") +
              os.str() + loop_context(c);
  rs.report->warnings.push_back(std::move(f));
}

int64_t add_equal_stores(Ctx& c, SourceLoc loc, const Buffer& B, const Issue& is, const Shape& tile);

// Plain stores that found their element holding the very bits they store, stored by another
// instance's plain store not ordered before them (`is`: how many, the first one, the other instance
// and its statement). No conflict: the element ends the same whichever store lands last. A warning,
// one per (statement pair, buffer) in a run, counting the element stores (RunState::equal_stores).
void warn_equal_stores(Ctx& c, SourceLoc loc, const Buffer& B, const Issue& is, const Shape& tile) {
  if (!c.rs) return;
  RunState& rs = *c.rs;
  DebugHooks* hooks = c.stmt ? rs.opt->hooks : nullptr;
  Finding seen = finding_at(c, Finding::WriteWrite, loc, B, is);  // this store's, for the hooks
  {
    std::lock_guard<std::mutex> lock(rs.mu);
    const int64_t at = add_equal_stores(c, loc, B, is, tile);
    if (hooks && at >= 0) seen.message = rs.report->warnings[static_cast<size_t>(at)].message;
  }
  if (!hooks) return;
  hooks->on_warning(*c.f, *c.stmt, seen);
}

// warn_equal_stores's record, under RunState::mu: the index of the warning in report->warnings (-1:
// a new one past the 20 kept).
int64_t add_equal_stores(Ctx& c, SourceLoc loc, const Buffer& B, const Issue& is, const Shape& tile) {
  RunState& rs = *c.rs;
  const Kernel* k = c.f->kernel;
  const Stmt* other = is.other_stmt >= 0 && k && is.other_stmt < static_cast<int32_t>(k->stmts.size()) ? k->stmts[static_cast<size_t>(is.other_stmt)] : nullptr;
  for (RunState::EqualStores& e : rs.equal_stores)
    if (e.buffer == B.name && ((e.a == c.stmt && e.b == other) || (e.a == other && e.b == c.stmt))) {
      e.count += is.count;
      Finding& w = rs.report->warnings[e.warning];
      w.lanes = e.count;
      w.message = e.head + std::to_string(e.count) + e.tail;
      return static_cast<int64_t>(e.warning);
    }
  if (rs.report->warnings.size() >= 20) return -1;
  auto me = c.f->pid, them = unlinear(is.other, c.f->grid);
  RunState::EqualStores e;
  e.a = c.stmt, e.b = other, e.buffer = B.name, e.count = is.count, e.warning = rs.report->warnings.size();
  e.head = format_diag(loc, "warning", "instances " + pid_str(c, them) + " and " + pid_str(c, me) + " both store " + B.name + "[" +
                                           std::to_string(is.off) + "] (index " + index_text(is.off, B.shape) + ") with equal values") +
           loc2_note(c) + (other ? format_diag(other->loc, "note", "instance " + pid_str(c, them) + " stores it here") : "") + "  buffer " +
           B.name + ": " + Type{B.dtype, false, B.shape}.str() + "; ";
  e.tail = " element stores in this run found the bits they store, stored there by another instance; first: lane " + lane_text(is.lane, tile) +
           " of pid " + pid_str(c, me) + "\n" +
           "  note: no write-write conflict: the element ends the same whichever store lands last (bit-identical values; different ones would conflict)\n" +
           loop_context(c);
  Finding f = finding_at(c, Finding::WriteWrite, loc, B, is);  // e.count is is.count here
  f.message = e.head + std::to_string(e.count) + e.tail;
  rs.report->warnings.push_back(std::move(f));
  rs.equal_stores.push_back(std::move(e));
  return static_cast<int64_t>(rs.report->warnings.size()) - 1;
}

void report_conflict(Ctx& c, SourceLoc loc, const Buffer& B, const Issue& is, int64_t active, bool storing, const Shape& tile) {
  auto me = c.f->pid, other = unlinear(is.other, c.f->grid);
  std::string elem = B.name + "[" + std::to_string(is.off) + "] (index " + index_text(is.off, B.shape) + ")";
  std::string head;
  Finding::Kind kind = Finding::ReadWrite;
  if (c.stmt && c.stmt->kind == StmtKind::Atomic) {
    head = "instance " + pid_str(c, me) + " updates " + elem + " atomically, which instance " + pid_str(c, other) +
           (is.other_wrote ? " stores" : " loads") + " in the same launch without an atomic";
    kind = is.other_wrote ? Finding::WriteWrite : Finding::ReadWrite;
  } else if (is.other_atomic) {
    head = "instance " + pid_str(c, me) + (storing ? " stores " : " loads ") + elem + ", which instance " + pid_str(c, other) +
           " updates atomically in the same launch";
    kind = storing ? Finding::WriteWrite : Finding::ReadWrite;
  } else if (storing && is.other_wrote) {
    head = "instances " + pid_str(c, other) + " and " + pid_str(c, me) + " both store " + elem;
    kind = Finding::WriteWrite;
  } else if (storing) {
    head = "instance " + pid_str(c, me) + " stores " + elem + ", which instance " + pid_str(c, other) + " loads in the same launch";
  } else {
    head = "instance " + pid_str(c, me) + " loads " + elem + ", which instance " + pid_str(c, other) + " stores in the same launch";
  }
  std::string note;
  const Kernel* k = c.f->kernel;
  if (is.other_stmt >= 0 && k && is.other_stmt < static_cast<int32_t>(k->stmts.size())) {
    const Stmt* os = k->stmts[static_cast<size_t>(is.other_stmt)];
    note = format_diag(os->loc, "note", std::string("instance ") + pid_str(c, other) + (is.other_atomic ? " updates" : is.other_wrote ? " stores" : " loads") + " it here");
  }
  std::string body = note + "  buffer " + B.name + ": " + Type{B.dtype, false, B.shape}.str() + "; " + std::to_string(is.count) + " of " +
                     std::to_string(active) + " active lanes conflict; first conflicting lane " + lane_text(is.lane, tile) + "\n";
  emit(c, kind, loc, head, body, B, is);
}

// Element codecs per buffer type: storage in the buffer (S) and in a Value (T).
template <Scalar E> struct Codec;
template <> struct Codec<Scalar::I1> { using S = uint8_t; using T = uint8_t; static T dec(S x) { return x; } static S enc(T x) { return x; } };
template <> struct Codec<Scalar::I8> { using S = int8_t; using T = int32_t; static T dec(S x) { return x; } static S enc(T x) { return static_cast<S>(x); } };
template <> struct Codec<Scalar::I16> { using S = int16_t; using T = int32_t; static T dec(S x) { return x; } static S enc(T x) { return static_cast<S>(x); } };
template <> struct Codec<Scalar::F8E4M3> { using S = uint8_t; using T = float; static T dec(S x) { return fp8_to_f32(Scalar::F8E4M3, x); } static S enc(T x) { return fp8_bits(Scalar::F8E4M3, x); } };
template <> struct Codec<Scalar::F8E5M2> { using S = uint8_t; using T = float; static T dec(S x) { return fp8_to_f32(Scalar::F8E5M2, x); } static S enc(T x) { return fp8_bits(Scalar::F8E5M2, x); } };
template <> struct Codec<Scalar::F8E4B15> { using S = uint8_t; using T = float; static T dec(S x) { return fp8_to_f32(Scalar::F8E4B15, x); } static S enc(T x) { return fp8_bits(Scalar::F8E4B15, x); } };
template <> struct Codec<Scalar::F8E4B8> { using S = uint8_t; using T = float; static T dec(S x) { return fp8_to_f32(Scalar::F8E4B8, x); } static S enc(T x) { return fp8_bits(Scalar::F8E4B8, x); } };
template <> struct Codec<Scalar::F8E5B16> { using S = uint8_t; using T = float; static T dec(S x) { return fp8_to_f32(Scalar::F8E5B16, x); } static S enc(T x) { return fp8_bits(Scalar::F8E5B16, x); } };
template <> struct Codec<Scalar::I32> { using S = int32_t; using T = int32_t; static T dec(S x) { return x; } static S enc(T x) { return x; } };
template <> struct Codec<Scalar::I64> { using S = int64_t; using T = int64_t; static T dec(S x) { return x; } static S enc(T x) { return x; } };
template <> struct Codec<Scalar::F16> { using S = uint16_t; using T = float; static T dec(S x) { return f16_to_f32(x); } static S enc(T x) { return f32_to_f16(x); } };
template <> struct Codec<Scalar::BF16> { using S = uint16_t; using T = float; static T dec(S x) { return bf16_to_f32(x); } static S enc(T x) { return f32_to_bf16(x); } };
template <> struct Codec<Scalar::F32> { using S = float; using T = float; static T dec(S x) { return x; } static S enc(T x) { return x; } };
template <> struct Codec<Scalar::F64> { using S = double; using T = double; static T dec(S x) { return x; } static S enc(T x) { return x; } };

template <class F> decltype(auto) with_codec(Scalar s, F&& f) {
  switch (s) {
    case Scalar::I1: return f(Codec<Scalar::I1>{});
    case Scalar::I8: return f(Codec<Scalar::I8>{});
    case Scalar::I16: return f(Codec<Scalar::I16>{});
    case Scalar::F8E4M3: return f(Codec<Scalar::F8E4M3>{});
    case Scalar::F8E5M2: return f(Codec<Scalar::F8E5M2>{});
    case Scalar::F8E4B15: return f(Codec<Scalar::F8E4B15>{});
    case Scalar::F8E4B8: return f(Codec<Scalar::F8E4B8>{});
    case Scalar::F8E5B16: return f(Codec<Scalar::F8E5B16>{});
    case Scalar::I32: return f(Codec<Scalar::I32>{});
    case Scalar::I64: return f(Codec<Scalar::I64>{});
    case Scalar::F16: return f(Codec<Scalar::F16>{});
    case Scalar::BF16: return f(Codec<Scalar::BF16>{});
    case Scalar::F32: return f(Codec<Scalar::F32>{});
    case Scalar::F64: return f(Codec<Scalar::F64>{});
  }
  return f(Codec<Scalar::F32>{});
}

struct Checks {
  bool report_bounds = false;
  uint8_t* init = nullptr;       // shadow bytes (null: buffer fully defined or not checked)
  ConflictMap* cm = nullptr;     // conflict tracking (null: not tracked)
};

Checks checks_for(Ctx& c, int bi) {
  Checks k;
  if (!c.rs) {
    k.report_bounds = true;
    return k;
  }
  Sanitize s = c.rs->opt->sanitize;
  k.report_bounds = s != Sanitize::None;
  if (tracks_conflicts(s)) {
    auto& in = c.rs->init[static_cast<size_t>(bi)];
    if (!in.empty()) k.init = in.data();  // (allocated only under All)
    auto& cm = c.rs->conflicts[static_cast<size_t>(bi)];
    if (cm.tracked && c.locks.empty()) k.cm = &cm;  // under a lock: ordered, not a conflict
    // after a release, each access keeps its epoch per element (spans keep an instance's first)
    if (k.cm && c.epoch > 0) k.cm->dense();
  }
  return k;
}

// Whether p[0..n) are consecutive offsets (p[o] == p[0] + o). The ends first: a tile whose last
// offset is not p[0] + n - 1 is no range, and most such tiles are told apart there.
bool contiguous(const int64_t* p, int64_t n) {
  if (n <= 0) return true;
  uint64_t b = static_cast<uint64_t>(p[0]), bad = 0;
  if (static_cast<uint64_t>(p[n - 1]) != b + static_cast<uint64_t>(n - 1)) return false;
  for (int64_t o = 0; o < n; ++o) bad |= static_cast<uint64_t>(p[o]) ^ (b + static_cast<uint64_t>(o));  // vectorizes
  return bad == 0;
}

// Whether each row of W lanes of p[0..n) holds consecutive offsets (one OR-reduction).
bool rows_contiguous(const int64_t* p, int64_t n, int64_t W) {
  uint64_t bad = 0;
  for (int64_t r = 0; r < n; r += W) {
    uint64_t b = static_cast<uint64_t>(p[r]);
    for (int64_t o = 0; o < W; ++o) bad |= static_cast<uint64_t>(p[r + o]) ^ (b + static_cast<uint64_t>(o));
  }
  return bad == 0;
}

// Whether every active lane of a contiguous range reads a written element (shadow bytes).
bool all_written(const uint8_t* sh, const uint8_t* pm, int64_t n) {
  bool ok = true;
  for (int64_t o = 0; o < n; ++o) ok &= (pm && !pm[o]) || std::atomic_ref<const uint8_t>(sh[o]).load(std::memory_order_relaxed) != 0;
  return ok;
}

// The length L of a mask that is a prefix of ones (lanes < L active, the others not), else -1.
// What `offs < n` gives for consecutive offsets: the first zero byte (memchr), then an
// OR-reduction over the rest (vectorizes).
int64_t prefix_len(const uint8_t* pm, int64_t n) {
  const void* z = std::memchr(pm, 0, static_cast<size_t>(n));
  if (!z) return n;
  int64_t L = static_cast<const uint8_t*>(z) - pm;
  uint8_t any = 0;
  for (int64_t o = L; o < n; ++o) any |= pm[o];
  return any ? -1 : L;
}

// Whether a load of `total` consecutive elements from `base` may be a plain range copy: the
// execution form, mask and other element-aligned (or a scalar other), the lanes read in bounds,
// and no per-element sanitizer work (no conflict tracking; every active lane reads a written
// element). On success `live` is the number of leading lanes read from memory and `pm` the mask
// still to apply to them (null when the mask is a prefix of `live` ones, or there is none).
// `mask`: the range's own mask bytes (null: none).
// `prefix` >= 0: the mask (then null) is that many leading ones.
bool range_load_ok(const Ctx& c, const Checks& ck, int64_t base, int64_t total, int64_t n, const uint8_t* mask, int64_t& live, const uint8_t*& pm,
                   int64_t prefix = -1) {
  if (!c.fast || ck.cm || total <= 0) return false;
  pm = mask;
  live = total;
  if (prefix >= 0) {
    live = prefix, pm = nullptr;
  } else if (pm) {
    int64_t L = prefix_len(pm, total);
    if (L >= 0) live = L, pm = nullptr;
  }
  if (live == 0) return true;
  if (base < 0 || base + live > n) return false;
  return !ck.init || all_written(ck.init + base, pm, live);
}

bool load_range_ok(const Ctx& c, const Checks& ck, int64_t base, int64_t total, int64_t n, const Value* mask, const Value* oth, int64_t& live,
                   const uint8_t*& pm, int64_t prefix = -1) {
  if (mask && numel(*mask) != total) return false;
  if (oth && numel(*oth) != total && numel(*oth) != 1) return false;
  return range_load_ok(c, ck, base, total, n, mask ? data<uint8_t>(*mask) : nullptr, live, pm, prefix);
}

// The range copy of a checked load: dst[o] = mask ? src[o] : other. The lanes below `live` are in
// bounds and read (the mask `pm` selects among them); the lanes from `live` on are masked off.
template <class C>
void copy_range(const typename C::S* src, typename C::T* dst, int64_t total, int64_t live, const uint8_t* pm, const typename C::T* po,
                int64_t ostep) {
  using T = typename C::T;
  T z = po ? po[0] : T(0);
  if (!pm) {
    for (int64_t o = 0; o < live; ++o) dst[o] = C::dec(src[o]);
    if (po && ostep)
      for (int64_t o = live; o < total; ++o) dst[o] = po[o];
    else
      for (int64_t o = live; o < total; ++o) dst[o] = z;
  } else if (!po || ostep == 0) {
    for (int64_t o = 0; o < total; ++o) {
      T v = C::dec(src[o]);
      dst[o] = pm[o] ? v : z;
    }
  } else {
    for (int64_t o = 0; o < total; ++o) {
      T v = C::dec(src[o]);
      dst[o] = pm[o] ? v : po[o];
    }
  }
}

// dst[o] = the value of lane o (`one`: a single value for every lane).
template <class C> void put_range(typename C::S* dst, const typename C::T* pv, int64_t total, bool one) {
  if (one) std::fill_n(dst, total, C::enc(pv[0]));
  else
    for (int64_t o = 0; o < total; ++o) dst[o] = C::enc(pv[o]);
}

// Claims the lanes of `total` consecutive elements at `base` (in bounds) that `pm` selects (null:
// every lane) for a range store by this instance and calls `store()`, which stores them: shadow
// bytes set, conflict span recorded (every lane active; claim_span) or (one thread) the per-element
// state checked for the whole range first and then claimed without atomics. False, having changed
// nothing, when the range conflicts or cannot be checked as a whole (the per-lane path then redoes
// everything and reports: claims by this instance are idempotent).
template <class Store>
bool claim_range(Ctx& c, const Checks& ck, int64_t base, int64_t total, const uint8_t* pm, Store&& store) {
  uint8_t* sh = ck.init ? ck.init + base : nullptr;
  bool parallel = !c.rs || c.rs->parallel;
  if (!ck.cm) {
    if (sh)
      for (int64_t o = 0; o < total; ++o)
        if (!pm || pm[o]) std::atomic_ref<uint8_t>(sh[o]).store(1, std::memory_order_relaxed);
    store();
    return true;
  }
  ConflictMap& cm = *ck.cm;
  const int32_t me = c.me, sid = c.stamp();
  // (range mode: the shadow bytes are set from the spans later, ConflictMap::init)
  if (!pm && !cm.is_dense.load(std::memory_order_acquire) && claim_span(cm, base, base + total, me, sid, parallel, store)) return true;
  cm.dense();
  if (parallel) return false;
  int32_t* wr = cm.writer.data() + base;
  bool readers = !cm.reader1.empty();
  const int32_t* r1 = readers ? cm.reader1.data() + base : nullptr;
  const int32_t* r2 = readers ? cm.reader2.data() + base : nullptr;
  // Lanes written or read by another instance (an OR-reduction: vectorizes; one loop per mask kind).
  auto conflicts = [&](auto lane) {
    int bad = 0;
    for (int64_t o = 0; o < total; ++o) {
      int other = (wr[o] != -1) & (wr[o] != me);
      if (readers) other |= ((r1[o] != -1) & (r1[o] != me)) | ((r2[o] != -1) & (r2[o] != me));
      bad |= lane(o) & other;
    }
    return bad;
  };
  if (pm ? conflicts([&](int64_t o) { return int(pm[o]); }) : conflicts([](int64_t) { return 1; })) return false;
  int32_t* ws = cm.wstmt.data() + base;
  for (int64_t o = 0; o < total; ++o) {
    if (pm && !pm[o]) continue;
    if (wr[o] == -1 || (wr[o] == me && stamp_epoch(sid) > 0)) wr[o] = me, ws[o] = sid;  // (its latest epoch)
    if (sh) sh[o] = 1;
  }
  store();
  return true;
}

// A store of `total` consecutive elements at `base` as a range, when the sanitizer can check it as
// a whole: no conflict tracking, or (one thread) a range that conflicts nowhere, which is then
// claimed without atomics. Returns false, having changed nothing, otherwise.
template <class C>
bool store_range_impl(Ctx& c, const Checks& ck, typename C::S* mem, int64_t base, int64_t total, int64_t n, const typename C::T* pv, const uint8_t* pm,
                      bool one = false, int64_t prefix = -1) {
  if (!c.fast || total <= 0) return false;
  if (pm || prefix >= 0) {  // a prefix mask: its active lanes are a shorter range
    int64_t L = prefix >= 0 ? prefix : prefix_len(pm, total);
    if (L >= 0) total = L, pm = nullptr;
    if (total == 0) return true;
  }
  if (base < 0 || base + total > n) return false;
  typename C::S* dstm = mem + base;
  return claim_range(c, ck, base, total, pm, [&] {
    if (!pm) put_range<C>(dstm, pv, total, one);
    else  // a mask that is no prefix: lane by lane over the range
      for (int64_t o = 0; o < total; ++o)
        if (pm[o]) dstm[o] = C::enc(pv[one ? 0 : o]);
  });
}

// Gathered rows miss the caches: requests the lines of row [f, f + W) of `mem` (for writing with
// Write) and of its init flags and writer words where given, so that their misses overlap the work
// on the row before.
template <bool Write, class S>
void prefetch_row(const S* mem, int64_t f, int64_t W, const uint8_t* init, const int32_t* writer) {
  for (int64_t j = 0; j < W; j += 64 / static_cast<int64_t>(sizeof(S))) __builtin_prefetch(mem + f + j, Write);
  if (writer)
    for (int64_t j = 0; j < W; j += 16) __builtin_prefetch(writer + f + j, 1);
  if (init)
    for (int64_t j = 0; j < W; j += 64) __builtin_prefetch(init + f + j);
}

// The row path of a load: row i (lanes i * W ..) read from the W consecutive elements at base(i),
// each row checked and copied as a range. False at the first row that does not qualify (the rows
// copied so far have no side effect).
// mrow(i, r): row i's W mask bytes (lanes r ..), null when all are set.
template <class C, class Base, class MaskRow>
bool load_rows(const Ctx& c, const Checks& ck, const typename C::S* mem, int64_t n, typename C::T* dst, int64_t total, int64_t W, Base base,
               MaskRow mrow, const typename C::T* po, int64_t ostep) {
  int64_t live;
  const uint8_t* lm;
  for (int64_t i = 0, r = 0; r < total; ++i, r += W) {
    const int64_t b = base(i);
    // Gathered rows miss the caches: the element and init lines of the next two rows are
    // requested now, so that their misses overlap this row's copy.
    for (int64_t k = 1; W >= 16 && k <= 2 && r + k * W < total; ++k) {
      const int64_t f = base(i + k);
      if (f >= 0 && f <= n - W) prefetch_row<false>(mem, f, W, ck.init, nullptr);
    }
    if (!range_load_ok(c, ck, b, W, n, mrow(i, r), live, lm)) return false;
    copy_range<C>(live ? mem + b : mem, dst + r, W, live, lm, po ? po + r * ostep : nullptr, ostep);
  }
  return true;
}

// The row masks of a whole-tile mask (null: none) for load_rows: a mask of all ones needs no
// per-row prefix scan.
auto full_mask_rows(const uint8_t* pm, int64_t total) {
  const uint8_t* rm = pm && std::memchr(pm, 0, static_cast<size_t>(total)) ? pm : nullptr;
  return [rm](int64_t, int64_t r) -> const uint8_t* { return rm ? rm + r : nullptr; };
}

// The row path of a store: row i stored at base(i) as a range (store_range_impl). False at the
// first row that does not qualify; the rows before it are stored and claimed.
template <class C, class Base>
bool store_rows(Ctx& c, const Checks& ck, typename C::S* mem, int64_t n, int64_t total, int64_t W, Base base, const typename C::T* pv, bool one,
                const uint8_t* pm) {
  const uint8_t* rm = pm && std::memchr(pm, 0, static_cast<size_t>(total)) ? pm : nullptr;
  if (!rm && c.fast && ck.cm && c.rs && !c.rs->parallel && W > 0 && total % W == 0) {
    // One thread, conflicts tracked as spans, every lane active: the rows claimed together, then
    // copied (what the row path below does row by row, with one search per shard, not per row).
    const int64_t R = total / W;
    thread_local std::vector<int64_t> bs;
    bs.resize(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; ++i) bs[static_cast<size_t>(i)] = base(i);
    if (bs[0] >= 0 && bs[static_cast<size_t>(R - 1)] <= n - W &&
        claim_rows(*ck.cm, bs.data(), R, W, c.me, c.stamp())) {
      for (int64_t i = 0, r = 0; i < R; ++i, r += W) put_range<C>(mem + bs[static_cast<size_t>(i)], one ? pv : pv + r, W, one);
      return true;
    }
  }
  for (int64_t i = 0, r = 0; r < total; ++i, r += W)
    if (!store_range_impl<C>(c, ck, mem, base(i), W, n, one ? pv : pv + r, rm ? rm + r : nullptr, one)) return false;
  return true;
}

// Whether rows of W lanes starting at bases[0..R) make one range (bases W apart, wrapping).
bool bases_contiguous(const std::vector<int64_t>& bases, int64_t W) {
  uint64_t b = static_cast<uint64_t>(bases[0]), bad = 0;
  for (size_t i = 0; i < bases.size(); ++i) bad |= static_cast<uint64_t>(bases[i]) ^ (b + static_cast<uint64_t>(i) * static_cast<uint64_t>(W));
  return bad == 0;
}

Buffer& buffer_of(Ctx& c, const Value& ptr) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  if (ptr.buffer < 0 || ptr.buffer >= static_cast<int>(bs->list.size())) internal_error("Interp", "pointer without a buffer");
  return bs->list[static_cast<size_t>(ptr.buffer)];
}

// ---- accesses through a pointer tile into several buffers (kMultiBuffer, Exec.h) ----
// The lanes of `ptr` (packed), broadcast to `shape`, split by buffer: per group, the pointer tile
// into its buffer (other lanes: offset 0) and the lanes of the access that use it (`mask`,
// broadcast, and the group's). Lanes out of every buffer go to a buffer of the element type with
// offsets out of it (so the access reports them as out of bounds). Without an active lane, one group
// with none. Each group is then one ordinary access, with every check of it.
struct LaneGroups {
  std::vector<Value> ptrs, sel;
};

LaneGroups group_lanes(Ctx& c, const Value& ptr, const Value* mask, const Shape& shape) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  const int nb = static_cast<int>(bs->list.size());
  int fallback = 0;
  for (int k = nb - 1; k >= 0; --k)
    if (bs->list[static_cast<size_t>(k)].dtype == ptr.type.elem) fallback = k;
  Value pt, mt;
  const Value& P = ptr.type.shape == shape ? ptr : (pt = broadcast_op(ptr, shape));
  const Value* M = !mask ? nullptr : mask->type.shape == shape ? mask : &(mt = broadcast_op(*mask, shape));
  const int64_t n = shape_numel(shape);
  const int64_t* pp = data<int64_t>(P);
  const uint8_t* pm = M ? data<uint8_t>(*M) : nullptr;
  std::vector<int> gid(static_cast<size_t>(n), -1), bufs;
  std::vector<int64_t> off(static_cast<size_t>(n), 0);
  int last = -1, lastg = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (pm && !pm[i]) continue;
    int b = packed_buffer(pp[i]);
    int64_t o = packed_offset(pp[i]);
    if (b < 0 || b >= nb) {  // null or stray (offset from address 0), or out of every buffer
      o = b == -1 && o >= 0 ? kNullOffset + o : INT64_MAX / 4;
      b = fallback;
    }
    if (b != last) {
      last = b;
      lastg = static_cast<int>(std::find(bufs.begin(), bufs.end(), b) - bufs.begin());
      if (lastg == static_cast<int>(bufs.size())) bufs.push_back(b);
    }
    gid[static_cast<size_t>(i)] = lastg;
    off[static_cast<size_t>(i)] = o;
  }
  if (bufs.empty()) bufs.push_back(fallback);
  LaneGroups G;
  for (size_t g = 0; g < bufs.size(); ++g) {
    Value& q = G.ptrs.emplace_back(alloc(Type{ptr.type.elem, true, shape}));
    Value& m = G.sel.emplace_back(alloc(Type{Scalar::I1, false, shape}));
    q.buffer = bufs[g];
    int64_t* pq = data<int64_t>(q);
    uint8_t* ps = data<uint8_t>(m);
    for (int64_t i = 0; i < n; ++i) {
      const bool mine = gid[static_cast<size_t>(i)] == static_cast<int>(g);
      pq[i] = mine ? off[static_cast<size_t>(i)] : 0;
      ps[i] = mine;
    }
  }
  return G;
}

// out[i] = part[i] where sel[i] (tiles of one type and shape).
void copy_lanes(Value& out, const Value& part, const Value& sel) {
  const uint8_t* ps = data<uint8_t>(sel);
  with_storage(storage_of(out.type.elem, out.type.ptr), [&](auto tag) {
    using T = decltype(tag);
    T* po = data<T>(out);
    const T* pp = data<T>(part);
    for (int64_t i = 0; i < numel(out); ++i)
      if (ps[i]) po[i] = pp[i];
    return 0;
  });
}

}  // namespace

void report_finding(Ctx& c, Finding f) {
  if (!c.rs) throw RuntimeFault(f.loc, f.message);
  RunState& rs = *c.rs;
  {
    std::lock_guard<std::mutex> lock(rs.mu);
    rs.report->findings_count++;
    if (rs.report->findings.size() < 20) rs.report->findings.push_back(f);
  }
  if (rs.opt->hooks && c.stmt) rs.opt->hooks->on_finding(*c.f, *c.stmt, f);
  if (!rs.opt->keep_going) {
    rs.stop = true;
    throw StopRun{};
  }
}

Value load_op(Ctx& c, const Expr& e, const Value& ptr, const Value* mask, const Value* other) {
  Value out;
  load_into(out, c, e, ptr, mask, other);
  return out;
}

void load_into(Value& out, Ctx& c, const Expr& e, const Value& ptr, const Value* mask, const Value* other) {
  if (ptr.buffer == kMultiBuffer) {  // one load per buffer, the lanes of each kept
    LaneGroups G = group_lanes(c, ptr, mask, e.type.shape);
    Value part;
    for (size_t g = 0; g < G.ptrs.size(); ++g) {
      load_into(g ? part : out, c, e, G.ptrs[g], &G.sel[g], other);
      if (g) copy_lanes(out, part, G.sel[g]);
    }
    return;
  }
  Buffer& B = buffer_of(c, ptr);
  const Type& rt = e.type;
  Value otmp;
  const Value* oth = other ? &coerce(*other, rt.elem, otmp) : nullptr;
  Checks ck = checks_for(c, ptr.buffer);
  if (ck.cm) ck.cm->dense();
  Issue oob, uninit, conf, past;
  if (!c.after.empty()) conf.after = &c.after;
  int64_t active = 0;
  const int64_t n = B.numel(), slack = B.slack;
  const int32_t me = c.me, sid = c.stamp();
  prep(out, rt);
  with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    using S = typename C::S;
    using T = typename C::T;
    const S* mem = B.as<S>();
    const int64_t* pp = data<int64_t>(ptr);
    const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
    const T* po = oth ? data<T>(*oth) : nullptr;
    T* dst = data<T>(out);
    auto lane = [&](int64_t o, int64_t ip, int64_t im, int64_t io) {
      if (pm && !pm[im]) {
        dst[o] = po ? po[io] : T(0);
        return;
      }
      ++active;
      int64_t off = pp[ip];
      if (off < 0 || off >= n) {
        if (off >= n && off < n + slack) {  // the caller's storage goes on: read, as a warning
          past.hit(o, off);
          dst[o] = C::dec(mem[off]);
          return;
        }
        oob.hit(o, off);
        dst[o] = po ? po[io] : T(0);
        return;
      }
      if (ck.init && !std::atomic_ref<uint8_t>(ck.init[off]).load(std::memory_order_relaxed)) uninit.hit(o, off);
      if (ck.cm) {
        size_t u = static_cast<size_t>(off);
        // An element this instance stored before (its own store, or an equal store of another's
        // bits) reads what it stored in every order: another instance's store of other bits is a
        // write-write finding, one of the same bits changes nothing. Not a read to track.
        if (aload(ck.cm->writer[u]) != me && !c.cowrote(ptr.buffer, off)) {
          if (!ck.cm->reader1.empty()) note_reader(*ck.cm, u, me, sid);
          int32_t w = aload(ck.cm->writer[u]);  // read again after the read is noted (several threads)
          if (int32_t who = other_writer(w, me); who != -1) note_conflict(conf, *ck.cm, u, w, who, o, off);
        }
      }
      dst[o] = C::dec(mem[off]);
    };
    int64_t total = numel(out);
    // Fast path: contiguous in-bounds pointers, mask and other element-aligned (or scalar other),
    // no per-element sanitizer state to update: a plain masked copy.
    int64_t base = total ? pp[0] : 0;
    int64_t live;
    const uint8_t* lm;
    if (numel(ptr) == total && contiguous(pp, total) && load_range_ok(c, ck, base, total, n, mask, oth, live, lm)) {
      copy_range<C>(live ? mem + base : mem, dst, total, live, lm, po, po && numel(*oth) == total ? 1 : 0);
      return 0;
    }
    // Row path: a tile of rows (the last axis) each of which is a contiguous range, checked and
    // copied row by row as above. A row that does not qualify sends the whole tile to the per-lane
    // path, which writes every lane again (the rows copied so far had no side effect).
    const int64_t W = rt.shape.empty() ? total : rt.shape.back();
    if (W >= 4 && W < total && numel(ptr) == total && (!pm || numel(*mask) == total) && (!po || numel(*oth) == total || numel(*oth) == 1)) {
      const int64_t ostep = po && numel(*oth) == total ? 1 : 0;
      if (rows_contiguous(pp, total, W) && load_rows<C>(c, ck, mem, n, dst, total, W, [pp, W](int64_t i) { return pp[i * W]; }, full_mask_rows(pm, total), po, ostep))
        return 0;
    }
    if (!pm && !po && numel(ptr) == total) {
      for (int64_t o = 0; o < total; ++o) lane(o, o, 0, 0);
    } else {
      std::array<Strides, 3> st{bstrides(ptr.type.shape, rt.shape), mask ? bstrides(mask->type.shape, rt.shape) : Strides{},
                                oth ? bstrides(oth->type.shape, rt.shape) : Strides{}};
      bloop<3>(dims_of(rt.shape), st, [&](int64_t o, const std::array<int64_t, 3>& ix) { lane(o, ix[0], ix[1], ix[2]); });
    }
    return 0;
  });
  SourceLoc loc = where_loc(c, e.loc);
  if (past.count) warn_past_end(c, loc, "load from", B, past, active, rt.shape);
  if (oob.count && ck.report_bounds)
    emit(c, Finding::OutOfBounds, loc, "out-of-bounds load from '" + B.name + "'" + oob.null_note(scalar_bytes(B.dtype)), access_details(c, B, oob, active, "out of bounds", rt.shape), B, oob);
  if (uninit.count)
    emit(c, Finding::Uninitialized, loc, "load of uninitialized memory from '" + B.name + "'",
         access_details(c, B, uninit, active, "read never-written elements", rt.shape), B, uninit);
  if (conf.count) report_conflict(c, loc, B, conf, active, false, rt.shape);
}

void store_op(Ctx& c, const Value& ptr, const Value& val, const Value* mask) {
  if (ptr.buffer == kMultiBuffer) {  // one store per buffer
    LaneGroups G = group_lanes(c, ptr, mask, ptr.type.shape);
    for (size_t g = 0; g < G.ptrs.size(); ++g) store_op(c, G.ptrs[g], val, &G.sel[g]);
    return;
  }
  Buffer& B = buffer_of(c, ptr);
  Value vtmp;
  const Value& v = coerce(val, B.dtype, vtmp);
  Checks ck = checks_for(c, ptr.buffer);
  Issue oob, conf, past, same;  // same: stores of the bits another instance stored (a warning)
  if (!c.after.empty()) conf.after = &c.after;
  int64_t active = 0;
  const int64_t n = B.numel(), slack = B.slack;
  const int32_t me = c.me, sid = c.stamp();
  const bool parallel = !c.rs || c.rs->parallel;
  const bool equal_warns = !(c.rs && c.rs->opt->equal_stores_conflict);  // else equal bits conflict too
  const Shape& ps = ptr.type.shape;
  with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    using S = typename C::S;
    using T = typename C::T;
    S* mem = B.as<S>();
    const int64_t* pp = data<int64_t>(ptr);
    const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
    const T* pv = data<T>(v);
    auto lane = [&](int64_t o, int64_t iv, int64_t im) {
      if (pm && !pm[im]) return;
      ++active;
      int64_t off = pp[o];
      if (off < 0 || off >= n) {
        if (off >= n && off < n + slack) {  // the caller's storage goes on: written, as a warning
          past.hit(o, off);
          mem[off] = C::enc(pv[iv]);
          return;
        }
        oob.hit(o, off);
        return;
      }
      bool fresh = false;  // this store claimed the element: it publishes it once stored
      if (ck.cm) {
        size_t u = static_cast<size_t>(off);
        int32_t cur = claim_writer(*ck.cm, u, me, sid, false);
        fresh = cur == -1;
        if (int32_t who = other_writer(cur, me); who == -1) {
          note_reader_conflict(conf, *ck.cm, u, me, o, off);
        } else if (cur < -1) {  // an atomic update: a conflict whatever the value
          note_conflict(conf, *ck.cm, u, cur, who, o, off);
        } else {
          // Another instance's plain store: a conflict unless it is ordered before this one, or
          // the element holds exactly the bits this store writes (the first writer's value, or an
          // equal one: stores that find different bits are reported and stop the run, and with
          // keep_going the last such value, which the next store is compared with). An equal
          // store changes nothing and is not made (with several threads the first writer may be
          // storing the element again: its value stays). With equal_stores_conflict, equal bits
          // conflict as different ones do.
          const int32_t st = writer_stamp(*ck.cm, u, parallel);
          if (conf.ordered(who, st)) {
            // synchronized: no conflict
          } else if (S now = std::atomic_ref<S>(mem[off]).load(std::memory_order_relaxed), mine = C::enc(pv[iv]);
                     equal_warns && std::memcmp(&now, &mine, sizeof(S)) == 0) {
            if (same.count == 0) same.other = who, same.other_stmt = stamp_stmt(st), same.other_wrote = true;
            same.hit(o, off);
            c.add_cowrite(ptr.buffer, off);
            note_reader_conflict(conf, *ck.cm, u, me, o, off);
            return;
          } else {
            note_conflict(conf, *ck.cm, u, cur, who, o, off);
          }
        }
      }
      if (ck.init) std::atomic_ref<uint8_t>(ck.init[off]).store(1, std::memory_order_relaxed);
      mem[off] = C::enc(pv[iv]);
      if (fresh) publish_writer(*ck.cm, static_cast<size_t>(off), sid);
    };
    int64_t total = shape_numel(ps);
    int64_t base = total ? pp[0] : 0;
    if ((numel(v) == total || numel(v) == 1) && (!pm || numel(*mask) == total) && contiguous(pp, total) &&
        store_range_impl<C>(c, ck, mem, base, total, n, pv, pm, numel(v) == 1 && total != 1))
      return 0;
    // Row path: each row (the last axis) a contiguous range stored as above. A row that does not
    // qualify changes nothing and sends the whole tile to the per-lane path, which stores the rows
    // already stored again (the same values; this instance's claims are idempotent) and reports.
    const int64_t W = ps.empty() ? total : ps.back();
    if (W >= 4 && W < total && (numel(v) == total || numel(v) == 1) && (!pm || numel(*mask) == total) && rows_contiguous(pp, total, W) &&
        store_rows<C>(c, ck, mem, n, total, W, [pp, W](int64_t i) { return pp[i * W]; }, pv, numel(v) == 1, pm))
      return 0;
    if (ck.cm) ck.cm->dense();
    if (!pm && numel(v) == total) {
      for (int64_t o = 0; o < total; ++o) lane(o, o, 0);
    } else {
      std::array<Strides, 2> st{bstrides(v.type.shape, ps), mask ? bstrides(mask->type.shape, ps) : Strides{}};
      bloop<2>(dims_of(ps), st, [&](int64_t o, const std::array<int64_t, 2>& ix) { lane(o, ix[0], ix[1]); });
    }
    return 0;
  });
  SourceLoc loc = where_loc(c, c.stmt ? c.stmt->loc : SourceLoc{});
  if (past.count) warn_past_end(c, loc, "store to", B, past, active, ps);
  if (oob.count && ck.report_bounds)
    emit(c, Finding::OutOfBounds, loc, "out-of-bounds store to '" + B.name + "'" + oob.null_note(scalar_bytes(B.dtype)), access_details(c, B, oob, active, "out of bounds", ps), B, oob);
  if (same.count) warn_equal_stores(c, loc, B, same, ps);
  if (conf.count) report_conflict(c, loc, B, conf, active, true, ps);
}

namespace {
// One atomic update of element value `e` (storage type T) by `v` (cas: `cmp`); OP is a template
// argument so that the update inlines into the lane loop.
template <AtomicOp OP, class T> inline T atomic_combine(T e, T v, T cmp) {
  constexpr bool F = std::is_floating_point_v<T>;
  if constexpr (OP == AtomicOp::Add) {
    return wadd<T>(e, v);
  } else if constexpr (OP == AtomicOp::Max || OP == AtomicOp::Min) {
    if constexpr (F) {
      // As the GPU (and Triton) order floats here: by their bits, signed where v's sign bit is
      // clear, unsigned (reversed) where it is set: the float order, NaNs placed by their bits.
      using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
      using UI = std::make_unsigned_t<I>;
      I bv, be;
      std::memcpy(&bv, &v, sizeof(T));
      std::memcpy(&be, &e, sizeof(T));
      bool take = bv >= 0 ? (OP == AtomicOp::Max ? bv > be : bv < be)
                          : (OP == AtomicOp::Max ? static_cast<UI>(bv) < static_cast<UI>(be) : static_cast<UI>(bv) > static_cast<UI>(be));
      return take ? v : e;
    } else {
      return OP == AtomicOp::Max ? (v > e ? v : e) : (v < e ? v : e);
    }
  } else if constexpr (OP == AtomicOp::UMax || OP == AtomicOp::UMin) {
    if constexpr (F) {
      internal_error("Interp", "unsigned atomic on floats");
    } else {
      using UT = std::make_unsigned_t<T>;
      bool gt = static_cast<UT>(v) > static_cast<UT>(e);
      return (OP == AtomicOp::UMax) == gt ? v : e;
    }
  } else if constexpr (OP == AtomicOp::And || OP == AtomicOp::Or || OP == AtomicOp::Xor) {
    if constexpr (F) {
      internal_error("Interp", "bitwise atomic on floats");
    } else {
      return static_cast<T>(OP == AtomicOp::And ? (e & v) : OP == AtomicOp::Or ? (e | v) : (e ^ v));
    }
  } else if constexpr (OP == AtomicOp::Xchg) {
    return v;
  } else {
    static_assert(OP == AtomicOp::Cas);
    return e == cmp ? v : e;
  }
}

// Calls f.template operator()<OP>() for the run-time atomic op (a missing case fails -Werror=switch).
template <class F> auto with_atomic_op(AtomicOp op, F&& f) {
  switch (op) {
    case AtomicOp::Add: return f.template operator()<AtomicOp::Add>();
    case AtomicOp::Max: return f.template operator()<AtomicOp::Max>();
    case AtomicOp::Min: return f.template operator()<AtomicOp::Min>();
    case AtomicOp::UMax: return f.template operator()<AtomicOp::UMax>();
    case AtomicOp::UMin: return f.template operator()<AtomicOp::UMin>();
    case AtomicOp::And: return f.template operator()<AtomicOp::And>();
    case AtomicOp::Or: return f.template operator()<AtomicOp::Or>();
    case AtomicOp::Xor: return f.template operator()<AtomicOp::Xor>();
    case AtomicOp::Xchg: return f.template operator()<AtomicOp::Xchg>();
    case AtomicOp::Cas: return f.template operator()<AtomicOp::Cas>();
  }
  internal_error("Interp", "bad atomic op");
}

// atomic_combine for the run-time op: a switch on a value fixed for the statement (well predicted).
// The lane loops of atomic_impl are compiled once per element type with this, not once per
// (element type, op): 110 copies of those loops were two thirds of this file's object code.
template <class T> inline __attribute__((always_inline)) T atomic_combine_rt(AtomicOp op, T e, T v, T cmp) {
  return with_atomic_op(op, [=]<AtomicOp OP>() __attribute__((always_inline)) { return atomic_combine<OP, T>(e, v, cmp); });
}

// One row of a one-thread atomic on consecutive elements with unit strides (value, mask): the
// elements are distinct, so the lanes' order does not matter, and with restrict pointers (the
// buffer's memory is never a tile's) the loop vectorizes. Returns the number of lanes on.
template <class C, AtomicOp OP>
int64_t update_row(typename C::S* __restrict m, const typename C::T* __restrict v, const uint8_t* __restrict mk, int64_t W) {
  using T = typename C::T;
  if (!mk) {
    for (int64_t j = 0; j < W; ++j) m[j] = C::enc(atomic_combine<OP, T>(C::dec(m[j]), v[j], T(0)));
    return W;
  }
  int64_t live = 0;
  for (int64_t j = 0; j < W; ++j) live += mk[j] != 0;
  for (int64_t j = 0; j < W; ++j) {
    T e = C::dec(m[j]);
    T r = atomic_combine<OP, T>(e, v[j], T(0));
    m[j] = C::enc(mk[j] ? r : e);
  }
  return live;
}
}  // namespace

// The lanes run in row-major order. With one thread (no other instance runs meanwhile) an update
// is a plain read-modify-write of the element, so float additions happen in lane order and the
// result is deterministic; with several threads it is a compare-and-swap loop. The conflict state
// is looked at per lane; where the buffer's loads are not tracked, an element already marked as
// some instance's atomic needs nothing more (atomics against atomics are legal): one load. Where the statement's old values are not used (no
// targets), none are made. The pointer tile (type `ptype`, buffer `buffer`) is `pp`, or the rows
// plus columns `rp` when every operand has its shape.
namespace {
// A scalar atomic with ordering `sem` on element `off` of buffer `bi` by instance c.me (SyncWords):
// acquire first (the word's release set joins Ctx::after), then release (the instance and its own
// `after` join the word's set).
// The caller holds SyncWords::mu from before the update itself, so that the word's set always
// matches the updates made to it (on several threads, another instance's update cannot land
// between this one's and its release).
void synchronize(Ctx& c, int bi, int64_t off, MemSem sem) {
  const bool acquire = sem == MemSem::AcqRel || sem == MemSem::Acquire, release = sem == MemSem::AcqRel || sem == MemSem::Release;
  if (!acquire && !release) return;
  IdRanges& word = c.rs->sync.words[{bi, off}];
  if (acquire) c.after.add(word);
  if (release) {
    word.add(c.me, c.me + 1, c.epoch);
    word.add(c.after);
    c.epoch = std::min(c.epoch + 1, kMaxEpoch);
  }
}

// `only` (optional, of the operands' broadcast shape): the lanes to update (the others are as if
// masked off; a cas has no mask of its own).
Value atomic_impl(Ctx& c, const Stmt& s, const Type& ptype, int buffer, const int64_t* pp, const RowPtr* rp, const Value& a1, const Value* a2,
                  const uint8_t* only = nullptr) {
  Value pbuf;
  pbuf.buffer = buffer;
  Buffer& B = buffer_of(c, pbuf);
  const bool cas = s.aop == AtomicOp::Cas;
  Value t1, t2;
  const Value& val = coerce(cas ? *a2 : a1, B.dtype, t1);
  const Value* cmp = cas ? &coerce(a1, B.dtype, t2) : nullptr;
  const Value* mask = cas ? nullptr : a2;
  Shape shape = ptype.shape;
  for (const Value* v : {&val, cmp, mask})
    if (v) shape = broadcast_shapes(shape, v->type.shape).value_or(shape);
  Type rt{B.dtype, false, shape};
  // The old values: needed for the statement's targets, and for a scalar cas or xchg (locks).
  const bool want_old = !s.targets.empty() || shape.empty();
  Value out;
  if (want_old) out = alloc(rt);
  Checks ck = checks_for(c, buffer);
  if (ck.cm) ck.cm->dense();
  Issue oob, uninit, conf, past;
  if (!c.after.empty()) conf.after = &c.after;
  int64_t active = 0;
  const int64_t n = B.numel(), slack = B.slack;
  const int32_t me = c.me, sid = c.stamp(), mine = atomic_mark(me);
  const bool seq = c.rs && !c.rs->parallel;
  bool took_lock = false;
  // a scalar atomic that may synchronize: its update and its release set change together
  const bool syncs = shape.empty() && ptype.is_scalar() && c.rs && tracks_conflicts(c.rs->opt->sanitize) && s.sem != MemSem::Relaxed;
  std::unique_lock<std::mutex> sync_hold;
  if (syncs && c.rs->parallel) sync_hold = std::unique_lock<std::mutex>(c.rs->sync.mu);
  with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    using S = typename C::S;
    using T = typename C::T;
    S* mem = B.as<S>();
    const T* pv = data<T>(val);
    const T* pc = cmp ? data<T>(*cmp) : nullptr;
    const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
    T* dst = want_old ? data<T>(out) : nullptr;
    std::array<Strides, 4> st{bstrides(ptype.shape, shape), bstrides(val.type.shape, shape), cmp ? bstrides(cmp->type.shape, shape) : Strides{},
                              mask ? bstrides(mask->type.shape, shape) : Strides{}};
    constexpr int L = kSlots - 1;
    const int64_t sp = st[0][L], sv = st[1][L], sc = st[2][L], sm = st[3][L];
    uint8_t* init = ck.init;
    ConflictMap* cm = ck.cm;
    const bool track_readers = cm && !cm->reader1.empty();
    const AtomicOp op = s.aop;
    // The lane loops below are compiled twice per element type: for atomic_add (the op of nearly
    // every real kernel's atomics: its update inlines into the loops) and for any other op (its
    // update a switch on the op, fixed for the statement). One copy per (type, op), 110 in all,
    // was two thirds of this file's object code and its compile time.
    auto body = [&]<bool AddOnly>() {
      auto combine = [&](T e, T v, T cv) __attribute__((always_inline)) -> T {
        return AddOnly ? atomic_combine<AtomicOp::Add, T>(e, v, cv) : atomic_combine_rt<T>(op, e, v, cv);
      };
      // One lane: output element o, operand elements ip, iv, ic, im. Returns the old value.
      auto lane = [&](int64_t o, int64_t off, int64_t iv, int64_t ic, int64_t im) __attribute__((always_inline)) -> T {
        if ((pm && !pm[im]) || (only && !only[o])) return T(0);
        ++active;
        bool beyond = false;
        if (off < 0 || off >= n) {
          if (off < 0 || off >= n + slack) {
            oob.hit(o, off);
            return T(0);
          }
          beyond = true;  // the caller's storage goes on: updated, as a warning
          past.hit(o, off);
        }
        size_t u = static_cast<size_t>(off);
        if (!beyond && init && !std::atomic_ref<uint8_t>(init[u]).load(std::memory_order_relaxed)) uninit.hit(o, off);
        if (!beyond && cm && (track_readers || std::atomic_ref<int32_t>(cm->writer[u]).load(std::memory_order_relaxed) >= -1)) {
          // another instance's plain store or load of the element conflicts; atomics do not
          int32_t cur = claim_writer(*cm, u, mine, sid);
          if (cur >= 0 && cur != me) note_conflict(conf, *cm, u, cur, cur, o, off);
          else note_reader_conflict(conf, *cm, u, me, o, off);
        }
        T v = pv[iv], cv = pc ? pc[ic] : T(0);
        T old;
        if (seq) {
          old = C::dec(mem[off]);
          mem[off] = C::enc(combine(old, v, cv));
        } else {
          std::atomic_ref<S> a(mem[off]);
          S so = a.load();
          while (!a.compare_exchange_weak(so, C::enc(combine(C::dec(so), v, cv)))) {
          }
          old = C::dec(so);
        }
        if (init && !beyond) std::atomic_ref<uint8_t>(init[u]).store(1, std::memory_order_relaxed);
        if (!AddOnly && op == AtomicOp::Cas && shape.empty() && old == cv && !(v == cv)) took_lock = true;
        return old;
      };
      // One thread, no old values: a row whose lanes address consecutive elements in bounds, all
      // written before and (where loads are not tracked) none stored by a plain store, is
      // updated in one pass; any other row takes the lanes one by one (the same order, the same
      // findings).
      // Through rows plus columns the row is consecutive when the columns are (RowPtr::consec).
      auto fast_row = [&](const std::array<int64_t, 4>& base, int64_t W) -> bool {
        if (!seq || dst || only || sp != 1 || track_readers || W < 8) return false;
        if (rp && !rp->consec) return false;
        const int64_t* p = rp ? nullptr : pp + base[0];
        const int64_t first = rp ? rp->bases[static_cast<size_t>(base[0] / W)] : p[0];
        if (first < 0 || first > n - W) return false;
        bool ok = true;
        if (!rp)
          for (int64_t j = 0; j < W; ++j) ok &= p[j] == first + j;
        if (!ok) return false;
        bool fresh = true;
        if (rp) {
          // Gathered rows miss the caches: the element, writer and init lines of the next two
          // rows are requested now, so that their misses overlap this row's work.
          const size_t i = static_cast<size_t>(base[0] / W);
          for (size_t k = i + 1; k <= i + 2 && k < rp->bases.size(); ++k) {
            const int64_t f = rp->bases[k];
            if (f >= 0 && f <= n - W) prefetch_row<true>(mem, f, W, init, cm ? cm->writer.data() : nullptr);
          }
        }
        if (init) {  // every element written before: the minimum of the row's flags is not 0
          uint8_t lo = 1;
          for (int64_t j = 0; j < W; ++j) lo = std::min(lo, init[first + j]);
          ok = lo != 0;
        }
        if (cm) {  // no plain store of any element (-1: none yet, <= -2: an instance's atomic): the
                   // AND of the row's writers is negative
          const int32_t* w = cm->writer.data() + first;
          int32_t all = -1, hi = INT32_MIN;
          for (int64_t j = 0; j < W; ++j) all &= w[j], hi = std::max(hi, w[j]);
          ok = ok && all < 0;
          fresh = hi == -1;  // some element not updated yet (else every one is an atomic's already)
        }
        if (!ok) return false;
        if (cm && fresh) {
          int32_t* w = cm->writer.data() + first;
          int32_t* ws = cm->wstmt.data() + first;
          for (int64_t j = 0; j < W; ++j)
            if (w[j] == -1 && (!pm || pm[base[3] + j * sm])) w[j] = mine, ws[j] = sid;
        }
        S* m = mem + first;
        const T* v = pv + base[1];
        const T* cv = pc ? pc + base[2] : nullptr;
        const uint8_t* mk = pm ? pm + base[3] : nullptr;
        // A row whose mask is all ones is updated as an unmasked one (the compiler turns the
        // masked loop's select into a branch per lane).
        if (mk && sm == 1 && !std::memchr(mk, 0, static_cast<size_t>(W))) mk = nullptr;
        int64_t live = 0;
        if (op != AtomicOp::Cas && sv == 1 && (!mk || sm == 1)) {  // unit strides: a loop the compiler vectorizes, one per op
          if constexpr (AddOnly) {
            active += update_row<C, AtomicOp::Add>(m, v, mk, W);
          } else {
            active += with_atomic_op(op, [&]<AtomicOp OP>() -> int64_t {
              if constexpr (OP == AtomicOp::Cas) return 0;  // not reached (cas takes the lanes below)
              else return update_row<C, OP>(m, v, mk, W);
            });
          }
          return true;
        }
        for (int64_t j = 0; j < W; ++j) {
          bool on = !mk || mk[j * sm];
          live += on;
          T e = C::dec(m[j]);
          T r = combine(e, v[j * sv], cv ? cv[j * sc] : T(0));
          m[j] = C::enc(on ? r : e);
        }
        active += live;
        return true;
      };
      brows<4>(dims_of(shape), st, [&](int64_t o, const std::array<int64_t, 4>& base, int64_t W) {
        if (fast_row(base, W)) return;
        if (rp) {  // row base[0] / W: rows[i] + cols[j]
          const int64_t ri = rp->rows[static_cast<size_t>(base[0] / W)];
          const int64_t* cj = rp->cols.data();
          if (dst)
            for (int64_t j = 0; j < W; ++j) dst[o + j] = lane(o + j, wadd(ri, cj[j]), base[1] + j * sv, base[2] + j * sc, base[3] + j * sm);
          else
            for (int64_t j = 0; j < W; ++j) lane(o + j, wadd(ri, cj[j]), base[1] + j * sv, base[2] + j * sc, base[3] + j * sm);
          return;
        }
        if (dst)
          for (int64_t j = 0; j < W; ++j) dst[o + j] = lane(o + j, pp[base[0] + j * sp], base[1] + j * sv, base[2] + j * sc, base[3] + j * sm);
        else
          for (int64_t j = 0; j < W; ++j) lane(o + j, pp[base[0] + j * sp], base[1] + j * sv, base[2] + j * sc, base[3] + j * sm);
      });
    };
    if (op == AtomicOp::Add) body.template operator()<true>();
    else body.template operator()<false>();
    return 0;
  });
  SourceLoc loc = where_loc(c, s.loc);
  const char* fn = atomicop_name(s.aop);
  if (past.count) warn_past_end(c, loc, (std::string(fn) + " on").c_str(), B, past, active, shape);
  if (oob.count && ck.report_bounds)
    emit(c, Finding::OutOfBounds, loc, std::string("out-of-bounds ") + fn + " on '" + B.name + "'" + oob.null_note(scalar_bytes(B.dtype)), access_details(c, B, oob, active, "out of bounds", shape), B, oob);
  if (uninit.count)
    emit(c, Finding::Uninitialized, loc, std::string(fn) + " of uninitialized memory in '" + B.name + "'",
         access_details(c, B, uninit, active, "updated never-written elements", shape), B, uninit);
  if (conf.count) report_conflict(c, loc, B, conf, active, true, shape);
  if (syncs && active && !oob.count) synchronize(c, buffer, pp[0], s.sem);
  if (sync_hold.owns_lock()) sync_hold.unlock();
  // A scalar cas that found the word at cmp took a lock; a scalar xchg on a held word gives it back.
  if (shape.empty() && ptype.is_scalar()) {
    std::pair<int, int64_t> word{buffer, pp[0]};
    if (took_lock) c.locks.push_back(word);
    else if (s.aop == AtomicOp::Xchg)
      for (auto it = c.locks.begin(); it != c.locks.end(); ++it)
        if (*it == word) {
          c.locks.erase(it);
          break;
        }
  }
  return out;
}
}  // namespace

Value atomic_op(Ctx& c, const Stmt& s, const Value& ptr, const Value& a1, const Value* a2) {
  if (ptr.buffer != kMultiBuffer) return atomic_impl(c, s, ptr.type, ptr.buffer, data<int64_t>(ptr), nullptr, a1, a2);
  // one update per buffer, the old values of each kept
  const bool cas = s.aop == AtomicOp::Cas;
  Shape shape = ptr.type.shape;
  for (const Value* v : {&a1, a2})
    if (v) shape = broadcast_shapes(shape, v->type.shape).value_or(shape);
  LaneGroups G = group_lanes(c, ptr, cas ? nullptr : a2, shape);
  Value out, part;
  for (size_t g = 0; g < G.ptrs.size(); ++g) {
    const Value* sel = &G.sel[g];
    (g ? part : out) = atomic_impl(c, s, G.ptrs[g].type, G.ptrs[g].buffer, data<int64_t>(G.ptrs[g]), nullptr, a1, cas ? a2 : sel, cas ? data<uint8_t>(*sel) : nullptr);
    if (g && (!s.targets.empty() || shape.empty())) copy_lanes(out, part, *sel);  // atomic_impl made old values
  }
  return out;
}

Value atomic_rowptr(Ctx& c, const Stmt& s, const RowPtr& p, const Type& ptype, const Value& a1, const Value* a2) {
  bool same = true;  // every operand of the pointer's shape or broadcast to it: the lanes are the RowPtr's
  for (const Value* v : {&a1, a2})
    if (v) same &= broadcast_shapes(ptype.shape, v->type.shape).value_or(Shape{}) == ptype.shape;
  if (same && p.buffer != kMultiBuffer) return atomic_impl(c, s, ptype, p.buffer, nullptr, &p, a1, a2);
  Value pt;
  p.make(pt, ptype);
  return atomic_op(c, s, pt, a1, a2);
}

namespace {
// Something to report (or check): the tile path, on one-element tiles.
__attribute__((noinline)) Raw load_scalar_checked(Ctx& c, const Expr& e, const Sv& ptr, const Sv* mask, const Raw* other) {
  Value p = box(e.args[0]->type, ptr), m, o;
  if (mask) m = box(e.args[1]->type, *mask);
  if (other) o = box(e.type, Sv{*other, -1});
  return raw_of(load_op(c, e, p, mask ? &m : nullptr, other ? &o : nullptr));
}
}  // namespace

Raw load_scalar(Ctx& c, const Expr& e, const Sv& ptr, const Sv* mask, const Raw* other) {
  Raw zero;
  zero.i64 = 0;
  if (mask && !mask->r.b) return other ? *other : zero;
  if (c.rs && ptr.buffer >= 0 && ptr.buffer < static_cast<int>(c.rs->binfo.size())) {
    const RunState::BufInfo& B = c.rs->binfo[static_cast<size_t>(ptr.buffer)];
    int64_t off = ptr.r.i64;
    size_t u = static_cast<size_t>(off);
    if (off >= 0 && off < B.numel && (!B.init || std::atomic_ref<uint8_t>(B.init[u]).load(std::memory_order_relaxed))) {
      ConflictMap* cm = c.locks.empty() ? B.cm : nullptr;
      if (cm) cm->dense();
      int32_t w = cm ? aload(cm->writer[u]) : -1;
      if (w == -1 || w == c.me) {  // an element it stored itself is not a read to track (load_into)
        if (cm && w == -1 && !cm->reader1.empty()) note_reader(*cm, u, c.me, c.stamp());
        if (B.dtype == Scalar::F32) return rmake<float>(reinterpret_cast<const float*>(B.data)[off]);
        return with_codec(B.dtype, [&](auto codec) {
          using C = decltype(codec);
          return rmake<typename C::T>(C::dec(reinterpret_cast<const typename C::S*>(B.data)[off]));
        });
      }
    }
  }
  return load_scalar_checked(c, e, ptr, mask, other);
}

namespace {
__attribute__((noinline)) void store_scalar_checked(Ctx& c, const Type& ptr_type, const Sv& ptr, const Type& val_type, Raw val, const Sv* mask) {
  Value p = box(ptr_type, ptr), v = box(val_type, Sv{val, -1}), m;
  if (mask) m = box(Type{Scalar::I1, false, {}}, *mask);
  store_op(c, p, v, mask ? &m : nullptr);
}
}  // namespace

void store_scalar(Ctx& c, const Type& ptr_type, const Sv& ptr, const Type& val_type, Raw val, const Sv* mask) {
  if (mask && !mask->r.b) return;
  if (c.rs && ptr.buffer >= 0 && ptr.buffer < static_cast<int>(c.rs->binfo.size())) {
    const RunState::BufInfo& B = c.rs->binfo[static_cast<size_t>(ptr.buffer)];
    int64_t off = ptr.r.i64;
    if (off >= 0 && off < B.numel) {
      Checks ck;
      ck.init = B.init;
      ck.cm = c.locks.empty() ? B.cm : nullptr;
      size_t u = static_cast<size_t>(off);
      bool clean = true, fresh = false;  // fresh: claimed here, published once stored (store_op)
      if (ck.cm) ck.cm->dense();
      if (ck.cm) {
        std::atomic_ref<int32_t> w(ck.cm->writer[u]);
        int32_t cur = w.load();
        if (cur != -1 && cur != c.me) clean = false;
        else if (!ck.cm->reader1.empty() && other_reader(*ck.cm, u, c.me).first != -1) clean = false;
        else if (cur == -1) {
          int32_t expect = -1;
          if (w.compare_exchange_strong(expect, c.me)) fresh = true;
          else clean = expect == c.me;
        } else if (c.epoch > 0) {
          std::atomic_ref<int32_t>(ck.cm->wstmt[u]).store(c.stamp(), std::memory_order_relaxed);  // its latest epoch
        }
      }
      if (clean) {
        Raw v = !val_type.ptr && val_type.elem == B.dtype ? val : convert_raw(val, val_type, B.dtype);
        if (ck.init) std::atomic_ref<uint8_t>(ck.init[u]).store(1, std::memory_order_relaxed);
        with_codec(B.dtype, [&](auto codec) {
          using C = decltype(codec);
          reinterpret_cast<typename C::S*>(B.data)[off] = C::enc(rget<typename C::T>(v));
          return 0;
        });
        if (fresh) publish_writer(*ck.cm, u, c.stamp());
        return;
      }
    }
  }
  store_scalar_checked(c, ptr_type, ptr, val_type, val, mask);
}

bool load_range(Value& out, Ctx& c, const Expr& e, int bi, int64_t base, const Value* mask, const Value* other, int64_t prefix) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  if (bi < 0 || bi >= static_cast<int>(bs->list.size())) return false;
  Buffer& B = bs->list[static_cast<size_t>(bi)];
  const Type& rt = e.type;
  if (other && (other->type.ptr || other->type.elem != rt.elem)) return false;
  int64_t total = rt.numel();
  Checks ck = checks_for(c, bi);
  int64_t live;
  const uint8_t* lm;
  if (!load_range_ok(c, ck, base, total, B.numel(), mask, other, live, lm, prefix)) return false;
  prep(out, rt);
  with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::T;
    const T* po = other ? data<T>(*other) : nullptr;
    const typename C::S* src = B.as<typename C::S>();
    copy_range<C>(live ? src + base : src, data<T>(out), total, live, lm, po, other && numel(*other) == total ? 1 : 0);
    return 0;
  });
  return true;
}

const void* load_range_view(Ctx& c, const Expr& e, int bi, int64_t base, const Value* mask, const Value* other, int64_t prefix) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  if (bi < 0 || bi >= static_cast<int>(bs->list.size())) return nullptr;
  Buffer& B = bs->list[static_cast<size_t>(bi)];
  const Type& rt = e.type;
  if (rt.ptr || B.dtype != rt.elem || is_narrow(rt.elem) || rt.elem == Scalar::I1) return nullptr;
  if (other && (other->type.ptr || other->type.elem != rt.elem)) return nullptr;
  int64_t total = rt.numel();
  Checks ck = checks_for(c, bi);
  int64_t live;
  const uint8_t* lm;
  if (!load_range_ok(c, ck, base, total, B.numel(), mask, other, live, lm, prefix) || live != total || lm) return nullptr;
  return B.data() + static_cast<size_t>(base) * static_cast<size_t>(scalar_bytes(rt.elem));
}

bool store_range_direct(Ctx& c, int bi, int64_t base, int64_t total, Scalar elem, const Value* mask, void (*produce)(void*, void*, int64_t), void* ctx,
                        int64_t prefix) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  if (!c.fast || total <= 0 || bi < 0 || bi >= static_cast<int>(bs->list.size())) return false;
  Buffer& B = bs->list[static_cast<size_t>(bi)];
  if (B.dtype != elem || is_narrow(elem) || (mask && numel(*mask) != total)) return false;
  int64_t live = total;
  if (mask || prefix >= 0) {
    live = prefix >= 0 ? prefix : prefix_len(data<uint8_t>(*mask), total);
    if (live < 0) return false;
    if (live == 0) return true;
  }
  if (base < 0 || base + live > B.numel()) return false;
  Checks ck = checks_for(c, bi);
  return claim_range(c, ck, base, live, nullptr, [&] { produce(ctx, B.data() + static_cast<size_t>(base) * static_cast<size_t>(scalar_bytes(elem)), live); });
}

bool store_range(Ctx& c, int bi, int64_t base, int64_t total, const Value& val, const Value* mask, int64_t prefix) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  if (bi < 0 || bi >= static_cast<int>(bs->list.size())) return false;
  Buffer& B = bs->list[static_cast<size_t>(bi)];
  if ((numel(val) != total && numel(val) != 1) || (mask && numel(*mask) != total)) return false;
  Value vtmp;
  const Value& v = coerce(val, B.dtype, vtmp);
  Checks ck = checks_for(c, bi);
  return with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    return store_range_impl<C>(c, ck, B.as<typename C::S>(), base, total, B.numel(), data<typename C::T>(v), mask ? data<uint8_t>(*mask) : nullptr,
                               numel(v) == 1 && total != 1, prefix);
  });
}

bool load_rowptr(Value& out, Ctx& c, const Expr& e, const RowPtr& p, const Value* mask, const Value* other, const OuterMask* om) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  const Type& rt = e.type;
  const int64_t W = static_cast<int64_t>(p.cols.size()), total = static_cast<int64_t>(p.rows.size()) * W;
  if (!p.consec || total <= 0 || total != rt.numel() || p.buffer < 0 || p.buffer >= static_cast<int>(bs->list.size())) return false;
  Buffer& B = bs->list[static_cast<size_t>(p.buffer)];
  Checks ck = checks_for(c, p.buffer);
  if (ck.cm) return false;  // conflict tracking: load_into's per-lane path
  Value otmp;
  const Value* oth = other ? &coerce(*other, rt.elem, otmp) : nullptr;
  prep(out, rt);
  const int64_t n = B.numel();
  return with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::T;
    const typename C::S* mem = B.as<typename C::S>();
    const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
    const T* po = oth ? data<T>(*oth) : nullptr;
    T* dst = data<T>(out);
    int64_t live;
    const uint8_t* lm;
    if (om) {  // row i's mask: the columns' where rows[i] is set, else none of its lanes
      if (!(W >= 4 && W < total) || (po && numel(*oth) != total && numel(*oth) != 1)) return false;
      thread_local std::vector<uint8_t> zeros;
      if (static_cast<int64_t>(zeros.size()) < W) zeros.assign(static_cast<size_t>(W), 0);
      const uint8_t* cols = std::memchr(om->cols, 0, static_cast<size_t>(W)) ? om->cols : nullptr;
      const uint8_t* none = zeros.data();
      const uint8_t* rows = om->rows;
      const int64_t* bp = p.bases.data();
      return load_rows<C>(c, ck, mem, n, dst, total, W, [bp](int64_t i) { return bp[i]; },
                          [rows, cols, none](int64_t i, int64_t) { return rows[i] ? cols : none; }, po, po && numel(*oth) == total ? 1 : 0);
    }
    // load_into's two range paths: the whole tile as one range, then row by row.
    if (bases_contiguous(p.bases, W) && load_range_ok(c, ck, p.bases[0], total, n, mask, oth, live, lm)) {
      copy_range<C>(live ? mem + p.bases[0] : mem, dst, total, live, lm, po, po && numel(*oth) == total ? 1 : 0);
      return true;
    }
    if (W >= 4 && W < total && (!pm || numel(*mask) == total) && (!po || numel(*oth) == total || numel(*oth) == 1)) {
      const int64_t* bp = p.bases.data();
      return load_rows<C>(c, ck, mem, n, dst, total, W, [bp](int64_t i) { return bp[i]; }, full_mask_rows(pm, total), po,
                          po && numel(*oth) == total ? 1 : 0);
    }
    return false;
  });
}

bool store_rowptr(Ctx& c, const RowPtr& p, const Value& val, const Value* mask) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  const int64_t W = static_cast<int64_t>(p.cols.size()), total = static_cast<int64_t>(p.rows.size()) * W;
  if (!p.consec || total <= 0 || p.buffer < 0 || p.buffer >= static_cast<int>(bs->list.size())) return false;
  Buffer& B = bs->list[static_cast<size_t>(p.buffer)];
  if ((numel(val) != total && numel(val) != 1) || (mask && numel(*mask) != total)) return false;
  Value vtmp;
  const Value& v = coerce(val, B.dtype, vtmp);
  Checks ck = checks_for(c, p.buffer);
  return with_codec(B.dtype, [&](auto codec) {
    using C = decltype(codec);
    typename C::S* mem = B.as<typename C::S>();
    const typename C::T* pv = data<typename C::T>(v);
    const uint8_t* pm = mask ? data<uint8_t>(*mask) : nullptr;
    const bool one = numel(v) == 1;
    // store_op's two range paths: the whole tile as one range, then row by row.
    if (bases_contiguous(p.bases, W) && store_range_impl<C>(c, ck, mem, p.bases[0], total, B.numel(), pv, pm, one && total != 1)) return true;
    const int64_t* bp = p.bases.data();
    return W >= 4 && W < total && store_rows<C>(c, ck, mem, B.numel(), total, W, [bp](int64_t i) { return bp[i]; }, pv, one, pm);
  });
}

// ---- addresses (IR.h, Addresses) ----

namespace {

std::string hex_address(uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

}  // namespace

Value int_to_ptr_op(Ctx& c, const Expr& e, const Value& addr) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  Value out = alloc(e.type);
  const int64_t* pa = data<int64_t>(addr);
  int64_t* po = data<int64_t>(out);
  const int64_t n = numel(addr);
  const uint64_t esz = static_cast<uint64_t>(scalar_bytes(e.dtype));
  auto holds = [&](int b, uint64_t a) {
    const Buffer& B = bs->list[static_cast<size_t>(b)];
    uint64_t base = reinterpret_cast<uintptr_t>(B.data());
    return B.size_bytes() > 0 && a >= base && a - base < B.size_bytes();
  };
  auto fault = [&](int64_t lane, const std::string& what) {
    throw RuntimeFault(e.loc, "int_to_ptr(): " + what + (n > 1 ? " (lane " + lane_text(lane, addr.type.shape) + ")" : ""));
  };
  // lane by lane: the buffer (-1: none) and the offset in it; lanes into several buffers are
  // packed afterwards (kMultiBuffer)
  std::vector<int> lane_buf(static_cast<size_t>(n), -1);
  int found = -1, last = -1;
  bool several = false;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t a = static_cast<uint64_t>(pa[i]);
    if (a == 0) {
      po[i] = kNullOffset;
      continue;
    }
    if (last < 0 || !holds(last, a)) {
      int b = -1;
      for (int k = 0; k < static_cast<int>(bs->list.size()) && b < 0; ++k)
        if (holds(k, a)) b = k;
      if (b < 0) {
        // an address in no buffer is a pointer that only its accesses make wrong (as on the GPU): it
        // is kept as the null pointer moved by a / element size lanes, out of bounds of every buffer
        // and given back exactly by ptr_to_int
        if (a % esz || a / esz >= static_cast<uint64_t>(kNullSpan))
          fault(i, "address " + hex_address(a) + " is in no buffer of this run and not aligned to " + scalar_name(e.dtype) + " elements");
        po[i] = kNullOffset + static_cast<int64_t>(a / esz);
        continue;
      }
      const Buffer& B = bs->list[static_cast<size_t>(b)];
      if (B.dtype != e.dtype)
        fault(i, "address " + hex_address(a) + " is in buffer '" + B.name + "' of " + scalar_name(B.dtype) + " elements, not " + scalar_name(e.dtype));
      last = b;
      if (found < 0) found = b;
      several = several || b != found;
    }
    const Buffer& B = bs->list[static_cast<size_t>(last)];
    uint64_t rel = a - reinterpret_cast<uintptr_t>(B.data());
    if (rel % esz) fault(i, "address " + hex_address(a) + " is not aligned to an element of '" + B.name + "'");
    po[i] = static_cast<int64_t>(rel / esz);
    lane_buf[static_cast<size_t>(i)] = last;
  }
  if (several) {  // a table of addresses into several tensors
    for (int64_t i = 0; i < n; ++i) po[i] = pack_offset(std::max(lane_buf[static_cast<size_t>(i)], 0), po[i]);
    out.buffer = kMultiBuffer;
    return out;
  }
  if (found < 0) {  // null or stray pointers only: any buffer of the element type will do, every access is out of bounds
    for (size_t k = 0; k < bs->list.size() && found < 0; ++k)
      if (bs->list[k].dtype == e.dtype) found = static_cast<int>(k);
    if (found < 0)
      throw RuntimeFault(e.loc, std::string("int_to_ptr(): pointers to ") + scalar_name(e.dtype) + " whose addresses are in no buffer (or null), in a run without a buffer of " +
                                    scalar_name(e.dtype) + " elements (the interpreter keeps such a pointer tile on a buffer of its element type)");
  }
  out.buffer = found;
  return out;
}

Value ptr_to_int_op(Ctx& c, const Value& p) {
  Buffers* bs = c.rs ? c.rs->buffers : c.f->buffers;
  Value out = alloc(Type{Scalar::I64, false, p.type.shape});
  const int64_t* pp = data<int64_t>(p);
  int64_t* po = data<int64_t>(out);
  const uint64_t esz = static_cast<uint64_t>(scalar_bytes(p.type.elem));
  const bool multi = p.buffer == kMultiBuffer;
  const uint64_t base = multi ? 0 : reinterpret_cast<uintptr_t>(buffer_of(c, p).data());
  for (int64_t i = 0; i < numel(p); ++i) {
    int64_t off = pp[i];
    uint64_t b = base;
    if (multi) {  // packed lanes (Exec.h): the lane's own buffer
      int k = packed_buffer(off);
      off = packed_offset(off);
      if (k < 0 || k >= static_cast<int>(bs->list.size())) off += kNullOffset;
      else b = reinterpret_cast<uintptr_t>(bs->list[static_cast<size_t>(k)].data());
    }
    bool null = null_offset(off);  // from a null address
    po[i] = null ? static_cast<int64_t>(static_cast<uint64_t>(off - kNullOffset) * esz)
                 : static_cast<int64_t>(b + static_cast<uint64_t>(off) * esz);
  }
  return out;
}

}  // namespace dtsim::exec
