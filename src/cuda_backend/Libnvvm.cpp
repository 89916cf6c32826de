// compile_ptx: NVVM IR text -> PTX through libNVVM, loaded with dlopen (so dtsim starts without it).
// Order: add the IR, lazily add libdevice, verify (libNVVM crashes on some unverified IR), compile.
#include <dlfcn.h>
#include <nvvm.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <vector>

#include "cuda_backend/Cache.h"
#include "cuda_backend/Cuda.h"
#include "host/Text.h"

namespace dtsim {

namespace {

struct Nvvm {
  void* handle = nullptr;
  std::string error;
  nvvmResult (*create)(nvvmProgram*) = nullptr;
  nvvmResult (*destroy)(nvvmProgram*) = nullptr;
  nvvmResult (*add)(nvvmProgram, const char*, size_t, const char*) = nullptr;
  nvvmResult (*lazy_add)(nvvmProgram, const char*, size_t, const char*) = nullptr;
  nvvmResult (*verify)(nvvmProgram, int, const char**) = nullptr;
  nvvmResult (*compile)(nvvmProgram, int, const char**) = nullptr;
  nvvmResult (*result_size)(nvvmProgram, size_t*) = nullptr;
  nvvmResult (*result)(nvvmProgram, char*) = nullptr;
  nvvmResult (*log_size)(nvvmProgram, size_t*) = nullptr;
  nvvmResult (*log)(nvvmProgram, char*) = nullptr;
  const char* (*err_string)(nvvmResult) = nullptr;
};

template <class F> bool sym(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

const Nvvm& nvvm() {
  static Nvvm n;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> dirs;
#ifdef DTSIM_NVVM_LIB_DIR
    dirs.push_back(DTSIM_NVVM_LIB_DIR);
#endif
    for (const char* d : {"/usr/local/cuda/nvvm/lib64", "/usr/local/cuda/lib64", "/usr/local/cuda-13.0/lib"}) dirs.push_back(d);
    for (auto& d : dirs) {
      n.handle = dlopen((d + "/libnvvm.so").c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.handle) break;
    }
    if (!n.handle) n.handle = dlopen("libnvvm.so", RTLD_NOW | RTLD_LOCAL);
    if (!n.handle) {
      n.error = "libNVVM not found (searched the CUDA toolkit's nvvm/lib64, lib64 and lib)";
      return;
    }
    bool ok = sym(n.handle, "nvvmCreateProgram", n.create) && sym(n.handle, "nvvmDestroyProgram", n.destroy) &&
              sym(n.handle, "nvvmAddModuleToProgram", n.add) && sym(n.handle, "nvvmLazyAddModuleToProgram", n.lazy_add) &&
              sym(n.handle, "nvvmVerifyProgram", n.verify) && sym(n.handle, "nvvmCompileProgram", n.compile) &&
              sym(n.handle, "nvvmGetCompiledResultSize", n.result_size) && sym(n.handle, "nvvmGetCompiledResult", n.result) &&
              sym(n.handle, "nvvmGetProgramLogSize", n.log_size) && sym(n.handle, "nvvmGetProgramLog", n.log) &&
              sym(n.handle, "nvvmGetErrorString", n.err_string);
    if (!ok) n.error = "libNVVM lacks an expected symbol";
  });
  return n;
}

std::string libdevice_path() {
  std::vector<std::string> c;
#ifdef DTSIM_LIBDEVICE_PATH
  c.push_back(DTSIM_LIBDEVICE_PATH);
#endif
  c.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  for (auto& p : c)
    if (access(p.c_str(), R_OK) == 0) return p;
  return "";
}

std::string program_log(const Nvvm& n, nvvmProgram prog) {
  size_t sz = 0;
  if (n.log_size(prog, &sz) != NVVM_SUCCESS || sz <= 1) return "";
  std::string s(sz, '\0');
  n.log(prog, s.data());
  s.resize(sz - 1);
  return s;
}

// The IR lines the log points at ("<input>:LINE:COL" or "line LINE").
std::string offending_lines(const std::string& log, const std::string& ir) {
  std::vector<std::string> lines;
  std::istringstream in(ir);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  std::regex re(R"((?:\(|:|line )(\d+)(?:[:,] ?\d+)?)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator() && out.size() < 2000; ++it) {
    size_t ln = std::stoul((*it)[1].str());
    if (ln >= 1 && ln <= lines.size()) out += "  IR line " + std::to_string(ln) + ": " + lines[ln - 1] + "\n";
  }
  return out;
}

std::string write_temp(const std::string& text, const char* suffix) {
  std::string path = "/tmp/dtsim-XXXXXX" + std::string(suffix);
  std::vector<char> buf(path.begin(), path.end());
  buf.push_back('\0');
  int fd = mkstemps(buf.data(), static_cast<int>(std::string(suffix).size()));
  if (fd < 0) return "";
  ssize_t w = write(fd, text.data(), text.size());
  close(fd);
  if (w != static_cast<ssize_t>(text.size())) return "";
  return buf.data();
}

std::atomic<int64_t> g_cache_hits{0}, g_cache_misses{0};

// The cache file of one compilation: everything that decides the PTX.
std::string cache_path(const std::string& dir, const std::string& ir, const std::vector<std::string>& opts, const std::string& ld) {
  std::string key = ir;
  for (const std::string& o : opts) key += "\n" + o;
  key += "\n" + ld + "\n" + std::to_string(std::filesystem::exists(ld) ? std::filesystem::file_size(ld) : 0);
  return cache::file(dir, key, ".ptx");
}

std::string compile_ptx_uncached(const std::string& ir, const CudaOptions& opt);

}  // namespace

PtxCacheStats ptx_cache_stats() { return PtxCacheStats{g_cache_hits.load(), g_cache_misses.load()}; }

std::string compile_ptx(const std::string& ir, const CudaOptions& opt) {
  if (opt.ptx_cache_dir.empty()) return compile_ptx_uncached(ir, opt);
  std::string target = opt.arch.empty() ? "sm_90" : opt.arch;
  std::vector<std::string> key = {target, opt.fast_math ? "fast" : "ieee", opt.fp_fusion ? "fma" : "nofma", opt.approx_div ? "divfull" : "divrn"};
  std::string path = cache_path(opt.ptx_cache_dir, ir, key, libdevice_path());
  std::string ptx = cache::load(path);
  if (!ptx.empty() && ptx.find(".entry") != std::string::npos) {
    ++g_cache_hits;
    return ptx;
  }
  ptx = compile_ptx_uncached(ir, opt);
  ++g_cache_misses;
  cache::store(path, ptx);
  return ptx;
}

namespace cache {

namespace {
std::atomic<int64_t> g_tmp_counter{0};

uint64_t fnv1a64(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
}  // namespace

std::string file(const std::string& dir, const std::string& key, const char* ext) {
  char name[48];
  std::snprintf(name, sizeof name, "%016llx%016llx", static_cast<unsigned long long>(fnv1a64(key)),
                static_cast<unsigned long long>(fnv1a64(key, 0x84222325cbf29ce4ull)));
  return (std::filesystem::path(dir) / (std::string(name) + ext)).string();
}

std::string load(const std::string& path) { return read_whole_file(path).value_or(""); }

void store(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(g_tmp_counter++);
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return;
    f << bytes;
    if (!f) return;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace cache

namespace {

std::string compile_ptx_uncached(const std::string& ir, const CudaOptions& opt) {
  const Nvvm& n = nvvm();
  if (!n.handle || !n.err_string) user_error(SourceLoc{}, n.error.empty() ? "libNVVM unusable" : n.error);
  std::string ld = libdevice_path();
  if (ld.empty()) user_error(SourceLoc{}, "libdevice.10.bc not found (looked in DTSIM_LIBDEVICE_PATH and /usr/local/cuda/nvvm/libdevice)");
  std::string libdevice = read_whole_file(ld).value_or("");
  std::string target = opt.arch.empty() ? "sm_90" : opt.arch;
  std::string arch = target.rfind("sm_", 0) == 0 ? "compute_" + target.substr(3) : target;
  std::vector<std::string> opts = {"-arch=" + arch};
  if (opt.fast_math) {
    for (const char* o : {"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"}) opts.push_back(o);
  } else {
    for (const char* o : {"-ftz=0", opt.approx_div ? "-prec-div=0" : "-prec-div=1", "-prec-sqrt=1"}) opts.push_back(o);
    opts.push_back(opt.fp_fusion ? "-fma=1" : "-fma=0");
  }
  std::vector<const char*> copts;
  for (auto& o : opts) copts.push_back(o.c_str());

  nvvmProgram prog = nullptr;
  if (n.create(&prog) != NVVM_SUCCESS) user_error(SourceLoc{}, "nvvmCreateProgram failed");
  struct Guard {
    const Nvvm& n;
    nvvmProgram& p;
    ~Guard() { n.destroy(&p); }
  } guard{n, prog};
  auto failure = [&](const char* stage, nvvmResult r) {
    std::string log = program_log(n, prog);
    std::string path = write_temp(ir, ".ll");
    std::string msg = std::string("libNVVM ") + stage + " failed (" + n.err_string(r) + ")\n" + log;
    std::string lines = offending_lines(log, ir);
    if (!lines.empty()) msg += "\n" + lines;
    std::string o;
    for (auto& s : opts) o += " " + s;
    msg += "\nthe NVVM IR is in " + (path.empty() ? std::string("(could not write a temp file)") : path) +
           "\nreproduce: nvvmc -verify -lazy " + ld + " " + (path.empty() ? "IR.ll" : path) + " --" + o +
           "   (nvvmc: /work/shared/notes/nvvm/nvvmc.c, a minimal libNVVM driver)";
    user_error(SourceLoc{}, msg);
  };
  nvvmResult r = n.add(prog, ir.data(), ir.size(), "dtsim");
  if (r != NVVM_SUCCESS) failure("parse", r);
  r = n.lazy_add(prog, libdevice.data(), libdevice.size(), "libdevice");
  if (r != NVVM_SUCCESS) failure("adding libdevice", r);
  r = n.verify(prog, static_cast<int>(copts.size()), copts.data());
  if (r != NVVM_SUCCESS) failure("verification", r);
  r = n.compile(prog, static_cast<int>(copts.size()), copts.data());
  if (r != NVVM_SUCCESS) failure("compilation", r);
  size_t sz = 0;
  n.result_size(prog, &sz);
  std::string ptx(sz, '\0');
  n.result(prog, ptx.data());
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace

}  // namespace dtsim
