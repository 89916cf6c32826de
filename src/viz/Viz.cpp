// Recording a run's accesses and drawing them (see Viz.h).
#include "viz/Viz.h"

#include "host/Output.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ir/Diag.h"
#include "ir/Walk.h"

namespace dtsim {

namespace {

constexpr size_t kMaxOutside = 1 << 16;  // outside offsets kept per buffer
constexpr size_t kMaxFindingLines = 4;

// Index into a value of shape `from` for element `flat` of the broadcast shape `to` (numpy rules).
int64_t broadcast_index(const Shape& from, const Shape& to, int64_t flat) {
  if (from.empty()) return 0;
  int64_t idx = 0, stride = 1;
  int64_t rem = flat;
  size_t nf = from.size(), nt = to.size();
  for (size_t i = 0; i < nt; ++i) {
    size_t ti = nt - 1 - i;
    int64_t coord = rem % to[ti];
    rem /= to[ti];
    if (i < nf) {
      size_t fi = nf - 1 - i;
      if (from[fi] != 1) idx += coord * stride;
      stride *= from[fi];
    }
  }
  return idx;
}

void collect_loads(const ExprP& e, std::vector<const Expr*>& out) {
  for_each_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Load) out.push_back(&x);
  });
}

}  // namespace

void VizRecorder::on_launch(const Kernel& k, int kernel_index, const std::array<int64_t, 3>& grid,
                            const InstanceOrder& order) {
  VizLaunch l;
  l.kernel = &k;
  l.kernel_index = kernel_index;
  l.grid = grid;
  l.order = order;
  l.position.assign(static_cast<size_t>(grid[0] * grid[1] * grid[2]), 0);
  for (int64_t i = 0; i < order.size(); ++i) l.position[static_cast<size_t>(order.linear_at(i))] = i;
  launches.push_back(std::move(l));
}

void VizRecorder::on_instance_begin(Frame& f) {
  me_ = static_cast<int32_t>(f.linear_pid);
  selected_ = follow_ || (pid_ && *pid_ == f.pid);
  if (follow_ && !launches.empty()) {
    VizLaunch& l = launches.back();
    constexpr uint8_t fp = kVizFpLoad | kVizFpStore;
    for (const auto& [b, e] : touched_)
      if (b < l.buffers.size() && e < l.buffers[b].flags.size()) l.buffers[b].flags[e] &= static_cast<uint8_t>(~fp);
    touched_.clear();
    for (VizBufferTrace& t : l.buffers) {
      t.fp_touched = false;
      for (auto it = t.outside.begin(); it != t.outside.end();) {
        it->second &= static_cast<uint8_t>(~fp);
        it = it->second ? std::next(it) : t.outside.erase(it);
      }
    }
    l.footprint.clear();
  }
}

void VizRecorder::before_stmt(Frame& f, const Stmt& s) {
  std::vector<const Expr*> loads;
  for (const ExprP& a : s.args) collect_loads(a, loads);
  for (const Expr* ld : loads) record(f, s, ld->args[0], ld->args.size() > 1 ? ld->args[1] : nullptr, false);
  if (s.kind == StmtKind::Store) record(f, s, s.args[0], s.args.size() > 2 ? s.args[2] : nullptr, true);
  if (s.kind == StmtKind::Atomic) record(f, s, s.args[0], s.aop == AtomicOp::Cas ? nullptr : s.args[2], true);
}

// A while condition is evaluated again before every trip: its loads are recorded each time.
void VizRecorder::after_loop_iteration(Frame& f, const Stmt& loop) {
  if (loop.kind != StmtKind::While) return;
  std::vector<const Expr*> loads;
  collect_loads(loop.args[0], loads);
  for (const Expr* ld : loads) record(f, loop, ld->args[0], ld->args.size() > 1 ? ld->args[1] : nullptr, false);
}

void VizRecorder::record(Frame& f, const Stmt& s, const ExprP& ptr_e, const ExprP& mask_e, bool store) {
  if (launches.empty() || !f.buffers) return;
  Value ptr, mask;
  try {
    ptr = f.eval(ptr_e);
    if (mask_e) mask = f.eval(mask_e);
  } catch (const std::exception&) {
    return;  // the operand itself faults (e.g. an out-of-bounds gather); the run reports it
  }
  if (!ptr.type.ptr || ptr.buffer < 0 || ptr.buffer >= static_cast<int>(f.buffers->list.size())) return;
  VizLaunch& l = launches.back();
  if (l.buffers.size() < f.buffers->list.size()) l.buffers.resize(f.buffers->list.size());
  const Buffer& buf = f.buffers->list[static_cast<size_t>(ptr.buffer)];
  VizBufferTrace& t = l.buffers[static_cast<size_t>(ptr.buffer)];
  int64_t numel = buf.numel();
  if (!t.used) {
    t.used = true;
    t.storer.assign(static_cast<size_t>(numel), -1);
    t.loader.assign(static_cast<size_t>(numel), -1);
    t.flags.assign(static_cast<size_t>(numel), 0);
  }
  (store ? t.stored : t.loaded) = true;
  // Elements of an output or scratch buffer are undefined until some instance stores them.
  if (written_.size() < f.buffers->list.size()) written_.resize(f.buffers->list.size());
  std::vector<uint8_t>& written = written_[static_cast<size_t>(ptr.buffer)];
  if (!buf.defined && written.empty()) written.assign(static_cast<size_t>(numel), 0);
  Shape shape = ptr.type.shape;
  if (mask_e && mask.type.shape.size() > shape.size()) shape = mask.type.shape;
  int64_t n = shape_numel(shape);
  int64_t masked = 0, oob = 0;
  // Direct element access where the operand already has the access's shape (the common case).
  const auto* pa = std::get_if<xt::xarray<int64_t>>(&ptr.data);
  const int64_t* pdata = pa && ptr.type.shape == shape ? pa->data() : nullptr;
  const auto* ma = mask_e ? std::get_if<xt::xarray<uint8_t>>(&mask.data) : nullptr;
  const uint8_t* mdata = ma && mask.type.shape == shape ? ma->data() : nullptr;
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = pdata ? pdata[i] : static_cast<int64_t>(ptr.get(broadcast_index(ptr.type.shape, shape, i)));
    bool on = !mask_e || (mdata ? mdata[i] != 0 : mask.get(broadcast_index(mask.type.shape, shape, i)) != 0);
    bool inside = off >= 0 && off < numel;
    if (!on) ++masked;
    if (on && !inside) ++oob;
    if (inside) {
      size_t e = static_cast<size_t>(off);
      if (on) {
        if (store) {
          if (t.storer[e] >= 0 && t.storer[e] != me_) t.flags[e] |= kVizConflict;
          t.storer[e] = me_;
          if (!written.empty()) written[e] = 1;
        } else {
          if (t.loader[e] < 0) t.loader[e] = me_;
          if (!written.empty() && !written[e]) t.flags[e] |= kVizUninit;
        }
      }
      // A masked-off lane accesses nothing: its address (often wrapped into another row, or
      // garbage) is not drawn anywhere; the access list counts it.
      if (selected_ && on) {
        if (follow_ && !(t.flags[e] & (kVizFpLoad | kVizFpStore)))
          touched_.emplace_back(static_cast<size_t>(ptr.buffer), e);
        t.flags[e] |= store ? kVizFpStore : kVizFpLoad;
      }
    } else if (on && (t.outside.size() < kMaxOutside || t.outside.count(off))) {
      uint8_t fl = kVizOob;
      if (selected_) fl |= store ? kVizFpStore : kVizFpLoad;
      if (fl) {
        t.outside[off] |= fl;
        if (on && !t.outside_pid.count(off)) t.outside_pid[off] = me_;
      }
    }
  }
  if (selected_) {
    t.fp_touched = true;
    auto it = std::find_if(l.footprint.begin(), l.footprint.end(), [&](const VizFootprintAccess& a) {
      return a.loc == s.loc && a.store == store && a.buffer == ptr.buffer && a.tile == shape;
    });
    if (it == l.footprint.end()) {
      l.footprint.push_back(VizFootprintAccess{s.loc, store, ptr.buffer, shape});
      it = l.footprint.end() - 1;
    }
    it->times += 1;
    it->lanes += n;
    it->masked += masked;
    it->oob += oob;
  }
}

void VizRecorder::on_finding(Frame& f, const Stmt&, const Finding& finding) {
  if (launches.empty()) return;
  VizLaunch& l = launches.back();
  l.findings[static_cast<size_t>(finding.kind)] += 1;
  if (l.finding_lines.size() < kMaxFindingLines) {
    std::string first = finding.message.substr(0, finding.message.find('\n'));
    if (first.find("pid") == std::string::npos && first.find("instances") == std::string::npos)
      first += " (pid " + dtsim::pid_text(finding.pid, l.kernel ? l.kernel->grid.size() : 3) + ")";
    if (first.size() > 112) first = first.substr(0, 109) + "...";
    l.finding_lines.push_back(first);
  }
  if (!f.buffers || finding.flat_index < 0) return;
  int b = f.buffers->index(finding.buffer);
  if (b < 0 || static_cast<size_t>(b) >= l.buffers.size()) return;
  VizBufferTrace& t = l.buffers[static_cast<size_t>(b)];
  if (!t.used || finding.flat_index >= static_cast<int64_t>(t.flags.size())) return;
  size_t e = static_cast<size_t>(finding.flat_index);
  if (finding.kind == Finding::Uninitialized) t.flags[e] |= kVizUninit;
  if (finding.kind == Finding::WriteWrite || finding.kind == Finding::ReadWrite) t.flags[e] |= kVizConflict;
}

// A store of equal values (a warning, no finding): its element hatched as a conflict's, its
// warning's first line listed once.
void VizRecorder::on_warning(Frame& f, const Stmt&, const Finding& warning) {
  if (launches.empty()) return;
  VizLaunch& l = launches.back();
  l.equal_stores += 1;
  std::string first = warning.message.substr(0, warning.message.find('\n'));
  if (first.size() > 112) first = first.substr(0, 109) + "...";
  if (l.finding_lines.size() < kMaxFindingLines && std::find(l.finding_lines.begin(), l.finding_lines.end(), first) == l.finding_lines.end())
    l.finding_lines.push_back(first);
  if (!f.buffers || warning.flat_index < 0) return;
  int b = f.buffers->index(warning.buffer);
  if (b < 0 || static_cast<size_t>(b) >= l.buffers.size()) return;
  VizBufferTrace& t = l.buffers[static_cast<size_t>(b)];
  if (!t.used || warning.flat_index >= static_cast<int64_t>(t.flags.size())) return;
  t.flags[static_cast<size_t>(warning.flat_index)] |= kVizConflict;
}

// ---------------------------------------------------------------------------------------------
// Drawing
// ---------------------------------------------------------------------------------------------
namespace {

std::string esc(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      default: r += c;
    }
  }
  return r;
}

// A ramp from dark blue (first instance run) through green to yellow (last).
std::string ramp(double t, bool* dark) {
  static const int stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  int i = std::min(3, static_cast<int>(t));
  double u = t - i;
  char buf[8];
  int rgb[3];
  for (int k = 0; k < 3; ++k) rgb[k] = static_cast<int>(std::lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u));
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  if (dark) *dark = t < 2.6;
  return buf;
}

std::string pid_text(const std::array<int64_t, 3>& p, const std::array<int64_t, 3>& grid) {
  std::string s = "(" + std::to_string(p[0]);
  if (grid[1] > 1 || grid[2] > 1) s += "," + std::to_string(p[1]);
  if (grid[2] > 1) s += "," + std::to_string(p[2]);
  return s + ")";
}

std::string shape_text(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::array<int64_t, 3> unlin(int64_t lin, const std::array<int64_t, 3>& g) {
  return {lin % g[0], (lin / g[0]) % g[1], lin / (g[0] * g[1])};
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

// The element grid of a buffer as drawn: R x C elements (1-D: one row), in cells of fr x fc.
struct View {
  int64_t R = 1, C = 1, fr = 1, fc = 1, cr = 1, cc = 1;
  int cw = 8, ch = 8;  // cell size in pixels
  bool strip = false;
};

View make_view(const Buffer& b) {
  View v;
  int64_t n = b.numel();
  v.strip = b.shape.size() <= 1;
  v.C = b.shape.empty() ? 1 : std::max<int64_t>(1, b.shape.back());
  v.R = n / v.C;
  int64_t maxc = v.strip ? 128 : 64, maxr = 64;
  v.fc = std::max<int64_t>(1, (v.C + maxc - 1) / maxc);
  v.fr = std::max<int64_t>(1, (v.R + maxr - 1) / maxr);
  v.cc = std::max<int64_t>(1, (v.C + v.fc - 1) / v.fc);
  v.cr = std::max<int64_t>(1, (v.R + v.fr - 1) / v.fr);
  int64_t side = std::max(v.cc, v.strip ? int64_t(1) : v.cr);
  v.cw = static_cast<int>(std::clamp<int64_t>((v.strip ? 768 : 512) / side, 5, 40));
  v.ch = v.strip ? std::max(v.cw, 28) : v.cw;
  return v;
}

std::string range_text(int64_t lo, int64_t hi) {
  return hi - lo == 1 ? std::to_string(lo) : std::to_string(lo) + ":" + std::to_string(hi);
}

class Svg {
 public:
  std::ostringstream body;
  int width = 780, y = 0;

  void text(int x, int ty, const std::string& s, int size = 13, const std::string& extra = "") {
    body << "<text x=\"" << x << "\" y=\"" << ty << "\" font-size=\"" << size << "\"" << extra << ">" << esc(s) << "</text>\n";
  }
};

struct Cell {
  int32_t who = -1;   // representative instance (first stored/loaded element of the cell)
  uint8_t flags = 0;  // OR of the elements' flags
  int64_t e0 = -1;    // representative element
};

// Draws one buffer panel of launch `l`. `slice` >= 0: only instances with pid2 == slice.
void draw_panel(Svg& svg, const VizLaunch& l, const Buffer& b, const VizBufferTrace& t, bool by_store, bool footprint,
                int64_t slice, bool titles) {
  View v = make_view(b);
  std::ostringstream& o = svg.body;
  const int x0 = 24;
  std::string head = "buffer " + b.name + " " + std::string(scalar_name(b.dtype)) + shape_text(b.shape);
  if (footprint) head += ": footprint";
  else head += by_store ? ": stored by" : ": loaded (first) by";
  if (slice >= 0) head += ", pid2 = " + std::to_string(slice);
  if (v.fr > 1 || v.fc > 1) head += "  (one cell = " + std::to_string(v.fr) + "x" + std::to_string(v.fc) + " elements)";
  svg.y += 22;
  svg.text(x0, svg.y, head, 14, " font-weight=\"bold\"");
  svg.y += 8;

  const std::vector<int32_t>& who = by_store ? t.storer : t.loader;
  // Cells inside the buffer.
  std::vector<Cell> cells(static_cast<size_t>(v.cr * v.cc));
  for (int64_t r = 0; r < v.R; ++r)
    for (int64_t c = 0; c < v.C; ++c) {
      int64_t e = r * v.C + c;
      Cell& cell = cells[static_cast<size_t>((r / v.fr) * v.cc + c / v.fc)];
      if (cell.e0 < 0) cell.e0 = e;
      uint8_t fl = t.flags[static_cast<size_t>(e)];
      int32_t w = who[static_cast<size_t>(e)];
      if (slice >= 0 && w >= 0 && unlin(w, l.grid)[2] != slice) w = -1, fl &= static_cast<uint8_t>(~kVizConflict);
      cell.flags |= fl;
      if (cell.who < 0 && w >= 0) cell.who = w, cell.e0 = e;
    }
  // Cells past the edges: rows below/above (2-D) or cells right/left (1-D); however far the lanes
  // went, at most 8 rows / 16 cells, each covering an equal share of the distance.
  struct Out {
    int64_t cr, cc;
    uint8_t flags;
    int32_t who;
    int64_t off;
  };
  std::map<std::pair<int64_t, int64_t>, Out> outside;
  int64_t numel = b.numel();
  auto outside_flags = [&](int64_t off, uint8_t fl0, int32_t* who) -> uint8_t {
    uint8_t fl = footprint ? static_cast<uint8_t>(fl0 & (kVizFpLoad | kVizFpStore))
                           : static_cast<uint8_t>(fl0 & kVizOob);
    auto pit = t.outside_pid.find(off);
    *who = pit == t.outside_pid.end() ? -1 : pit->second;
    if (!footprint && slice >= 0 && *who >= 0 && unlin(*who, l.grid)[2] != slice) return 0;
    return fl;
  };
  // Distance past each edge, in elements (1-D) or rows (2-D).
  auto row_of = [&](int64_t off) { return off >= 0 ? off / v.C : -((-off + v.C - 1) / v.C); };
  int64_t far_after = 0, far_before = 0;
  for (const auto& [off, fl0] : t.outside) {
    int32_t w;
    if (!outside_flags(off, fl0, &w)) continue;
    if (v.strip) {
      if (off >= numel) far_after = std::max(far_after, off - numel + 1);
      else far_before = std::max(far_before, -off);
    } else {
      int64_t r = row_of(off);
      if (r >= v.R) far_after = std::max(far_after, r - v.R + 1);
      else far_before = std::max(far_before, -r);
    }
  }
  int64_t cap = v.strip ? 16 : 8, unit = v.strip ? v.fc : v.fr;
  int64_t bin_after = std::max(unit, (far_after + cap - 1) / cap), bin_before = std::max(unit, (far_before + cap - 1) / cap);
  for (const auto& [off, fl0] : t.outside) {
    int32_t w;
    uint8_t fl = outside_flags(off, fl0, &w);
    if (!fl) continue;
    int64_t ccell, rcell;
    if (v.strip) {
      rcell = 0;
      ccell = off >= numel ? v.cc + (off - numel) / bin_after : -1 - (-off - 1) / bin_before;
    } else {
      int64_t r = row_of(off);
      int64_t c = ((off % v.C) + v.C) % v.C;
      rcell = r >= v.R ? v.cr + (r - v.R) / bin_after : -1 - (-r - 1) / bin_before;
      ccell = c / v.fc;
    }
    auto key = std::make_pair(rcell, ccell);
    auto it = outside.find(key);
    if (it == outside.end()) outside.emplace(key, Out{rcell, ccell, fl, w, off});
    else it->second.flags |= fl;
  }
  int64_t above = 0, left = 0, below = 0, right = 0;
  for (const auto& [k, out] : outside) {
    above = std::max(above, -out.cr);
    left = std::max(left, -out.cc);
    below = std::max(below, out.cr - v.cr + 1);
    right = std::max(right, out.cc - v.cc + 1);
  }
  int gx = x0 + static_cast<int>(left) * v.cw, gy = svg.y + static_cast<int>(above) * v.ch;
  svg.width = std::max<int>(svg.width, gx + static_cast<int>(v.cc + right) * v.cw + 24);

  auto cell_tip = [&](int64_t cr, int64_t cc, int64_t e0, int32_t w) {
    int64_t r0 = cr * v.fr, c0 = cc * v.fc;
    int64_t r1 = std::min(v.R, r0 + v.fr), c1 = std::min(v.C, c0 + v.fc);
    std::string s = b.name + "[";
    if (!v.strip) s += range_text(r0, r1) + ", ";
    s += range_text(c0, c1) + "]";
    if (v.fr == 1 && v.fc == 1 && e0 >= 0) s += " (flat " + std::to_string(e0) + ") = " + num(b.get(e0));
    else if (e0 >= 0) s += "; first element " + std::to_string(e0) + " = " + num(b.get(e0));
    if (w >= 0) {
      s += "; pid " + pid_text(unlin(w, l.grid), l.grid) + ", run #" + std::to_string(l.position[static_cast<size_t>(w)] + 1) +
           " of " + std::to_string(l.order.size());
    }
    return s;
  };

  o << "<g>\n";
  // Inside cells.
  std::vector<std::array<double, 3>> centre(l.position.size(), {0, 0, 0});
  std::vector<std::array<int, 4>> box(l.position.size(), {INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN});
  std::ostringstream ov;  // overlays, drawn over all cells
  int run_x = 0, run_y = 0, run_len = 0;
  std::string run_fill;
  auto flush_run = [&] {
    if (!run_len) return;
    o << "<rect x=\"" << run_x << "\" y=\"" << run_y << "\" width=\"" << run_len * v.cw << "\" height=\"" << v.ch
      << "\" fill=\"" << run_fill << "\"/>\n";
    run_len = 0;
  };
  for (int64_t cr = 0; cr < v.cr; ++cr)
    for (int64_t cc = 0; cc < v.cc; ++cc) {
      const Cell& cell = cells[static_cast<size_t>(cr * v.cc + cc)];
      int x = gx + static_cast<int>(cc) * v.cw, yy = gy + static_cast<int>(cr) * v.ch;
      std::string fill = "#eeeeee";
      if (footprint) {
        bool ld = cell.flags & kVizFpLoad, st = cell.flags & kVizFpStore;
        if (ld && st) fill = "#8e6bbf";
        else if (st) fill = "#f28e2b";
        else if (ld) fill = "#4c9be8";
      } else if (cell.who >= 0) {
        double pos = static_cast<double>(l.position[static_cast<size_t>(cell.who)]);
        fill = ramp(l.order.size() > 1 ? pos / static_cast<double>(l.order.size() - 1) : 0, nullptr);
        auto& ce = centre[static_cast<size_t>(cell.who)];
        ce[0] += x + v.cw / 2.0, ce[1] += yy + v.ch / 2.0, ce[2] += 1;
        auto& bx = box[static_cast<size_t>(cell.who)];
        bx = {std::min(bx[0], x), std::min(bx[1], yy), std::max(bx[2], x + v.cw), std::max(bx[3], yy + v.ch)};
      }
      if (titles) {
        o << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << v.cw << "\" height=\"" << v.ch << "\" fill=\"" << fill
          << "\"><title>" << esc(cell_tip(cr, cc, cell.e0, footprint ? -1 : cell.who)) << "</title></rect>\n";
      } else {
        // Runs of equal cells along a row are one rectangle (keeps large pictures small).
        if (run_len && (run_fill != fill || run_y != yy)) flush_run();
        if (!run_len) run_x = x, run_y = yy, run_fill = fill;
        ++run_len;
      }
      if (!footprint && (cell.flags & kVizConflict))
        ov << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << v.cw << "\" height=\"" << v.ch << "\" fill=\"url(#conflict)\"/>\n";
      if (!footprint && (cell.flags & kVizUninit))
        ov << "<rect x=\"" << x + 1 << "\" y=\"" << yy + 1 << "\" width=\"" << v.cw - 2 << "\" height=\"" << v.ch - 2
          << "\" fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"2\"/>\n";
    }
  flush_run();
  o << ov.str();
  // Boundaries between cells of different instances.
  if (!footprint) {
    o << "<path fill=\"none\" stroke=\"#ffffff\" stroke-width=\"1.5\" d=\"";
    for (int64_t cr = 0; cr < v.cr; ++cr)
      for (int64_t cc = 0; cc < v.cc; ++cc) {
        int32_t w = cells[static_cast<size_t>(cr * v.cc + cc)].who;
        int x = gx + static_cast<int>(cc) * v.cw, yy = gy + static_cast<int>(cr) * v.ch;
        if (cc + 1 < v.cc && cells[static_cast<size_t>(cr * v.cc + cc + 1)].who != w)
          o << "M" << x + v.cw << " " << yy << "v" << v.ch;
        if (cr + 1 < v.cr && cells[static_cast<size_t>((cr + 1) * v.cc + cc)].who != w)
          o << "M" << x << " " << yy + v.ch << "h" << v.cw;
      }
    o << "\"/>\n";
  }
  o << "<rect x=\"" << gx << "\" y=\"" << gy << "\" width=\"" << v.cc * v.cw << "\" height=\"" << v.cr * v.ch
    << "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  // Outside cells.
  for (const auto& [k, out] : outside) {
    int x = gx + static_cast<int>(out.cc) * v.cw, yy = gy + static_cast<int>(out.cr) * v.ch;
    std::string fill = "#d62728";
    if (!footprint && out.who >= 0) {  // coloured by the instance whose lane went there
      double pos = static_cast<double>(l.position[static_cast<size_t>(out.who)]);
      fill = ramp(l.order.size() > 1 ? pos / static_cast<double>(l.order.size() - 1) : 0, nullptr);
    }
    o << "<rect x=\"" << x << "\" y=\"" << yy << "\" width=\"" << v.cw << "\" height=\"" << v.ch << "\" fill=\"" << fill
      << "\" stroke=\"#d62728\" stroke-dasharray=\"3 2\" stroke-width=\"" << (footprint ? "0.8" : "2") << "\"";
    if (titles) {
      std::string tip = b.name + ": offset " + std::to_string(out.off) + " is outside [0, " + std::to_string(numel) + ")";
      if (out.who >= 0) tip += "; pid " + pid_text(unlin(out.who, l.grid), l.grid);
      o << "><title>" << esc(tip) << "</title></rect>\n";
    } else {
      o << "/>\n";
    }
  }
  // Labels: run order number (and pid, where there is room) at the centre of each instance's cells.
  if (!footprint) {
    for (size_t w = 0; w < centre.size(); ++w) {
      const auto& ce = centre[w];
      if (ce[2] == 0) continue;
      const auto& bx = box[w];
      int bw = bx[2] - bx[0], bh = bx[3] - bx[1];
      double side = std::min(bw, bh);
      if (side < 14 || ce[2] * v.cw * v.ch < 0.4 * bw * bh) continue;
      int cx = static_cast<int>(std::lround(ce[0] / ce[2])), cy = static_cast<int>(std::lround(ce[1] / ce[2]));
      bool dark = true;
      double pos = static_cast<double>(l.position[w]);
      ramp(l.order.size() > 1 ? pos / static_cast<double>(l.order.size() - 1) : 0, &dark);
      std::string col = dark ? "#ffffff" : "#000000";
      std::string number = std::to_string(l.position[w] + 1);
      bool room = bw >= 44 && bh >= 28;
      int fs = static_cast<int>(std::clamp(side / 3, 9.0, 16.0));
      o << "<text x=\"" << cx << "\" y=\"" << (room ? cy - 2 : cy + fs / 3) << "\" font-size=\"" << fs
        << "\" text-anchor=\"middle\" fill=\"" << col << "\">" << number << "</text>\n";
      if (room)
        o << "<text x=\"" << cx << "\" y=\"" << cy + fs - 2 << "\" font-size=\"" << std::max(8, fs - 4)
          << "\" text-anchor=\"middle\" fill=\"" << col << "\">" << esc(pid_text(unlin(static_cast<int64_t>(w), l.grid), l.grid))
          << "</text>\n";
    }
  }
  o << "</g>\n";
  svg.y = gy + static_cast<int>(v.cr + below) * v.ch;
  if (!outside.empty()) {
    svg.y += 16;
    std::string s = footprint ? "past the buffer's edge: red = lanes out of bounds"
                              : "red dashed cells past the edge: out-of-bounds lanes, coloured by instance";
    std::string what = v.strip ? " elements" : " rows";
    if (bin_after > unit || bin_before > unit)
      s += "; one cell there = " + std::to_string(std::max(bin_after, bin_before)) + what;
    svg.text(x0, svg.y, s, 12, " fill=\"#d62728\"");
  }
}

std::string defs() {
  return "<defs>\n"
         "<pattern id=\"conflict\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"2.5\" height=\"6\" fill=\"#d62728\"/></pattern>\n"
         "<linearGradient id=\"ramp\">"
         "<stop offset=\"0\" stop-color=\"#440154\"/><stop offset=\"0.25\" stop-color=\"#3b528b\"/>"
         "<stop offset=\"0.5\" stop-color=\"#21918c\"/><stop offset=\"0.75\" stop-color=\"#5ec962\"/>"
         "<stop offset=\"1\" stop-color=\"#fde725\"/></linearGradient>\n"
         "</defs>\n";
}

void swatch(Svg& svg, int& x, int y, const std::string& fill, const std::string& label, const std::string& stroke = "#333333") {
  svg.body << "<rect x=\"" << x << "\" y=\"" << y - 11 << "\" width=\"14\" height=\"14\" fill=\"" << fill << "\" stroke=\"" << stroke
           << "\" stroke-width=\"0.8\"/>\n";
  svg.text(x + 19, y, label, 12);
  x += 24 + static_cast<int>(label.size()) * 7;
}

std::string grid_text(const std::array<int64_t, 3>& g) {
  std::string s = "(" + std::to_string(g[0]);
  if (g[1] > 1 || g[2] > 1) s += ", " + std::to_string(g[1]);
  if (g[2] > 1) s += ", " + std::to_string(g[2]);
  return s + ")";
}

const char* kind_words(int k) {
  switch (static_cast<Finding::Kind>(k)) {
    case Finding::OutOfBounds: return "out-of-bounds access";
    case Finding::Uninitialized: return "uninitialized read";
    case Finding::WriteWrite: return "write-write conflict";
    case Finding::ReadWrite: return "read-write conflict";
    case Finding::AssertFailed: return "failed assert";
    case Finding::Fault: return "runtime fault";
  }
  return "finding";
}

}  // namespace

std::string render_viz(const VizRecorder& rec, const Buffers& buffers, const VizOptions& opt) {
  Svg svg;
  const int x0 = 24;
  bool footprint = opt.pid.has_value();
  for (size_t li = 0; li < rec.launches.size(); ++li) {
    if (opt.launch >= 0 && static_cast<size_t>(opt.launch) != li) continue;
    const VizLaunch& l = rec.launches[li];
    const Kernel& k = *l.kernel;
    svg.y += 26;
    svg.text(x0, svg.y, "kernel " + k.name, 18, " font-weight=\"bold\"");
    svg.y += 18;
    svg.text(x0, svg.y,
             "grid " + grid_text(l.grid) + " = " + std::to_string(l.order.size()) + " instances; run order: " + opt.order +
                 (opt.file.empty() ? "" : "; " + opt.file),
             13);
    for (const std::string& s : opt.schedule) {
      svg.y += 16;
      svg.text(x0, svg.y, s, 12, " font-family=\"monospace\" fill=\"#444444\"");
    }
    int64_t nf = 0;
    for (int64_t c : l.findings) nf += c;
    if (nf || l.equal_stores) {
      std::string s = "sanitizer:";
      for (size_t i = 0; i < l.findings.size(); ++i)
        if (l.findings[i]) s += " " + std::to_string(l.findings[i]) + " " + kind_words(static_cast<int>(i)) + (l.findings[i] > 1 ? (i == 0 ? "es" : "s") : "") + ";";
      if (l.equal_stores)
        s += " " + std::to_string(l.equal_stores) + (l.equal_stores > 1 ? " stores" : " store") + " of equal values by two instances (warnings);";
      s.pop_back();
      svg.y += 18;
      svg.text(x0, svg.y, s, 13, " fill=\"#d62728\" font-weight=\"bold\"");
      for (const std::string& line : l.finding_lines) {
        svg.y += 15;
        svg.text(x0 + 12, svg.y, line, 11, " font-family=\"monospace\" fill=\"#d62728\"");
      }
    }
    if (footprint) {
      const auto& p = *opt.pid;
      if (p[0] >= l.grid[0] || p[1] >= l.grid[1] || p[2] >= l.grid[2]) {
        svg.y += 18;
        svg.text(x0, svg.y, "pid " + pid_text(p, {2, 2, 2}) + " is not in this grid", 13);
        continue;
      }
      int64_t lin = p[0] + l.grid[0] * (p[1] + l.grid[1] * p[2]);
      svg.y += 18;
      svg.text(x0, svg.y,
               "footprint of pid " + pid_text(p, l.grid) + " (run #" + std::to_string(l.position[static_cast<size_t>(lin)] + 1) +
                   " of " + std::to_string(l.order.size()) + ")",
               14, " font-weight=\"bold\"");
      for (const VizFootprintAccess& a : l.footprint) {
        svg.y += 16;
        std::string s = format_loc(a.loc) + ": " + (a.store ? "store " : "load ") + buffers.list[static_cast<size_t>(a.buffer)].name +
                        ", tile " + shape_text(a.tile) + (a.times > 1 ? ", " + std::to_string(a.times) + " times" : "") + ": " +
                        std::to_string(a.lanes) + " lanes, " + std::to_string(a.masked) + " masked off";
        if (a.oob) s += ", " + std::to_string(a.oob) + " out of bounds";
        svg.text(x0 + 12, svg.y, s, 12, " font-family=\"monospace\"");
      }
      for (size_t bi = 0; bi < l.buffers.size(); ++bi)
        if (l.buffers[bi].used && l.buffers[bi].fp_touched)
          draw_panel(svg, l, buffers.list[bi], l.buffers[bi], true, true, -1, opt.html);
      continue;
    }
    bool any = false;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t bi = 0; bi < l.buffers.size(); ++bi) {
        const VizBufferTrace& t = l.buffers[bi];
        bool by_store = pass == 0;
        if (!t.used || (by_store ? !t.stored : !(opt.loads && t.loaded))) continue;
        any = true;
        int64_t slices = l.grid[2] > 1 ? std::min<int64_t>(l.grid[2], 8) : 1;
        for (int64_t s = 0; s < slices; ++s)
          draw_panel(svg, l, buffers.list[bi], t, by_store, false, l.grid[2] > 1 ? s : -1, opt.html);
        if (l.grid[2] > slices) {
          svg.y += 16;
          svg.text(x0, svg.y, "(" + std::to_string(l.grid[2] - slices) + " more pid2 slices not drawn)", 12);
        }
      }
    if (!any) {
      svg.y += 18;
      svg.text(x0, svg.y, "this kernel stores nothing", 13);
    }
  }
  // Legend.
  svg.y += 34;
  int x = x0;
  if (footprint) {
    swatch(svg, x, svg.y, "#4c9be8", "loaded");
    swatch(svg, x, svg.y, "#f28e2b", "stored");
    swatch(svg, x, svg.y, "#8e6bbf", "loaded and stored");
    swatch(svg, x, svg.y, "#d62728", "out of bounds");
  } else {
    svg.body << "<rect x=\"" << x << "\" y=\"" << svg.y - 11 << "\" width=\"120\" height=\"14\" fill=\"url(#ramp)\" stroke=\"#333333\" stroke-width=\"0.8\"/>\n";
    svg.text(x + 126, svg.y, "run order: first ... last (number = position)", 12);
    x += 126 + 46 * 7;
    swatch(svg, x, svg.y, "#eeeeee", "not written");
    svg.y += 22;
    x = x0;
    swatch(svg, x, svg.y, "url(#conflict)", "conflict");
    swatch(svg, x, svg.y, "none", "uninitialized read", "#ff7f0e");
    swatch(svg, x, svg.y, "#ffffff", "out of bounds (past the edge)", "#d62728");
  }
  svg.width = std::max(svg.width, x + 24);
  int height = svg.y + 16;

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << svg.width << "\" height=\"" << height << "\" viewBox=\"0 0 "
      << svg.width << " " << height << "\" font-family=\"sans-serif\">\n";
  out << defs();
  out << "<rect width=\"" << svg.width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  out << svg.body.str();
  out << "</svg>\n";
  if (!opt.html) return out.str();
  std::string title = rec.launches.empty() ? "dtsim viz" : "dtsim viz: " + rec.launches.front().kernel->name;
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>" + esc(title) +
         "</title>\n<style>body{margin:12px;font-family:sans-serif} rect:hover{stroke:#000;stroke-width:2}</style>\n"
         "</head><body>\n<p>Hover over a cell: buffer element, value after the run, the instance that wrote it and its run "
         "position.</p>\n" +
         out.str() + "</body></html>\n";
}

bool write_viz_file(const std::string& path, const std::string& text, std::string* why) {
  try {
    write_output_file(path, "the picture", text);
    return true;
  } catch (const UserError& e) {
    if (why) *why = e.what();
    return false;
  }
}

}  // namespace dtsim
