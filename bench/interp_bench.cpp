// dtsim_bench: times the interpreter on the anchor workloads (vector add, softmax, naive matmul)
// and on layernorm, rmsnorm and scalar code (the untensorized mm.dt), single-threaded and on all
// cores, sanitizer on and off, plus the per-instance overhead. For each workload it also times a
// plain C++ loop over the same arrays in the same process (same compiler flags: no -march) and
// prints the ratio, and the ratio to Triton 3.6's interpreter figures where there is one.
// `--quick`: tiny sizes, checks results against the C++ references (for CTest), no timing claims.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "interp/Interp.h"
#include "ir/TileParser.h"

using namespace dtsim;

namespace {

struct Workload {
  std::string name, file;
  std::map<std::string, std::string> args;
  double triton_ms;  // Triton 3.6 interpreter, 16-core H200 host (0 = none)
};

struct Prepared {
  Module m;
  Bindings b;
  Buffers bufs;
};

Prepared prepare(const Workload& w) {
  Prepared p;
  // DTSIM_BENCH_KERNELS in the environment: the kernels' folder when the binary runs elsewhere.
  const char* dir = std::getenv("DTSIM_BENCH_KERNELS");
  p.m = parse_tile_file(std::string(dir ? dir : DTSIM_BENCH_KERNELS) + "/" + w.file);
  p.b = bind_params(p.m, w.args);
  verify_module(p.m, p.b);
  p.bufs = make_buffers(p.m, p.b, 42);
  // The embedding's indices: rows of the table in [0, V), scattered (a multiplicative hash), each
  // row named several times (4096 ids into 1000 rows).
  if (Buffer* ids = p.bufs.find("ids")) {
    const int64_t V = p.b.at("V").i;
    for (int64_t i = 0; i < ids->numel(); ++i) ids->set(i, static_cast<double>((static_cast<uint64_t>(i) * 2654435761u >> 7) % static_cast<uint64_t>(V)));
  }
  return p;
}

// Best-of-n wall time of one run_module call, in ms.
double time_run(Prepared& p, int threads, Sanitize s, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    InterpOptions opt;
    opt.threads = threads;
    opt.sanitize = s;
    auto t0 = std::chrono::steady_clock::now();
    RunReport rep = run_module(p.m, p.b, p.bufs, opt);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!rep.ok()) {
      std::fprintf(stderr, "unexpected finding:\n%s", rep.findings.empty() ? "" : rep.findings[0].message.c_str());
      std::exit(1);
    }
    best = std::min(best, ms);
  }
  return best;
}

// The plain C++ loop of a workload: f32 arrays, the obvious loops (matmul in i-k-j order), one
// thread. run() computes `out` from the inputs; each call is one timed repetition.
struct CppLoop {
  std::vector<float> a, b, c, w, out;
  std::function<void(CppLoop&)> run;
};

CppLoop cpp_loop(const Workload& w, Prepared& p) {
  auto I = [&](const char* n) { return p.b.at(n).i; };
  auto vec = [&](const char* name) {
    const Buffer& B = *p.bufs.find(name);
    std::vector<float> v(static_cast<size_t>(B.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(B.get(static_cast<int64_t>(i)));
    return v;
  };
  CppLoop L;
  if (w.file == "add.tile") {
    L.a = vec("x"), L.b = vec("y"), L.out.resize(L.a.size());
    L.run = [](CppLoop& l) {
      size_t n = l.a.size();
      for (size_t i = 0; i < n; ++i) l.out[i] = l.a[i] + l.b[i];
    };
  } else if (w.file == "softmax.tile" || w.file == "layernorm.tile" || w.file == "rmsnorm.tile") {
    int64_t R = I("rows"), C = I("n_cols");
    L.a = vec("x"), L.out.resize(L.a.size());
    if (w.file != "softmax.tile") L.w = vec("w");
    if (w.file == "layernorm.tile") L.b = vec("b");
    std::string f = w.file;
    L.run = [R, C, f](CppLoop& l) {
      for (int64_t r = 0; r < R; ++r) {
        const float* x = l.a.data() + r * C;
        float* y = l.out.data() + r * C;
        if (f == "softmax.tile") {
          float mx = -INFINITY, s = 0;
          for (int64_t c = 0; c < C; ++c) mx = std::max(mx, x[c]);
          for (int64_t c = 0; c < C; ++c) s += (y[c] = std::exp(x[c] - mx));
          for (int64_t c = 0; c < C; ++c) y[c] /= s;
        } else if (f == "layernorm.tile") {
          float s = 0, v = 0;
          for (int64_t c = 0; c < C; ++c) s += x[c];
          float mean = s / static_cast<float>(C);
          for (int64_t c = 0; c < C; ++c) v += (x[c] - mean) * (x[c] - mean);
          float rstd = 1.0f / std::sqrt(v / static_cast<float>(C) + 1e-5f);
          for (int64_t c = 0; c < C; ++c) y[c] = (x[c] - mean) * rstd * l.w[static_cast<size_t>(c)] + l.b[static_cast<size_t>(c)];
        } else {
          float s = 0;
          for (int64_t c = 0; c < C; ++c) s += x[c] * x[c];
          float rstd = 1.0f / std::sqrt(s / static_cast<float>(C) + 1e-5f);
          for (int64_t c = 0; c < C; ++c) y[c] = x[c] * rstd * l.w[static_cast<size_t>(c)];
        }
      }
    };
  } else if (w.file == "embedding_fwd.tile" || w.file == "embedding_bwd.tile") {
    const int64_t n = I("n"), D = I("D");
    const Buffer& ids = *p.bufs.find("ids");
    std::vector<int64_t> id(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) id[static_cast<size_t>(i)] = static_cast<int64_t>(ids.get(i));
    if (w.file == "embedding_fwd.tile") {  // out[i, :] = w[ids[i], :]
      L.a = vec("w"), L.out.resize(static_cast<size_t>(n * D));
      L.run = [n, D, id](CppLoop& l) {
        for (int64_t i = 0; i < n; ++i) std::memcpy(&l.out[static_cast<size_t>(i * D)], &l.a[static_cast<size_t>(id[static_cast<size_t>(i)] * D)], sizeof(float) * static_cast<size_t>(D));
      };
    } else {  // out = dw as it was before the run, then out[ids[i], :] += g[i, :]
      L.a = vec("g"), L.w = vec("dw"), L.out.resize(L.w.size());
      L.run = [n, D, id](CppLoop& l) {
        std::copy(l.w.begin(), l.w.end(), l.out.begin());
        for (int64_t i = 0; i < n; ++i) {
          float* o = &l.out[static_cast<size_t>(id[static_cast<size_t>(i)] * D)];
          const float* g = &l.a[static_cast<size_t>(i * D)];
          for (int64_t j = 0; j < D; ++j) o[j] += g[j];
        }
      };
    }
  } else {
    bool scalar = w.file == "mm_scalar.tile";
    int64_t M = scalar ? I("x_SIZE") : I("M"), N = scalar ? I("y_SIZE") : I("N"), K = scalar ? I("k_SIZE") : I("K");
    L.a = vec(scalar ? "A" : "a"), L.b = vec(scalar ? "B" : "b"), L.out.resize(static_cast<size_t>(M * N));
    L.run = [M, N, K](CppLoop& l) {
      std::fill(l.out.begin(), l.out.end(), 0.0f);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
          float aik = l.a[static_cast<size_t>(i * K + k)];
          for (int64_t j = 0; j < N; ++j) l.out[static_cast<size_t>(i * N + j)] += aik * l.b[static_cast<size_t>(k * N + j)];
        }
    };
  }
  return L;
}

const char* out_name(const Workload& w) {
  if (w.file == "add.tile") return "z";
  if (w.file == "naive_matmul.tile") return "c";
  if (w.file == "mm_scalar.tile") return "mm";
  if (w.file == "embedding_bwd.tile") return "dw";
  return "y";
}

// Largest |got - want| / (1 + |want|) over the output buffer, against the C++ loop.
double check(const Workload& w, Prepared& p, CppLoop& L) {
  InterpOptions opt;
  RunReport rep = run_module(p.m, p.b, p.bufs, opt);
  if (!rep.ok()) return 1e30;
  L.run(L);
  const Buffer& out = *p.bufs.find(out_name(w));
  double err = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    double got = out.get(i), want = L.out[static_cast<size_t>(i)];
    err = std::max(err, std::fabs(got - want) / (1 + std::fabs(want)));
  }
  return err;
}

// Best-of-n wall time of the C++ loop, in ms.
double time_cpp(CppLoop& L, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    L.run(L);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  volatile float sink = L.out.empty() ? 0.0f : L.out[0];
  (void)sink;
  return best;
}

// The timed workloads (Triton 3.6 interpreter figures from the 16-core H200 host, 0 = none).
std::vector<Workload> full_workloads() {
  return {
    {"add n=2^20 BLOCK=1024", "add.tile", {{"n", "1048576"}, {"BLOCK", "1024"}}, 554},
    {"add n=2^16 BLOCK=64", "add.tile", {{"n", "65536"}, {"BLOCK", "64"}}, 477},
    {"softmax 512x1000", "softmax.tile", {{"rows", "512"}, {"n_cols", "1000"}, {"BLOCK", "1024"}}, 539},
    {"matmul 256^3 32x32x32", "naive_matmul.tile", {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"BM", "32"}, {"BN", "32"}, {"BK", "32"}}, 826},
    {"matmul 512^3 64x64x32", "naive_matmul.tile", {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"BM", "64"}, {"BN", "64"}, {"BK", "32"}}, 1504},
    {"layernorm 4096x1024", "layernorm.tile", {{"rows", "4096"}, {"n_cols", "1024"}, {"BLOCK", "1024"}}, 0},
    {"rmsnorm 4096x1024", "rmsnorm.tile", {{"rows", "4096"}, {"n_cols", "1024"}, {"BLOCK", "1024"}}, 0},
    {"mm.dt untensorized", "mm_scalar.tile", {{"x_SIZE", "200"}, {"y_SIZE", "256"}, {"k_SIZE", "96"}}, 0},
    // Liger's embedding (1000x256 table, 4096 ids): the gather forward, the atomic scatter backward
    {"embedding fwd gather", "embedding_fwd.tile", {}, 0},
    {"embedding bwd atomic_add", "embedding_bwd.tile", {}, 0},
  };
}

Sanitize sanitize_named(const char* s) { return std::strcmp(s, "all") == 0 ? Sanitize::All : std::strcmp(s, "bounds") == 0 ? Sanitize::Bounds : Sanitize::None; }

// `--only SUBSTR --profile THREADS none|bounds|all REPS`: those workloads in one configuration only
// (for profilers); prints the best time.
int profile_only(const std::string& only, int threads, Sanitize s, int reps) {
  for (const Workload& w : full_workloads()) {
    if (w.name.find(only) == std::string::npos) continue;
    Prepared p = prepare(w);
    std::printf("%s: %d threads, best of %d: %.3f ms\n", w.name.c_str(), threads, reps, time_run(p, threads, s, reps));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // `--only SUBSTR`: time only the workloads whose name contains SUBSTR (for profiling).
  std::string only = argc > 2 && std::strcmp(argv[1], "--only") == 0 ? argv[2] : "";
  if (!only.empty() && argc > 6 && std::strcmp(argv[3], "--profile") == 0)
    return profile_only(only, std::atoi(argv[4]), sanitize_named(argv[5]), std::atoi(argv[6]));
  try {
    if (quick) {
      std::vector<Workload> ws = {{"add", "add.tile", {{"n", "1000"}, {"BLOCK", "64"}}, 0},
                                  {"softmax", "softmax.tile", {{"rows", "7"}, {"n_cols", "100"}, {"BLOCK", "128"}}, 0},
                                  {"matmul", "naive_matmul.tile", {{"M", "50"}, {"N", "40"}, {"K", "70"}, {"BM", "16"}, {"BN", "16"}, {"BK", "16"}}, 0},
                                  {"layernorm", "layernorm.tile", {{"rows", "5"}, {"n_cols", "100"}, {"BLOCK", "128"}}, 0},
                                  {"rmsnorm", "rmsnorm.tile", {{"rows", "5"}, {"n_cols", "100"}, {"BLOCK", "128"}}, 0},
                                  {"mm scalar", "mm_scalar.tile", {{"x_SIZE", "20"}, {"y_SIZE", "140"}, {"k_SIZE", "9"}}, 0},
                                  {"emb fwd", "embedding_fwd.tile", {{"n", "300"}, {"V", "50"}, {"D", "48"}, {"BM", "64"}, {"BN", "32"}}, 0},
                                  {"emb bwd", "embedding_bwd.tile", {{"n", "300"}, {"V", "50"}, {"D", "48"}, {"BM", "64"}, {"BN", "32"}}, 0}};
      int bad = 0;
      for (const Workload& w : ws) {
        Prepared p = prepare(w);
        CppLoop L = cpp_loop(w, p);
        double e = check(w, p, L);
        std::printf("%-10s max rel error %.3g %s\n", w.name.c_str(), e, e < 1e-5 ? "ok" : "WRONG");
        bad += e < 1e-5 ? 0 : 1;
      }
      return bad ? 1 : 0;
    }
    std::vector<Workload> ws = full_workloads();
    int cores = omp_get_num_procs();
    std::printf("dtsim interpreter benchmark: best of 3 wall times in ms; %d cores; C++ = plain C++ loop, same process, 1 thread;\n", cores);
    std::printf("vs C++ = dtsim 1 thread sanitizer off / C++; san = sanitizer cost (1T on / off); x = Triton interpreter time / dtsim time\n");
    std::printf("%-24s %8s %9s %9s %9s %9s %9s %8s %6s %7s %7s\n", "workload", "triton", "1T-san", "1T-nosan", "NT-san", "NT-nosan", "C++",
                "vs C++", "san", "x(1T)", "x(NT)");
    double log1 = 0, logn = 0;
    int ntriton = 0;
    for (const Workload& w : ws) {
      if (!only.empty() && w.name.find(only) == std::string::npos) continue;
      Prepared p = prepare(w);
      CppLoop L = cpp_loop(w, p);
      if (check(w, p, L) > 1e-4) {
        std::fprintf(stderr, "%s: wrong result\n", w.name.c_str());
        return 1;
      }
      double s1 = time_run(p, 1, Sanitize::All, 3), n1 = time_run(p, 1, Sanitize::None, 3);
      double sn = time_run(p, cores, Sanitize::All, 3), nn = time_run(p, cores, Sanitize::None, 3);
      double cpp = time_cpp(L, 3);
      std::printf("%-24s %8.1f %9.2f %9.2f %9.2f %9.2f %9.3f %7.1fx %5.2fx", w.name.c_str(), w.triton_ms, s1, n1, sn, nn, cpp, n1 / cpp, s1 / n1);
      if (w.triton_ms > 0) {
        double r1 = w.triton_ms / s1, rn = w.triton_ms / sn;
        log1 += std::log(r1), logn += std::log(rn), ++ntriton;
        std::printf(" %6.0fx %6.0fx\n", r1, rn);
      } else {
        std::printf(" %7s %7s\n", "-", "-");
      }
      if (w.file == "mm_scalar.tile")
        std::printf("  (scalar code: %.1f ns per inner k iteration, 1 thread, sanitizer off)\n",
                    n1 * 1e6 / static_cast<double>(4 * 128 * 128 * p.b.at("k_SIZE").i));
    }
    if (ntriton)
      std::printf("geometric mean speedup over Triton's interpreter (sanitizer on): single thread %.0fx, %d threads %.0fx\n",
                  std::exp(log1 / ntriton), cores, std::exp(logn / ntriton));
    Workload empty{"empty", "empty.tile", {{"n", "200000"}}, 0};
    Prepared p = prepare(empty);
    double on = time_run(p, 1, Sanitize::All, 3), off = time_run(p, 1, Sanitize::None, 3);
    std::printf("per-instance overhead (near-empty kernel, 200000 instances, 1 thread): %.3f us (sanitizer on), %.3f us (off)\n",
                on * 1000 / 200000, off * 1000 / 200000);
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s", e.render().c_str());
    return 2;
  }
  return 0;
}
