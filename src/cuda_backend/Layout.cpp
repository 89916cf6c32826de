// Distributed layouts of the CUDA backend (see Layout.h): construction, slices, need maps, renames.
#include "cuda_backend/Layout.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "cuda_backend/NvvmValues.h"

namespace dtsim::nvvm {

namespace {

Coord zero(size_t rank) { return Coord(rank, 0); }
Coord unit(size_t rank, size_t d, int64_t v) {
  Coord c(rank, 0);
  c[d] = v;
  return c;
}
bool is_zero(const Coord& c) {
  return std::all_of(c.begin(), c.end(), [](int64_t v) { return v == 0; });
}

// Applies `f` to every basis vector of `d`, giving a layout of `shape`.
template <class F>
Dist map_bases(const Dist& d, const Shape& shape, F f) {
  Dist out;
  out.shape = shape;
  for (auto& c : d.reg) out.reg.push_back(f(c));
  for (auto& c : d.lane) out.lane.push_back(f(c));
  for (auto& c : d.warp) out.warp.push_back(f(c));
  return out;
}

std::string coord_str(const Coord& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + ")";
}

}  // namespace

Coord Dist::reg_coord(int r) const {
  Coord c = zero(shape.size());
  for (size_t i = 0; i < reg.size(); ++i)
    if (r >> i & 1)
      for (size_t d = 0; d < c.size(); ++d) c[d] |= reg[i][d];
  return c;
}

uint32_t Dist::replicated_lane_mask() const {
  uint32_t m = 0;
  for (size_t i = 0; i < lane.size(); ++i)
    if (is_zero(lane[i])) m |= 1u << i;
  return m;
}

uint32_t Dist::replicated_warp_mask() const {
  uint32_t m = 0;
  for (size_t i = 0; i < warp.size(); ++i)
    if (is_zero(warp[i])) m |= 1u << i;
  return m;
}

Dist blocked(const Shape& shape, int num_warps, int vec_wanted) {
  size_t rank = shape.size();
  Dist d;
  d.shape = shape;
  std::vector<int> bits(rank), used(rank, 0);
  for (size_t i = 0; i < rank; ++i) bits[i] = log2_exact(shape[i]);
  auto next = [&]() -> Coord {  // the lowest unused bit of the fastest dim that has one
    for (size_t i = rank; i-- > 0;)
      if (used[i] < bits[i]) return unit(rank, i, int64_t(1) << used[i]++);
    return zero(rank);
  };
  if (rank > 0) {
    int64_t threads = int64_t(num_warps) * 32;
    int64_t vec = vec_wanted ? std::min<int64_t>(vec_wanted, shape[rank - 1])
                             : std::min<int64_t>({4, std::max<int64_t>(1, shape_numel(shape) / threads), shape[rank - 1]});
    for (int j = 0; j < log2_exact(vec); ++j) d.reg.push_back(next());
  }
  for (int i = 0; i < 5; ++i) d.lane.push_back(next());
  for (int i = 0; i < log2_exact(num_warps); ++i) d.warp.push_back(next());
  for (;;) {
    Coord c = next();
    if (is_zero(c)) break;
    d.reg.push_back(c);
  }
  return d;
}

Dist mma_accumulator(int64_t M, int64_t N, int wm, int wn) {
  Dist d;
  d.shape = {M, N};
  int64_t mt = M / wm, nt = N / wn;  // one warp's block
  d.reg = {{0, 1}, {8, 0}};
  for (int64_t c = 8; c < nt; c *= 2) d.reg.push_back({0, c});
  for (int64_t r = 16; r < mt; r *= 2) d.reg.push_back({r, 0});
  d.lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  for (int64_t c = nt; c < N; c *= 2) d.warp.push_back({0, c});
  for (int64_t r = mt; r < M; r *= 2) d.warp.push_back({r, 0});
  return d;
}

Dist wgmma_accumulator(int64_t M, int64_t N, int num_warps) {
  Dist d;
  d.shape = {M, N};
  int64_t rows = M / (num_warps / 4);  // one warpgroup's
  d.reg = {{0, 1}, {8, 0}};
  for (int64_t c = 8; c < N; c *= 2) d.reg.push_back({0, c});
  for (int64_t r = 64; r < rows; r *= 2) d.reg.push_back({r, 0});
  d.lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  d.warp = {{16, 0}, {32, 0}};
  for (int64_t r = rows; r < M; r *= 2) d.warp.push_back({r, 0});
  return d;
}

Dist fma_accumulator(int64_t M, int64_t N, int num_warps) {
  Dist d;
  d.shape = {M, N};
  int mb = log2_exact(M), nb = log2_exact(N), um = 0, un = 0;
  int64_t per_thread = std::max<int64_t>(1, M * N / (int64_t(32) * num_warps));
  // A thread's block: as square as the tile allows (fewest operand values per multiply-add).
  int64_t tn = 1;
  while (tn * tn < per_thread) tn *= 2;
  tn = std::min<int64_t>({N, 8, tn});
  int64_t tm = std::min<int64_t>({M, 8, std::max<int64_t>(1, per_thread / tn)});
  tn = std::min<int64_t>({N, 8, std::max<int64_t>(1, per_thread / tm)});
  int tnb = log2_exact(tn), tmb = log2_exact(tm);
  auto n_bit = [&]() -> Coord { return un < nb ? Coord{0, int64_t(1) << un++} : Coord{0, 0}; };
  auto m_bit = [&]() -> Coord { return um < mb ? Coord{int64_t(1) << um++, 0} : Coord{0, 0}; };
  // Registers: up to 4 consecutive columns and 4 consecutive rows (one 16-byte read each of B and
  // A^T per k step); a thread's further columns and rows come after the lanes' (below), so the lanes
  // of a warp read consecutive 16-byte chunks.
  for (int i = 0; i < std::min(tnb, 2); ++i) d.reg.push_back(n_bit());
  for (int i = 0; i < std::min(tmb, 2); ++i) d.reg.push_back(m_bit());
  // Lane bit 0 on columns and lane bit 1 on rows: lanes T and T^1 read the same A^T address and
  // lanes T and T^2 the same B address, which the hardware serves at twice the rate.
  d.lane.push_back(un < nb ? n_bit() : m_bit());
  d.lane.push_back(um < mb ? m_bit() : n_bit());
  for (int i = 2; i < 5; ++i) d.lane.push_back(un < nb ? n_bit() : m_bit());
  for (int w = 1; w < num_warps; w *= 2) d.warp.push_back(um < mb ? m_bit() : n_bit());
  for (int i = 2; i < tnb; ++i) d.reg.push_back(n_bit());
  for (int i = 2; i < tmb; ++i) d.reg.push_back(m_bit());
  while (un < nb) d.reg.push_back(n_bit());
  while (um < mb) d.reg.push_back(m_bit());
  return d;
}

bool is_blocked(const Dist& d, int num_warps) { return d == blocked(d.shape, num_warps); }

Dist slice(const Dist& parent, int axis) {
  Shape s = parent.shape;
  s.erase(s.begin() + axis);
  auto drop = [axis](const Coord& c) {
    Coord o = c;
    o.erase(o.begin() + axis);
    return o;
  };
  Dist out = map_bases(parent, s, drop);
  out.reg.clear();
  for (auto& c : parent.reg)
    if (!is_zero(drop(c))) out.reg.push_back(drop(c));
  return out;
}

Dist need_broadcast(const Dist& d, const Shape& operand) {
  size_t R = d.shape.size(), Ro = operand.size();
  return map_bases(d, operand, [&](const Coord& c) {
    Coord o(Ro, 0);
    for (size_t i = 0; i < Ro; ++i) o[i] = operand[i] == 1 ? 0 : c[R - Ro + i];
    return o;
  });
}

Dist need_expand_dims(const Dist& d, int axis) {
  Shape s = d.shape;
  s.erase(s.begin() + axis);
  return map_bases(d, s, [axis](const Coord& c) {
    Coord o = c;
    o.erase(o.begin() + axis);
    return o;
  });
}

Dist need_reshape(const Dist& d, const Shape& operand) {
  return map_bases(d, operand, [&](const Coord& c) {
    int64_t flat = 0;
    for (size_t i = 0; i < c.size(); ++i) flat = flat * d.shape[i] + c[i];
    Coord o(operand.size(), 0);
    for (size_t i = operand.size(); i-- > 0;) {
      o[i] = flat % operand[i];
      flat /= operand[i];
    }
    return o;
  });
}

Dist need_trans(const Dist& d, const std::vector<int64_t>& order) {
  Shape s(d.shape.size());
  for (size_t i = 0; i < order.size(); ++i) s[static_cast<size_t>(order[i])] = d.shape[i];
  return map_bases(d, s, [&](const Coord& c) {
    Coord in(c.size());
    for (size_t i = 0; i < order.size(); ++i) in[static_cast<size_t>(order[i])] = c[i];
    return in;
  });
}

int first_copy(const Dist& d, int r) {
  for (size_t i = 0; i < d.reg.size(); ++i)
    if (is_zero(d.reg[i])) r &= ~(1 << i);
  return r;
}

int vector_run(const Dist& d) {
  if (d.shape.empty()) return 1;
  size_t last = d.shape.size() - 1;
  int run = 1;
  for (size_t i = 0; i < d.reg.size(); ++i) {
    Coord u(d.shape.size(), 0);
    u[last] = run;
    if (d.reg[i] != u) break;
    run *= 2;
  }
  return run;
}

std::optional<std::vector<int>> rename(const Dist& have, const Dist& need) {
  if (have.shape != need.shape || have.lane != need.lane || have.warp != need.warp) return std::nullopt;
  std::vector<int> bit(need.reg.size(), -1);  // have's register bit for each of need's, -1: zero
  for (size_t i = 0; i < need.reg.size(); ++i) {
    if (is_zero(need.reg[i])) continue;
    auto it = std::find(have.reg.begin(), have.reg.end(), need.reg[i]);
    if (it == have.reg.end()) return std::nullopt;
    bit[i] = static_cast<int>(it - have.reg.begin());
  }
  std::vector<int> map(static_cast<size_t>(need.nregs()));
  for (int r = 0; r < need.nregs(); ++r) {
    int h = 0;
    for (size_t i = 0; i < bit.size(); ++i)
      if ((r >> i & 1) && bit[i] >= 0) h |= 1 << bit[i];
    map[static_cast<size_t>(r)] = h;
  }
  return map;
}

std::string Dist::str() const {
  std::ostringstream o;
  if (shape.empty()) return "scalar";
  int warps = 1 << warp.size();
  if (*this == blocked(shape, warps)) {
    // per dim: elements per thread (contiguous), lanes, warps
    size_t R = shape.size();
    std::vector<int64_t> vec(R, 1), lanes(R, 1), ws(R, 1);
    int64_t vbits = 0;
    for (auto& c : reg) {
      if (vbits >= 0 && c[R - 1] == (int64_t(1) << vbits)) {
        vec[R - 1] *= 2;
        ++vbits;
      } else {
        vbits = -1;
      }
    }
    for (auto& c : lane)
      for (size_t i = 0; i < R; ++i)
        if (c[i]) lanes[i] *= 2;
    for (auto& c : warp)
      for (size_t i = 0; i < R; ++i)
        if (c[i]) ws[i] *= 2;
    auto list = [](const std::vector<int64_t>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    o << "blocked{vec=" << list(vec) << ", lanes=" << list(lanes) << ", warps=" << list(ws) << ", regs=" << nregs() << "}";
    return o.str();
  }
  auto bases = [](const std::vector<Coord>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + coord_str(v[i]);
    return s + "]";
  };
  o << "linear{regs=" << nregs() << ", reg=" << bases(reg) << ", lane=" << bases(lane) << ", warp=" << bases(warp) << "}";
  return o.str();
}


int64_t Exchange::offset(const Coord& c) const {
  int64_t flat = 0;
  for (size_t i = 0; i < c.size(); ++i) flat = flat * shape[i] + c[i];
  if (padded) return (flat + flat / 32) * elem;
  int64_t row = flat / cols, col = flat % cols;
  int64_t byte = col * elem;
  if (max_phase == 1) return row * cols * elem + byte;
  int64_t phase = (row / per_phase) % max_phase;
  return row * cols * elem + (((byte / 16) ^ phase) * 16) + byte % 16;
}

int64_t Exchange::bytes() const {
  int64_t n = rows * cols;
  return padded ? (n + n / 32 + 1) * elem : n * elem;
}

std::string Exchange::str() const {
  std::ostringstream o;
  if (padded)
    o << "padded (one element every 32)";
  else if (max_phase == 1)
    o << "row-major";
  else
    o << "swizzled 16-byte chunks (" << max_phase << " phases of " << per_phase << " row" << (per_phase > 1 ? "s" : "") << ")";
  o << ", " << elem << "-byte elements, ";
  if (stmatrix)
    o << "stmatrix.x4 stores";
  else
    o << "stores of " << store_vec;
  o << ", loads of " << load_vec << "; wavefronts: stores "
    << store_wavefronts << " (least " << store_ideal << "), loads " << load_wavefronts << " (least " << load_ideal << ")";
  return o.str();
}

BankCount bank_count(const Exchange& x, const Dist& d, int vec, int step) {
  if (step == 0) step = vec;
  BankCount bc;
  const int nw = 1 << d.warp.size();
  auto thread_coord = [&](int lane, int warp) {
    Coord c(d.shape.size(), 0);
    for (size_t i = 0; i < d.lane.size(); ++i)
      if (lane >> i & 1)
        for (size_t k = 0; k < c.size(); ++k) c[k] |= d.lane[i][k];
    for (size_t i = 0; i < d.warp.size(); ++i)
      if (warp >> i & 1)
        for (size_t k = 0; k < c.size(); ++k) c[k] |= d.warp[i][k];
    return c;
  };
  const int bytes = vec * x.elem;
  // Per access: the distinct 4-byte words the warp's 32 lanes touch, sorted; the most words in one
  // bank (word % 32) is the access's wavefronts. Flat buffers reused across accesses: this runs for
  // every candidate layout of every exchange the emitter plans.
  std::vector<Coord> lanes(32);
  std::vector<int64_t> words;
  Coord c;
  for (int w = 0; w < nw; ++w) {
    for (int l = 0; l < 32; ++l) lanes[static_cast<size_t>(l)] = thread_coord(l, w);
    for (int r0 = 0; r0 < d.nregs(); r0 += step) {
      if (first_copy(d, r0) != r0) continue;
      Coord rc = d.reg_coord(r0);
      words.clear();
      for (int l = 0; l < 32; ++l) {
        c = lanes[static_cast<size_t>(l)];
        for (size_t k = 0; k < c.size(); ++k) c[k] |= rc[k];
        int64_t off = x.offset(c);
        for (int64_t b = off / 4; b < (off + bytes + 3) / 4; ++b) words.push_back(b);
      }
      std::sort(words.begin(), words.end());
      words.erase(std::unique(words.begin(), words.end()), words.end());
      int per_bank[32] = {};
      int most = 1;
      for (int64_t b : words) most = std::max(most, ++per_bank[b % 32]);
      bc.wavefronts += most;
      bc.ideal += (static_cast<int64_t>(words.size()) * 4 + 127) / 128;
    }
  }
  return bc;
}

std::optional<Dist> stmatrix_rows(const Dist& from) {
  if (from.rank() != 2 || from.reg.size() < 3) return std::nullopt;
  const std::vector<Coord> lanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  if (from.lane != lanes || from.reg[0] != Coord{0, 1} || from.reg[1] != Coord{8, 0} || from.reg[2] != Coord{0, 8}) return std::nullopt;
  Dist d;
  d.shape = from.shape;
  d.lane = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 8}};
  d.warp = from.warp;
  d.reg.assign(from.reg.begin() + 3, from.reg.end());
  return d;
}

Exchange plan_exchange(const Dist& from, const Dist& to, int elem, bool has_stmatrix) {
  Exchange x;
  x.shape = from.shape;
  x.elem = elem;
  x.cols = from.shape.empty() ? 1 : from.shape.back();
  x.rows = shape_numel(from.shape) / x.cols;
  std::optional<Dist> rows = elem == 2 && has_stmatrix ? stmatrix_rows(from) : std::nullopt;
  auto count = [&](Exchange& e) {
    BankCount s = e.stmatrix ? bank_count(e, *rows, 8, 1) : bank_count(e, from, e.store_vec), l = bank_count(e, to, e.load_vec);
    e.store_wavefronts = s.wavefronts;
    e.store_ideal = s.ideal;
    e.load_wavefronts = l.wavefronts;
    e.load_ideal = l.ideal;
  };
  count(x);  // the padded tile, element by element
  if (elem != 2 && elem != 4) return x;
  const int most = 16 / elem;
  auto vec_of = [&](const Dist& d) { return static_cast<int>(std::min<int64_t>({vector_run(d), most, x.cols})); };
  Exchange best = x;
  const int64_t chunks = x.cols * elem / 16;
  for (int mp = 1; mp <= std::max<int64_t>(1, std::min<int64_t>(chunks, 8)); mp *= 2) {
    for (int pp = 1; pp <= (mp == 1 ? 1 : 8); pp *= 2) {
      Exchange e = x;
      e.padded = false;
      e.max_phase = mp;
      e.per_phase = pp;
      e.store_vec = vec_of(from);
      e.load_vec = vec_of(to);
      // stmatrix rows are 16 bytes: within a row's chunk where the row holds whole chunks
      e.stmatrix = rows.has_value() && x.cols * elem >= 16;
      count(e);
      int64_t c = e.store_wavefronts + e.load_wavefronts, b = best.store_wavefronts + best.load_wavefronts;
      if (c < b || (best.padded && c == b)) best = e;
    }
  }
  return best;
}

}  // namespace dtsim::nvvm
