// run_ptxas: whole-program `ptxas -arch=<arch> [-v]` on PTX text (a temp file), for tests, the
// differential tester's no-GPU mode and the cubin cache (precompile_cuda_module).
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "cuda_backend/Cache.h"
#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"

namespace dtsim {

namespace {
std::string find_ptxas() {
  std::vector<std::string> c;
  if (const char* e = std::getenv("DTSIM_PTXAS")) c.push_back(e);
#ifdef DTSIM_PTXAS_PATH
  c.push_back(DTSIM_PTXAS_PATH);
#endif
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) c.push_back(p.substr(start, end - start) + "/ptxas");
      start = end + 1;
    }
  }
  c.push_back("/usr/local/cuda/bin/ptxas");
  for (auto& x : c)
    if (!x.empty() && access(x.c_str(), X_OK) == 0) return x;
  return "";
}
}  // namespace

PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, bool verbose, const std::string& cubin_out) {
  PtxasResult res;
  std::string exe = find_ptxas();
  if (exe.empty()) {
    res.available = false;
    res.log = "ptxas not found";
    return res;
  }
  char in[] = "/tmp/dtsim-ptx-XXXXXX.ptx";
  int fd = mkstemps(in, 4);
  if (fd < 0) {
    res.log = "cannot create a temp file";
    return res;
  }
  ssize_t w = write(fd, ptx.data(), ptx.size());
  close(fd);
  std::string out = std::string(in) + ".cubin";
  std::string cmd = "'" + exe + "' -arch=" + (arch.empty() ? std::string("sm_90") : arch) + (verbose ? " -v" : "") + " '" + in + "' -o '" + out + "' 2>&1";
  if (w == static_cast<ssize_t>(ptx.size())) {
    FILE* p = popen(cmd.c_str(), "r");
    if (p) {
      std::array<char, 4096> buf;
      size_t n;
      while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) res.log.append(buf.data(), n);
      int st = pclose(p);
      res.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    } else {
      res.log = "cannot run " + exe;
    }
  }
  if (!res.ok) res.log = "ptxas failed (" + cmd.substr(0, cmd.size() - 5) + ", PTX kept in " + in + "):\n" + res.log;
  else std::remove(in);
  if (res.ok && !cubin_out.empty()) cache::store(cubin_out, cache::load(out));
  std::remove(out.c_str());
  return res;
}

namespace {
// The cubin of `ptx` for `arch` in the cache folder (its key: the PTX, the arch and the ptxas found),
// or "" without a cache folder or a ptxas.
std::string cubin_path(const std::string& ptx, const CudaOptions& opt) {
  if (opt.ptx_cache_dir.empty() || opt.arch.empty()) return "";
  static const std::string exe = find_ptxas();
  if (exe.empty()) return "";
  return cache::file(opt.ptx_cache_dir, ptx + "\n" + opt.arch + "\n" + exe, ".cubin");
}
}  // namespace

std::string cached_cubin(const std::string& ptx, const CudaOptions& opt) {
  std::string path = cubin_path(ptx, opt);
  std::string bin = path.empty() ? "" : cache::load(path);
  return bin.size() > 4 && bin.compare(0, 4, "\x7f" "ELF") == 0 ? bin : "";
}

void precompile_cuda_module(const Module& m, const Bindings& b, const CudaOptions& opt) {
  std::string ptx = compile_ptx(emit_nvvm_module(m, b, opt).ir, opt);
  std::string path = cubin_path(ptx, opt);
  if (!path.empty() && cached_cubin(ptx, opt).empty()) run_ptxas(ptx, opt.arch, false, path);
}

}  // namespace dtsim
