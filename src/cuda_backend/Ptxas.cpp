// run_ptxas: whole-program `ptxas -arch=<arch> [-v]` on PTX text (a temp file), for tests and the
// differential tester's no-GPU mode.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, bool verbose) {
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
  std::remove(out.c_str());
  return res;
}

namespace {
uint64_t fnv1a64(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The cubin of `ptx` for `arch` in the cache folder (named by two hashes of the PTX, the arch and the
// ptxas found), or "" without a cache folder or a ptxas.
std::string cubin_path(const std::string& ptx, const CudaOptions& opt) {
  if (opt.ptx_cache_dir.empty() || opt.arch.empty()) return "";
  static const std::string exe = find_ptxas();
  if (exe.empty()) return "";
  std::string key = ptx + "\n" + opt.arch + "\n" + exe;
  char name[56];
  std::snprintf(name, sizeof name, "%016llx%016llx.cubin", static_cast<unsigned long long>(fnv1a64(key)),
                static_cast<unsigned long long>(fnv1a64(key, 0x84222325cbf29ce4ull)));
  return (std::filesystem::path(opt.ptx_cache_dir) / name).string();
}

std::atomic<int64_t> g_cubin_tmp{0};
}  // namespace

std::string cached_cubin(const std::string& ptx, const CudaOptions& opt) {
  std::string path = cubin_path(ptx, opt);
  if (path.empty()) return "";
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bin = ss.str();
  return bin.size() > 4 && bin.compare(0, 4, "\x7f" "ELF") == 0 ? bin : "";
}

void precompile_cuda_module(const Module& m, const Bindings& b, const CudaOptions& opt) {
  std::string ptx = compile_ptx(emit_nvvm_module(m, b, opt).ir, opt);
  std::string path = cubin_path(ptx, opt);
  if (path.empty() || !cached_cubin(ptx, opt).empty()) return;
  // ptxas writes a file of its own name; renamed into place whole, so readers never see half a cubin.
  char in[] = "/tmp/dtsim-pre-XXXXXX.ptx";
  int fd = mkstemps(in, 4);
  if (fd < 0) return;
  ssize_t w = write(fd, ptx.data(), ptx.size());
  close(fd);
  std::string out = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(g_cubin_tmp++);
  if (w == static_cast<ssize_t>(ptx.size())) {
    std::string cmd = "'" + find_ptxas() + "' -arch=" + opt.arch + " '" + in + "' -o '" + out + "' > /dev/null 2>&1";
    int st = std::system(cmd.c_str());
    std::error_code ec;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) std::filesystem::rename(out, path, ec);
    std::filesystem::remove(out, ec);
  }
  std::remove(in);
}

}  // namespace dtsim
