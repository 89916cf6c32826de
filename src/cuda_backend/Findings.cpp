// The located findings of the CUDA backend: the status buffer a failing instance filled, rendered
// as the interpreter renders the same finding (message text, source line, caret, details).
#include <algorithm>
#include <climits>
#include <cstring>

#include "cuda_backend/NvvmEmitter.h"
#include "host/Buffers.h"
#include "ir/Walk.h"

namespace dtsim {

std::string unchecked_address_note(const Module& m, const CudaOptions& opt) {
  if (!opt.bounds_checks) return "";
  for (const Kernel& k : m.kernels) {
    const Expr* first = nullptr;
    for_each_expr(k.body, [&](const Expr& e) {
      if (!first && e.kind == ExprKind::IntToPtr) first = &e;
    });
    if (first)
      return format_diag(first->loc, "note",
                         "accesses through pointers made from integers (int_to_ptr) are not bounds- or conflict-checked on the GPU: "
                         "their addresses name no buffer of the run");
  }
  return "";
}



bool decode_status(const uint64_t* dev, const std::array<int64_t, 3>& grid, int32_t* w) {
  for (int i = 0; i < kStatusWords; ++i) w[i] = 0;
  if (dev[kDevSite] == 0) return false;
  auto low = [&](int i) { return static_cast<uint32_t>(dev[i] & 0xFFFFFFFFu); };
  int64_t lin = int64_t(0xFFFFFFFF) - static_cast<int64_t>(dev[kDevSite] >> 32);
  w[kStatusClaim] = 1;
  w[kStatusInstances] = static_cast<int32_t>(std::min<uint64_t>(dev[kDevInstances], INT32_MAX));
  w[kStatusSite] = static_cast<int32_t>(low(kDevSite));
  w[kStatusPid] = static_cast<int32_t>(lin % grid[0]);
  w[kStatusPid + 1] = static_cast<int32_t>((lin / grid[0]) % grid[1]);
  w[kStatusPid + 2] = static_cast<int32_t>(lin / (grid[0] * grid[1]));
  w[kStatusLane] = static_cast<int32_t>(low(kDevLane));
  w[kStatusBad] = static_cast<int32_t>(low(kDevBad));
  w[kStatusActive] = static_cast<int32_t>(low(kDevActive));
  int64_t flat = static_cast<int64_t>((uint64_t(low(kDevFlatHi)) << 32) | low(kDevFlatLo));
  std::memcpy(&w[kStatusFlat], &flat, sizeof flat);
  int64_t other = low(kDevOther);
  w[kStatusOther] = static_cast<int32_t>(other % grid[0]);
  w[kStatusOther + 1] = static_cast<int32_t>((other / grid[0]) % grid[1]);
  w[kStatusOther + 2] = static_cast<int32_t>(other / (grid[0] * grid[1]));
  w[kStatusOtherTag] = static_cast<int32_t>(low(kDevOtherTag));
  return true;
}

CudaFinding render_status(const NvvmKernelInfo& ki, const std::string& kernel, const int32_t* w, const Buffers& bufs) {
  if (w[kStatusSite] < 0 || static_cast<size_t>(w[kStatusSite]) >= ki.sites.size())
    internal_error("CudaDriver", "the status buffer names site " + std::to_string(w[kStatusSite]));
  const NvvmKernelInfo::Site& site = ki.sites[static_cast<size_t>(w[kStatusSite])];
  CudaFinding f;
  f.kernel = kernel;
  f.loc = site.loc;
  f.pid = {w[kStatusPid], w[kStatusPid + 1], w[kStatusPid + 2]};
  f.lanes = w[kStatusBad];
  f.instances = w[kStatusInstances];
  std::string note = site.loc2.valid() ? format_diag(site.loc2, "note", "from this schedule line") : "";
  if (site.kind == NvvmKernelInfo::Site::Assert) {
    f.kind = CudaFinding::AssertFailed;
    std::string head = site.text.empty() ? "assertion failed" : "assertion failed: " + site.text;
    f.message = format_diag(site.loc, "error", head) + note + "  " + std::to_string(w[kStatusBad]) + " of " + std::to_string(site.lanes) +
                " lanes false (first: lane " + lane_text(w[kStatusLane], site.tile) + "); pid " + pid_text(f.pid, static_cast<size_t>(ki.grid_rank)) + "\n";
  } else {  // an access: out of bounds, or a conflict
    f.buffer = site.text;
    int64_t flat = 0;
    std::memcpy(&flat, &w[kStatusFlat], sizeof flat);
    f.flat_index = flat;
    const Buffer* B = bufs.find(site.text);
    if (!B) internal_error("CudaDriver", "no buffer named '" + site.text + "'");
    size_t rank = static_cast<size_t>(ki.grid_rank);
    std::string me = pid_text(f.pid, rank);
    std::string buffer_line = "  buffer " + B->name + ": " + Type{B->dtype, false, B->shape}.str() + "; ";
    if (site.kind == NvvmKernelInfo::Site::Conflict) {
      // As the interpreter words it (interp/Memory.cpp report_conflict); of two plain stores the
      // instance with the smaller pid is named first, whichever of them the GPU ran first.
      f.kind = CudaFinding::Conflict;
      f.other_pid = {w[kStatusOther], w[kStatusOther + 1], w[kStatusOther + 2]};
      uint32_t tag = static_cast<uint32_t>(w[kStatusOtherTag]);
      f.other_wrote = (tag & 1u) == 0;
      int other_site = static_cast<int>(tag >> 1) - 1;
      std::string them = pid_text(f.other_pid, rank);
      std::string elem = B->name + "[" + std::to_string(flat) + "] (index " + index_text(flat, B->shape) + ")";
      std::string head;
      if (site.atomic)
        head = "instance " + me + " updates " + elem + " atomically, which instance " + them + " stores in the same launch without an atomic";
      else if (!f.other_wrote)
        head = "instance " + me + " stores " + elem + ", which instance " + them + " updates atomically in the same launch";
      else {
        auto order = [](const std::array<int64_t, 3>& p) { return std::array<int64_t, 3>{p[2], p[1], p[0]}; };
        bool me_first = order(f.pid) < order(f.other_pid);
        head = "instances " + (me_first ? me + " and " + them : them + " and " + me) + " both store " + elem;
      }
      std::string other_note;
      if (other_site >= 0 && static_cast<size_t>(other_site) < ki.sites.size())
        other_note = format_diag(ki.sites[static_cast<size_t>(other_site)].loc, "note",
                                 "instance " + them + (f.other_wrote ? " stores" : " updates") + " it here");
      f.message = format_diag(site.loc, "error", head) + note + other_note + buffer_line + std::to_string(w[kStatusBad]) + " of " +
                  std::to_string(w[kStatusActive]) + " active lanes conflict; first conflicting lane " + lane_text(w[kStatusLane], site.tile) + "\n";
    } else {
      f.kind = CudaFinding::OutOfBounds;
      std::string head = site.kind == NvvmKernelInfo::Site::Load ? "out-of-bounds load from '" + B->name + "'" : "out-of-bounds store to '" + B->name + "'";
      f.message = format_diag(site.loc, "error", head) + note + buffer_line + "first bad lane " + lane_text(w[kStatusLane], site.tile) +
                  " -> flat index " + std::to_string(flat) + " (index " + index_text(flat, B->shape) + "); " + std::to_string(w[kStatusBad]) +
                  " of " + std::to_string(w[kStatusActive]) + " active lanes out of bounds; pid " + me + "\n";
    }
  }
  return f;
}

}  // namespace dtsim
