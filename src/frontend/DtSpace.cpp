// The schedule space of a .dt program (DtSpace.h). A point is a fusion configuration (for every
// intermediate Func: fused into one of its consumers (Funcs that read it, directly or through
// others) at one of the consumer's loop levels, or
// materialized) and, for every kernel that configuration produces, the set of blocked dims and one
// digit per choice, in this order:
//   each blockable dim (output dims the kernel does not reduce over), in the Func's dim order:
//       blocked: an index into the (block, tile) pairs, tile <= block; unblocked: a tile index
//   each other dim of the kernel (reductions, dims of fused Funcs), in declaration order: a tile index
//   the map order (blocked dims >= 2: every order of them, each with no split or a split of the
//       slowest by each factor; the default order without a split is written as no map call)
//   num_warps, then num_stages (kernels with rdot: the cp.async pipeline's depth; the others: 1, or 3
//       for loads one loop iteration ahead, which any value >= 2 gives)
// Tiles and blocks are powers of two (tiles up to max_tile, or max_row_tile for a dim that a kernel
// without rdot reduces over); a tile at least the dim's size is written `tensorize(v:0)`
// (the whole dim), a tile of 1 is no tensorize at all. Points are numbered configuration by
// configuration, in each by subset of blocked dims (a mixed-radix number within).
#include "frontend/DtSpace.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "frontend/DtAst.h"

namespace dtsim {

namespace {

constexpr uint64_t kMaxPoints = uint64_t(1) << 62;

uint64_t mul_checked(uint64_t a, uint64_t b) {
  if (a && b > kMaxPoints / a) throw UserError("the schedule space has more than 2^62 points; give smaller sizes");
  return a * b;
}

std::vector<int64_t> pow2_upto(int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t t = 1; t <= hi; t *= 2) v.push_back(t);
  return v;
}

// Tile extents for an extent of `n` (a block size, or a dim's size rounded up to a power of two):
// powers of two from min(n, min_tile) to min(n, max) (max: the largest tile, max_tile unless given).
std::vector<int64_t> tile_choices(int64_t n, const DtSpaceLimits& lim, int64_t max = 0) {
  std::vector<int64_t> v;
  for (int64_t t = std::min(n, lim.min_tile); t <= std::min(n, max ? max : lim.max_tile); t *= 2) v.push_back(t);
  return v;
}

uint64_t factorial(size_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

// One kernel of a configuration: the Func it computes and its choices.
struct KernelSpace {
  std::string func;
  std::vector<std::string> blockable;                             // output dims not reduced here
  std::vector<std::vector<std::pair<int64_t, int64_t>>> blocked;  // per blockable dim: (block, tile)
  std::vector<std::vector<int64_t>> unblocked;                    // per blockable dim: tiles
  std::vector<std::string> tiled;                                 // the other dims of the kernel
  std::vector<std::vector<int64_t>> tiles;                        // per tiled dim
  bool has_dot = false;
  std::vector<uint64_t> subset_count;  // per subset of blockable dims (bit i = dim i blocked)
  uint64_t total = 0;

  // The radices of the digits for subset `s`.
  std::vector<uint64_t> radices(uint64_t s, const DtSpaceLimits& lim) const {
    std::vector<uint64_t> r;
    size_t nb = 0;
    for (size_t i = 0; i < blockable.size(); ++i) {
      bool on = (s >> i) & 1;
      nb += on;
      r.push_back(on ? blocked[i].size() : unblocked[i].size());
    }
    for (auto& t : tiles) r.push_back(t.size());
    r.push_back(nb >= 2 ? factorial(nb) * (1 + lim.splits.size()) : 1);
    r.push_back(lim.warps.size());
    r.push_back(has_dot ? lim.stages.size() : lim.loop_stages.size());
    return r;
  }
};

struct FuseOption {
  std::string consumer, level;  // consumer empty: materialized
};

struct Config {
  std::vector<size_t> choice;  // per intermediate: index into its options
  std::map<std::string, std::string> fuse_into;
  std::vector<KernelSpace> kernels;
  uint64_t total = 0;
};

}  // namespace

struct DtScheduleSpace::Impl {
  std::shared_ptr<DtProgram> base;
  DtSpaceLimits lim;
  std::vector<std::string> inter;                 // intermediate Funcs with consumers
  std::vector<std::vector<FuseOption>> options;   // per intermediate
  std::vector<Config> configs;
  std::vector<uint64_t> config_start;
  uint64_t total = 0;

  int64_t size_of(const std::string& d) const { return base->sym(d).size; }

  KernelSpace kernel_space(const std::string& f, const std::map<std::string, std::string>& fuse_into) const {
    KernelSpace k;
    k.func = f;
    std::set<std::string> dims;
    std::vector<std::string> red;
    for (const std::string& g : base->def_order) {
      std::string r = g;
      while (fuse_into.count(r)) r = fuse_into.at(r);
      if (r != f) continue;
      const DtSymbol& s = base->sym(g);
      dims.insert(s.dims.begin(), s.dims.end());
      dt_dims_used(s.def, dims);
      dt_reduced_dims(s.def, red);
      std::vector<DtExprP> stack{s.def};
      while (!stack.empty()) {
        DtExprP e = stack.back();
        stack.pop_back();
        if (e->kind == DtExprKind::Call && e->name == "rdot") k.has_dot = true;
        for (auto& a : e->args) stack.push_back(a);
      }
    }
    for (const std::string& d : base->sym(f).dims) {
      if (std::find(red.begin(), red.end(), d) != red.end()) continue;
      k.blockable.push_back(d);
      int64_t n = dt_next_pow2(size_of(d));
      std::vector<std::pair<int64_t, int64_t>> pairs;
      for (int64_t b : pow2_upto(std::min(n, lim.max_block)))
        for (int64_t t : tile_choices(b, lim)) pairs.push_back({b, t});
      k.blocked.push_back(pairs);
      k.unblocked.push_back(tile_choices(n, lim));
    }
    for (const DtSymbol& s : base->syms) {
      if ((s.kind != DtSymKind::Var && s.kind != DtSymKind::RVar) || !dims.count(s.name)) continue;
      if (std::find(k.blockable.begin(), k.blockable.end(), s.name) != k.blockable.end()) continue;
      k.tiled.push_back(s.name);
      // a dim reduced here without a dot may be one tile up to max_row_tile: the whole row at once
      bool row = !k.has_dot && std::find(red.begin(), red.end(), s.name) != red.end();
      k.tiles.push_back(tile_choices(dt_next_pow2(s.size), lim, row ? std::max(lim.max_tile, lim.max_row_tile) : 0));
    }
    uint64_t subsets = uint64_t(1) << k.blockable.size();
    for (uint64_t s = 0; s < subsets; ++s) {
      uint64_t c = 1;
      for (uint64_t r : k.radices(s, lim)) c = mul_checked(c, r);
      k.subset_count.push_back(c);
      k.total += c;
      if (k.total > kMaxPoints) throw UserError("the schedule space has more than 2^62 points; give smaller sizes");
    }
    return k;
  }

  void build() {
    for (const std::string& g : base->def_order) {
      const DtSymbol& s = base->sym(g);
      if (s.sched.compiled) continue;
      std::vector<FuseOption> opts;
      // Consumers: the Funcs that read g, directly or through other Funcs (g computed inside a later
      // consumer's loop, where the Funcs between read it, as attention.dt fuses e into attention).
      std::set<std::string> consumers = {g};
      for (const std::string& c : base->def_order) {
        std::set<std::string> reads;
        dt_collect_reads(base->sym(c).def, reads);
        bool reads_consumer = false;
        for (const std::string& r : reads) reads_consumer = reads_consumer || consumers.count(r);
        if (!reads_consumer || c == g) continue;
        consumers.insert(c);
        std::vector<std::string> levels = base->sym(c).dims;
        dt_reduced_dims(base->sym(c).def, levels);
        std::set<std::string> seen;
        for (const std::string& l : levels)
          if (seen.insert(l).second) opts.push_back({c, l});
      }
      if (opts.empty()) continue;  // read by nothing: not lowered
      if (lim.materialize) opts.push_back({"", ""});
      inter.push_back(g);
      options.push_back(opts);
    }
    std::vector<size_t> choice(inter.size(), 0);
    for (;;) {
      Config c;
      c.choice = choice;
      for (size_t i = 0; i < inter.size(); ++i)
        if (!options[i][choice[i]].consumer.empty()) c.fuse_into[inter[i]] = options[i][choice[i]].consumer;
      c.total = 1;
      for (const std::string& f : base->def_order) {
        if (c.fuse_into.count(f)) continue;
        const DtSymbol& s = base->sym(f);
        bool lowered = s.sched.compiled || std::find(inter.begin(), inter.end(), f) != inter.end();
        if (!lowered) continue;
        c.kernels.push_back(kernel_space(f, c.fuse_into));
        c.total = mul_checked(c.total, c.kernels.back().total);
      }
      config_start.push_back(total);
      total += c.total;
      if (total > kMaxPoints) throw UserError("the schedule space has more than 2^62 points; give smaller sizes");
      configs.push_back(std::move(c));
      size_t i = 0;
      for (; i < inter.size(); ++i) {
        if (++choice[i] < options[i].size()) break;
        choice[i] = 0;
      }
      if (i == inter.size()) break;
      if (configs.size() > 100000) throw UserError("the schedule space has more than 100000 fusion configurations");
    }
  }

  DtSpacePoint point(uint64_t index) const {
    if (index >= total) internal_error("DtScheduleSpace", "point index out of range");
    DtSpacePoint pt;
    pt.config = static_cast<size_t>(std::upper_bound(config_start.begin(), config_start.end(), index) - config_start.begin() - 1);
    const Config& c = configs[pt.config];
    uint64_t rest = index - config_start[pt.config];
    for (const KernelSpace& k : c.kernels) {
      uint64_t mine = rest % k.total;
      rest /= k.total;
      uint64_t s = 0;
      while (mine >= k.subset_count[s]) mine -= k.subset_count[s++];
      std::vector<uint32_t> d;
      for (uint64_t r : k.radices(s, lim)) {
        d.push_back(static_cast<uint32_t>(mine % r));
        mine /= r;
      }
      pt.subset.push_back(s);
      pt.digits.push_back(d);
    }
    return pt;
  }

  uint64_t index(const DtSpacePoint& pt) const {
    const Config& c = configs[pt.config];
    uint64_t idx = 0, scale = 1;
    for (size_t ki = 0; ki < c.kernels.size(); ++ki) {
      const KernelSpace& k = c.kernels[ki];
      uint64_t s = pt.subset[ki], mine = 0, place = 1;
      for (uint64_t i = 0; i < s; ++i) mine += k.subset_count[i];
      std::vector<uint64_t> r = k.radices(s, lim);
      for (size_t j = 0; j < r.size(); ++j) {
        mine += pt.digits[ki][j] * place;
        place *= r[j];
      }
      idx += mine * scale;
      scale *= k.total;
    }
    return config_start[pt.config] + idx;
  }

  // The schedule calls of a point (compile calls of the original program last).
  // The largest product of tile extents over the accesses and Func dims of kernel `k`'s members.
  int64_t largest_tile(const KernelSpace& k, const std::map<std::string, std::string>& fuse_into,
                       const std::map<std::string, int64_t>& tile_of) const {
    auto prod = [&](const std::vector<std::string>& dims) {
      int64_t p = 1;
      for (const std::string& d : dims) p *= tile_of.count(d) ? tile_of.at(d) : 1;
      return p;
    };
    int64_t best = 1;
    for (const std::string& g : base->def_order) {
      std::string r = g;
      while (fuse_into.count(r)) r = fuse_into.at(r);
      if (r != k.func) continue;
      const DtSymbol& s = base->sym(g);
      best = std::max(best, prod(s.dims));
      std::vector<DtExprP> stack{s.def};
      while (!stack.empty()) {
        DtExprP e = stack.back();
        stack.pop_back();
        if (e->kind == DtExprKind::Access) {
          std::vector<std::string> dims;
          for (auto& ix : e->args) dims.push_back(ix->name);
          best = std::max(best, prod(dims));
        }
        for (auto& a : e->args) stack.push_back(a);
      }
    }
    return best;
  }

  std::vector<DtSchedCall> calls(uint64_t index, std::map<std::string, int64_t>* coverage, int64_t* largest = nullptr) const {
    DtSpacePoint pt = point(index);
    const Config& c = configs[pt.config];
    std::vector<DtSchedCall> out;
    auto mk = [](const std::string& f, const std::string& prim) {
      DtSchedCall call;
      call.func = f;
      call.prim = prim;
      return call;
    };
    auto name_arg = [](const std::string& n) {
      DtSchedArg a;
      a.name = n;
      return a;
    };
    auto value_arg = [](const std::string& n, int64_t v) {
      DtSchedArg a;
      a.name = n;
      a.value = v;
      a.has_value = true;
      return a;
    };
    auto cover = [&](const std::string& d, int64_t e) {
      if (coverage) (*coverage)[d] = std::max((*coverage)[d], e);
    };
    for (size_t i = 0; i < inter.size(); ++i) {
      const FuseOption& o = options[i][c.choice[i]];
      if (o.consumer.empty()) continue;
      DtSchedCall call = mk(inter[i], "fuse_at");
      call.args = {name_arg(o.consumer), name_arg(o.level)};
      out.push_back(call);
    }
    for (size_t ki = 0; ki < c.kernels.size(); ++ki) {
      const KernelSpace& k = c.kernels[ki];
      uint64_t s = pt.subset[ki];
      const std::vector<uint32_t>& d = pt.digits[ki];
      DtSchedCall block = mk(k.func, "block"), tens = mk(k.func, "tensorize");
      std::vector<std::string> blocked;
      std::map<std::string, int64_t> block_of, tile_of;
      size_t j = 0;
      for (size_t i = 0; i < k.blockable.size(); ++i, ++j) {
        const std::string& dim = k.blockable[i];
        if ((s >> i) & 1) {
          auto [b, t] = k.blocked[i][d[j]];
          block.args.push_back(value_arg(dim, b));
          blocked.push_back(dim);
          block_of[dim] = b;
          if (t > 1) tens.args.push_back(value_arg(dim, t));
          cover(dim, b);
          tile_of[dim] = t;
        } else {
          int64_t t = k.unblocked[i][d[j]];
          if (t >= size_of(dim)) tens.args.push_back(value_arg(dim, 0));
          else if (t > 1) tens.args.push_back(value_arg(dim, t));
          cover(dim, t);
          tile_of[dim] = t;
        }
      }
      for (size_t i = 0; i < k.tiled.size(); ++i, ++j) {
        int64_t t = k.tiles[i][d[j]];
        if (t >= size_of(k.tiled[i])) tens.args.push_back(value_arg(k.tiled[i], 0));
        else if (t > 1) tens.args.push_back(value_arg(k.tiled[i], t));
        cover(k.tiled[i], t);
        tile_of[k.tiled[i]] = t;
      }
      if (largest) *largest = std::max(*largest, largest_tile(k, c.fuse_into, tile_of));
      if (!block.args.empty()) out.push_back(block);
      if (!tens.args.empty()) out.push_back(tens);
      uint32_t map = d[j++];
      if (blocked.size() >= 2) {
        size_t per_order = 1 + lim.splits.size();
        uint64_t perm_index = map / per_order, split = map % per_order;
        std::vector<std::string> order = blocked;
        for (uint64_t n = 0; n < perm_index; ++n) std::next_permutation(order.begin(), order.end());
        std::vector<std::string> dflt(blocked.rbegin(), blocked.rend());
        if (order != dflt || split) {
          DtSchedCall m = mk(k.func, "map");
          for (size_t i = 0; i < order.size(); ++i) {
            DtSchedArg a = name_arg(order[i]);
            if (i == 0 && split) {
              a.inner = order[0] + "_in";
              a.factor = lim.splits[split - 1];
              cover(order[0], block_of[order[0]] * a.factor);
            }
            m.args.push_back(a);
          }
          if (split) m.args.push_back(name_arg(order[0] + "_in"));
          out.push_back(m);
        }
      }
      DtSchedCall w = mk(k.func, "num_warps");
      w.args = {value_arg("", lim.warps[d[j++]])};
      out.push_back(w);
      uint32_t stage = d[j++];
      DtSchedCall st = mk(k.func, "num_stages");
      st.args = {value_arg("", k.has_dot ? lim.stages[stage] : lim.loop_stages[stage])};
      out.push_back(st);
    }
    for (const DtSchedCall& call : base->calls)
      if (call.prim == "compile" || call.prim == "compile_to_kernel") out.push_back(call);
    return out;
  }
};

namespace {
// The index of the choice nearest `want` (by ratio: the choices are powers of two or small counts).
template <class T, class F>
uint32_t nearest_choice(const std::vector<T>& choices, double want, F value) {
  uint32_t best = 0;
  double best_d = 1e300;
  for (size_t i = 0; i < choices.size(); ++i) {
    double v = static_cast<double>(value(choices[i]));
    double d = std::abs(std::log2(std::max(v, 0.5)) - std::log2(std::max(want, 0.5)));
    if (d < best_d - 1e-9) best_d = d, best = static_cast<uint32_t>(i);
  }
  return best;
}
}  // namespace

int64_t DtScheduleSpace::own_schedule() const {
  const Impl& m = *impl_;
  const DtProgram& p = *m.base;
  // The fusion configuration: each intermediate's fuse_at, or materialized.
  std::vector<size_t> choice;
  for (size_t i = 0; i < m.inter.size(); ++i) {
    const DtSchedule& s = p.sym(m.inter[i]).sched;
    size_t j = 0;
    while (j < m.options[i].size() &&
           !(m.options[i][j].consumer == s.fuse_into && (s.fuse_into.empty() || m.options[i][j].level == s.fuse_level)))
      ++j;
    if (j == m.options[i].size()) return -1;
    choice.push_back(j);
  }
  DtSpacePoint pt;
  while (pt.config < m.configs.size() && m.configs[pt.config].choice != choice) ++pt.config;
  if (pt.config == m.configs.size()) return -1;
  for (const KernelSpace& k : m.configs[pt.config].kernels) {
    const DtSchedule& s = p.sym(k.func).sched;
    auto tile_of = [&](const std::string& d, int64_t whole) -> double {
      auto it = s.tensorize.find(d);
      if (it == s.tensorize.end()) return 1;
      return it->second.first == 0 ? static_cast<double>(whole) : static_cast<double>(it->second.first);
    };
    uint64_t subset = 0;
    std::vector<uint32_t> digits;
    std::vector<std::string> blocked;
    for (size_t i = 0; i < k.blockable.size(); ++i) {
      const std::string& d = k.blockable[i];
      int64_t whole = dt_next_pow2(m.size_of(d));
      auto b = std::find_if(s.block.begin(), s.block.end(), [&](const auto& x) { return x.first == d; });
      if (b == s.block.end()) {
        digits.push_back(nearest_choice(k.unblocked[i], tile_of(d, whole), [](int64_t t) { return t; }));
        continue;
      }
      subset |= uint64_t(1) << i;
      blocked.push_back(d);
      double want_b = static_cast<double>(b->second), want_t = std::min(tile_of(d, b->second), want_b);
      // nearest block first, then the nearest tile among that block's pairs
      int64_t blk = k.blocked[i][nearest_choice(k.blocked[i], want_b, [](const auto& pr) { return pr.first; })].first;
      digits.push_back(nearest_choice(k.blocked[i], want_t, [&](const auto& pr) {
        return pr.first == blk ? static_cast<double>(pr.second) : HUGE_VAL;
      }));
    }
    for (size_t i = 0; i < k.tiled.size(); ++i)
      digits.push_back(nearest_choice(k.tiles[i], tile_of(k.tiled[i], dt_next_pow2(m.size_of(k.tiled[i]))), [](int64_t t) { return t; }));
    // The map digit: the order of the blocked dims (as calls() numbers them) and the split.
    uint32_t map = 0;
    if (blocked.size() >= 2) {
      std::vector<std::string> want(blocked.rbegin(), blocked.rend());  // no map call: the default order
      int64_t factor = 0;
      if (!s.map.empty()) {
        std::vector<std::string> order;
        for (const DtMapItem& it : s.map)
          if (!it.is_inner && std::find(blocked.begin(), blocked.end(), it.dim) != blocked.end()) order.push_back(it.dim);
        if (order.size() == blocked.size()) want = order;
        if (!s.map.empty() && s.map[0].factor > 0) factor = s.map[0].factor;
      }
      size_t per_order = 1 + m.lim.splits.size();
      uint64_t perms = factorial(blocked.size());
      std::vector<std::string> order = blocked;
      uint64_t perm = 0;
      for (uint64_t n = 0; n < perms && order != want; ++n, ++perm) std::next_permutation(order.begin(), order.end());
      if (order != want) perm = 0;
      uint32_t split = 0;
      if (factor > 0)
        split = 1 + nearest_choice(m.lim.splits, static_cast<double>(factor), [](int64_t f) { return f; });
      map = static_cast<uint32_t>(perm * per_order + split);
    }
    digits.push_back(map);
    digits.push_back(nearest_choice(m.lim.warps, s.num_warps, [](int w) { return w; }));
    if (k.has_dot) digits.push_back(nearest_choice(m.lim.stages, s.num_stages, [](int st) { return st; }));
    else digits.push_back(nearest_choice(m.lim.loop_stages, s.num_stages >= 2 ? 3 : 1, [](int st) { return st; }));
    pt.subset.push_back(subset);
    pt.digits.push_back(digits);
  }
  return static_cast<int64_t>(m.index(pt));
}

namespace {
// A schedule of one kernel as the seeds give it: per blockable dim a block and tile (block 0:
// unblocked, in tiles of the tile, 0: the largest), a tile for the other dims, warps, stages.
struct KernelWish {
  std::vector<std::pair<int64_t, int64_t>> blockable;
  int64_t other_tile = 0;  // 0: the whole dim (up to the largest tile)
  int warps = 4, stages = 1;
};

// The seeds' templates for one kernel (docs/tune.md, "seeds"): dots, row reductions, elementwise.
std::vector<KernelWish> kernel_wishes(const KernelSpace& k) {
  std::vector<KernelWish> out;
  size_t nb = k.blockable.size();
  if (k.has_dot) {
    // (first output dim, second, K tile, warps, stages); further output dims (batches) blocked by 1
    const int64_t t[][5] = {{128, 128, 64, 8, 3}, {128, 256, 64, 8, 3}, {256, 128, 64, 8, 3}, {128, 128, 32, 8, 4},
                            {64, 128, 64, 4, 3},  {128, 64, 64, 4, 3},  {64, 64, 64, 4, 3},   {128, 128, 64, 4, 4}};
    for (const auto& row : t) {
      KernelWish w;
      for (size_t i = 0; i < nb; ++i) {
        int64_t b = i == 0 ? row[0] : i == 1 ? row[1] : 1;
        w.blockable.push_back({b, b});
      }
      w.other_tile = row[2];
      w.warps = static_cast<int>(row[3]);
      w.stages = static_cast<int>(row[4]);
      out.push_back(w);
    }
  } else if (!k.tiled.empty()) {
    // row reductions: (rows per instance, tile of the reduced dims (0: whole), warps, stages); a
    // last output dim that is not reduced (a row written whole) unblocked, in the largest tiles
    const int64_t t[][4] = {{1, 0, 8, 1}, {1, 0, 4, 1}, {1, 0, 16, 1}, {2, 0, 8, 1}, {4, 0, 8, 1}, {1, 512, 8, 3}, {8, 0, 16, 1}, {1, 0, 32, 1}};
    for (const auto& row : t) {
      KernelWish w;
      for (size_t i = 0; i < nb; ++i) w.blockable.push_back(i + 1 == nb && nb >= 2 ? std::pair<int64_t, int64_t>{0, row[1]} : std::pair{row[0], row[0]});
      w.other_tile = row[1];
      w.warps = static_cast<int>(row[2]);
      w.stages = static_cast<int>(row[3]);
      out.push_back(w);
    }
  } else {
    // elementwise: (block of the last dim, its tile, warps); the other dims blocked by 1
    const int64_t t[][3] = {{1024, 1024, 4}, {2048, 1024, 8}, {4096, 1024, 8}, {1024, 1024, 8}, {512, 512, 4}, {4096, 1024, 16}};
    for (const auto& row : t) {
      KernelWish w;
      for (size_t i = 0; i < nb; ++i) w.blockable.push_back(i + 1 == nb ? std::pair{row[0], row[1]} : std::pair<int64_t, int64_t>{1, 1});
      w.warps = static_cast<int>(row[2]);
      out.push_back(w);
    }
  }
  return out;
}
}  // namespace

namespace {
// The seeds' points of configuration `config` (each template of each kernel, the kernels' lists
// cycled to the longest), appended to `out` when new.
void add_seeds(const DtScheduleSpace::Impl& m, size_t config, std::vector<uint64_t>& out);
}  // namespace

std::vector<uint64_t> DtScheduleSpace::seeds() const {
  const Impl& m = *impl_;
  size_t config = 0;
  if (int64_t own = own_schedule(); own >= 0) config = m.point(static_cast<uint64_t>(own)).config;
  std::vector<uint64_t> out;
  // First, the configuration that fuses every intermediate into a compiled Func at its outermost
  // dim, when it is not the file's and has a row reduction: the whole row in one instance of one
  // kernel, read once (rmsnorm.dt materializes its row statistic, so its own kernels read the row
  // twice).
  std::vector<size_t> outer;
  for (size_t i = 0; i < m.inter.size() && outer.size() == i; ++i)
    for (size_t j = 0; j < m.options[i].size(); ++j) {
      const FuseOption& o = m.options[i][j];
      if (o.consumer.empty()) continue;
      const DtSymbol& c = m.base->sym(o.consumer);
      if (c.sched.compiled && !c.dims.empty() && o.level == c.dims[0]) {
        outer.push_back(j);
        break;
      }
    }
  if (outer.size() == m.inter.size())
    for (size_t k = 0; k < m.configs.size(); ++k) {
      if (k == config || m.configs[k].choice != outer) continue;
      bool rows = std::any_of(m.configs[k].kernels.begin(), m.configs[k].kernels.end(),
                              [](const KernelSpace& ks) { return !ks.has_dot && !ks.tiled.empty(); });
      if (rows) add_seeds(m, k, out);
    }
  add_seeds(m, config, out);
  return out;
}

namespace {
void add_seeds(const DtScheduleSpace::Impl& m, size_t config, std::vector<uint64_t>& out) {
  const Config& c = m.configs[config];
  std::vector<std::vector<KernelWish>> wishes;
  size_t count = 0;
  for (const KernelSpace& k : c.kernels) {
    wishes.push_back(kernel_wishes(k));
    count = std::max(count, wishes.back().size());
  }
  for (size_t t = 0; t < count; ++t) {
    DtSpacePoint pt;
    pt.config = config;
    for (size_t ki = 0; ki < c.kernels.size(); ++ki) {
      const KernelSpace& k = c.kernels[ki];
      const KernelWish& w = wishes[ki][t % wishes[ki].size()];
      uint64_t subset = 0;
      std::vector<uint32_t> digits;
      for (size_t i = 0; i < k.blockable.size(); ++i) {
        auto [b, tile] = w.blockable[i];
        if (b == 0) {  // unblocked, in tiles of `tile` (0: the largest)
          double want = tile ? static_cast<double>(tile) : static_cast<double>(k.unblocked[i].back());
          digits.push_back(nearest_choice(k.unblocked[i], want, [](int64_t v) { return v; }));
          continue;
        }
        subset |= uint64_t(1) << i;
        int64_t blk = k.blocked[i][nearest_choice(k.blocked[i], static_cast<double>(b), [](const auto& pr) { return pr.first; })].first;
        digits.push_back(nearest_choice(k.blocked[i], static_cast<double>(std::min(tile, blk)), [&](const auto& pr) {
          return pr.first == blk ? static_cast<double>(pr.second) : HUGE_VAL;
        }));
      }
      for (size_t i = 0; i < k.tiled.size(); ++i) {
        double want = w.other_tile ? static_cast<double>(w.other_tile) : static_cast<double>(k.tiles[i].back());
        digits.push_back(nearest_choice(k.tiles[i], want, [](int64_t v) { return v; }));
      }
      digits.push_back(0);  // the default map order
      digits.push_back(nearest_choice(m.lim.warps, w.warps, [](int v) { return v; }));
      if (k.has_dot) digits.push_back(nearest_choice(m.lim.stages, w.stages, [](int v) { return v; }));
      else digits.push_back(nearest_choice(m.lim.loop_stages, w.stages, [](int v) { return v; }));
      pt.subset.push_back(subset);
      pt.digits.push_back(digits);
    }
    uint64_t i = m.index(pt);
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
}

}  // namespace

DtScheduleSpace::DtScheduleSpace(const DtProgram& p, const DtSpaceLimits& limits) : impl_(std::make_unique<Impl>()) {
  impl_->base = std::make_shared<DtProgram>(p);
  impl_->lim = limits;
  try {
    impl_->build();
  } catch (const UserError&) {
    if (!limits.materialize) throw;
    // Materialized intermediates multiply the space by their own kernels' choices: without them.
    impl_ = std::make_unique<Impl>();
    impl_->base = std::make_shared<DtProgram>(p);
    impl_->lim = limits;
    impl_->lim.materialize = false;
    impl_->build();
  }
}

DtScheduleSpace::~DtScheduleSpace() = default;

uint64_t DtScheduleSpace::size() const { return impl_->total; }
size_t DtScheduleSpace::configs() const { return impl_->configs.size(); }

std::string DtScheduleSpace::describe() const {
  const Impl& m = *impl_;
  std::ostringstream os;
  os << m.configs.size() << " fusion configuration(s)";
  if (!m.lim.materialize) os << " (no materialized intermediates: with them the space exceeds 2^62)";
  for (size_t i = 0; i < m.inter.size(); ++i) {
    os << (i ? "; " : ": ") << m.inter[i] << " ";
    for (size_t j = 0; j < m.options[i].size(); ++j) {
      const FuseOption& o = m.options[i][j];
      os << (j ? " | " : "") << (o.consumer.empty() ? "materialized" : "at " + o.consumer + "." + o.level);
    }
  }
  os << "\n";
  const Config& c = m.configs.front();
  for (const KernelSpace& k : c.kernels) {
    os << "  kernel " << k.func << " (first configuration): ";
    for (size_t i = 0; i < k.blockable.size(); ++i)
      os << "block/tile " << k.blockable[i] << " " << k.blocked[i].size() << "+" << k.unblocked[i].size() << ", ";
    for (size_t i = 0; i < k.tiled.size(); ++i) os << "tile " << k.tiled[i] << " " << k.tiles[i].size() << ", ";
    os << "num_warps " << m.lim.warps.size() << ", num_stages " << (k.has_dot ? m.lim.stages.size() : m.lim.loop_stages.size());
    os << ", map orders of the blocked dims; " << k.total << " schedule(s)\n";
  }
  return os.str();
}

DtSpacePoint DtScheduleSpace::point(uint64_t index) const { return impl_->point(index); }
uint64_t DtScheduleSpace::index(const DtSpacePoint& pt) const { return impl_->index(pt); }

std::vector<uint64_t> DtScheduleSpace::neighbours(uint64_t index) const {
  const Impl& m = *impl_;
  DtSpacePoint pt = m.point(index);
  const Config& c = m.configs[pt.config];
  std::vector<uint64_t> out;
  auto add = [&](const DtSpacePoint& q) {
    uint64_t i = m.index(q);
    if (i != index && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  for (size_t ki = 0; ki < c.kernels.size(); ++ki) {
    const KernelSpace& k = c.kernels[ki];
    std::vector<uint64_t> r = k.radices(pt.subset[ki], m.lim);
    size_t map_digit = k.blockable.size() + k.tiled.size();
    // Blocking a dim with its tile as the block, or unblocking a blocked dim keeping its tile (the
    // map order back to the default, since the blocked dims change).
    for (size_t j = 0; j < k.blockable.size(); ++j) {
      DtSpacePoint q = pt;
      q.subset[ki] ^= uint64_t(1) << j;
      q.digits[ki][map_digit] = 0;
      if ((pt.subset[ki] >> j) & 1) {
        int64_t t = k.blocked[j][pt.digits[ki][j]].second;
        auto it = std::find(k.unblocked[j].begin(), k.unblocked[j].end(), t);
        if (it == k.unblocked[j].end()) continue;
        q.digits[ki][j] = static_cast<uint32_t>(it - k.unblocked[j].begin());
      } else {
        int64_t t = k.unblocked[j][pt.digits[ki][j]];
        auto it = std::find(k.blocked[j].begin(), k.blocked[j].end(), std::pair<int64_t, int64_t>{t, t});
        if (it == k.blocked[j].end()) continue;
        q.digits[ki][j] = static_cast<uint32_t>(it - k.blocked[j].begin());
      }
      add(q);
    }
    for (size_t j = 0; j < r.size(); ++j) {
      bool blocked_dim = j < k.blockable.size() && ((pt.subset[ki] >> j) & 1);
      if (blocked_dim) {  // block doubled or halved (tile kept when it fits), tile doubled or halved
        const auto& pairs = k.blocked[j];
        auto [b, t] = pairs[pt.digits[ki][j]];
        for (auto [nb, nt] : {std::pair{b * 2, t}, std::pair{b / 2, std::min(t, b / 2)}, std::pair{b, t * 2}, std::pair{b, t / 2}}) {
          auto it = std::find(pairs.begin(), pairs.end(), std::pair<int64_t, int64_t>{nb, nt});
          if (it == pairs.end()) continue;
          DtSpacePoint q = pt;
          q.digits[ki][j] = static_cast<uint32_t>(it - pairs.begin());
          add(q);
        }
        continue;
      }
      for (int step : {-1, 1}) {
        int64_t v = static_cast<int64_t>(pt.digits[ki][j]) + step;
        if (v < 0 || v >= static_cast<int64_t>(r[j])) continue;
        DtSpacePoint q = pt;
        q.digits[ki][j] = static_cast<uint32_t>(v);
        add(q);
      }
    }
  }
  return out;
}

std::shared_ptr<DtProgram> DtScheduleSpace::apply(uint64_t index, std::string* text) const {
  auto q = std::make_shared<DtProgram>(*impl_->base);
  q->calls = impl_->calls(index, nullptr);
  if (text) {
    text->clear();
    for (const DtSchedCall& c : q->calls) *text += dt_call_str(c) + "\n";
  }
  dt_apply_schedule(*q);
  return q;
}

std::shared_ptr<DtProgram> DtScheduleSpace::apply_to(const DtProgram& sized, uint64_t index) const {
  auto q = std::make_shared<DtProgram>(sized);
  q->calls = impl_->calls(index, nullptr);
  dt_apply_schedule(*q);
  return q;
}

std::map<std::string, int64_t> DtScheduleSpace::coverage(uint64_t index) const {
  std::map<std::string, int64_t> out;
  (void)impl_->calls(index, &out);
  return out;
}

int64_t DtScheduleSpace::largest_tile(uint64_t index) const {
  int64_t largest = 1;
  (void)impl_->calls(index, nullptr, &largest);
  return largest;
}

}  // namespace dtsim
