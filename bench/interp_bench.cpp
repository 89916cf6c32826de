// dtsim_bench: times the interpreter on the anchor workloads (vector add, softmax, naive matmul)
// single-threaded and on all cores, sanitizer on and off, plus the per-instance overhead, and
// prints the ratios to Triton 3.6's interpreter figures. `--quick`: tiny sizes, checks results
// against plain C++ references (for CTest), no timing claims.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
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
  p.m = parse_tile_file(std::string(DTSIM_BENCH_KERNELS) + "/" + w.file);
  p.b = bind_params(p.m, w.args);
  verify_module(p.m, p.b);
  p.bufs = make_buffers(p.m, p.b, 42);
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

// Largest |got - want| / (1 + |want|) over the output buffer, against a C++ reference.
double check(const Workload& w, Prepared& p) {
  InterpOptions opt;
  RunReport rep = run_module(p.m, p.b, p.bufs, opt);
  if (!rep.ok()) return 1e30;
  auto I = [&](const char* n) { return p.b.at(n).i; };
  double err = 0;
  auto cmp = [&](double got, double want) { err = std::max(err, std::fabs(got - want) / (1 + std::fabs(want))); };
  if (w.file == "add.tile") {
    const Buffer &x = *p.bufs.find("x"), &y = *p.bufs.find("y"), &z = *p.bufs.find("z");
    for (int64_t i = 0; i < I("n"); ++i) cmp(z.get(i), static_cast<float>(x.get(i) + y.get(i)));
  } else if (w.file == "softmax.tile") {
    const Buffer &x = *p.bufs.find("x"), &y = *p.bufs.find("y");
    int64_t R = I("rows"), C = I("n_cols");
    for (int64_t r = 0; r < R; ++r) {
      double mx = -INFINITY, s = 0;
      for (int64_t c = 0; c < C; ++c) mx = std::max(mx, x.get(r * C + c));
      for (int64_t c = 0; c < C; ++c) s += std::exp(x.get(r * C + c) - mx);
      for (int64_t c = 0; c < C; ++c) cmp(y.get(r * C + c), std::exp(x.get(r * C + c) - mx) / s);
    }
  } else {
    const Buffer &a = *p.bufs.find("a"), &b = *p.bufs.find("b"), &c = *p.bufs.find("c");
    int64_t M = I("M"), N = I("N"), K = I("K");
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a.get(i * K + k) * b.get(k * N + j);
        cmp(c.get(i * N + j), s);
      }
  }
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // `--only SUBSTR`: time only the workloads whose name contains SUBSTR (for profiling).
  std::string only = argc > 2 && std::strcmp(argv[1], "--only") == 0 ? argv[2] : "";
  try {
    if (quick) {
      std::vector<Workload> ws = {{"add", "add.tile", {{"n", "1000"}, {"BLOCK", "64"}}, 0},
                                  {"softmax", "softmax.tile", {{"rows", "7"}, {"n_cols", "100"}, {"BLOCK", "128"}}, 0},
                                  {"matmul", "naive_matmul.tile", {{"M", "50"}, {"N", "40"}, {"K", "70"}, {"BM", "16"}, {"BN", "16"}, {"BK", "16"}}, 0}};
      int bad = 0;
      for (const Workload& w : ws) {
        Prepared p = prepare(w);
        double e = check(w, p);
        std::printf("%-8s max rel error %.3g %s\n", w.name.c_str(), e, e < 1e-5 ? "ok" : "WRONG");
        bad += e < 1e-5 ? 0 : 1;
      }
      return bad ? 1 : 0;
    }
    std::vector<Workload> ws = {
        {"add n=2^20 BLOCK=1024", "add.tile", {{"n", "1048576"}, {"BLOCK", "1024"}}, 554},
        {"add n=2^16 BLOCK=64", "add.tile", {{"n", "65536"}, {"BLOCK", "64"}}, 477},
        {"softmax 512x1000", "softmax.tile", {{"rows", "512"}, {"n_cols", "1000"}, {"BLOCK", "1024"}}, 539},
        {"matmul 256^3 32x32x32", "naive_matmul.tile", {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"BM", "32"}, {"BN", "32"}, {"BK", "32"}}, 826},
        {"matmul 512^3 64x64x32", "naive_matmul.tile", {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"BM", "64"}, {"BN", "64"}, {"BK", "32"}}, 1504},
    };
    int cores = omp_get_num_procs();
    std::printf("dtsim interpreter benchmark: best of 3 wall times in ms; %d cores; ratio = Triton interpreter time / dtsim time\n", cores);
    std::printf("%-24s %9s %9s %9s %9s %9s %9s %9s\n", "workload", "triton", "1T-san", "1T-nosan", "NT-san", "NT-nosan", "x(1T)", "x(NT)");
    double log1 = 0, logn = 0;
    for (const Workload& w : ws) {
      if (!only.empty() && w.name.find(only) == std::string::npos) continue;
      Prepared p = prepare(w);
      if (check(w, p) > 1e-4) {
        std::fprintf(stderr, "%s: wrong result\n", w.name.c_str());
        return 1;
      }
      double s1 = time_run(p, 1, Sanitize::All, 3), n1 = time_run(p, 1, Sanitize::None, 3);
      double sn = time_run(p, cores, Sanitize::All, 3), nn = time_run(p, cores, Sanitize::None, 3);
      double r1 = w.triton_ms / s1, rn = w.triton_ms / sn;
      log1 += std::log(r1), logn += std::log(rn);
      std::printf("%-24s %9.1f %9.2f %9.2f %9.2f %9.2f %8.0fx %8.0fx\n", w.name.c_str(), w.triton_ms, s1, n1, sn, nn, r1, rn);
    }
    std::printf("geometric mean speedup (sanitizer on): single thread %.0fx, %d threads %.0fx\n", std::exp(log1 / ws.size()), cores,
                std::exp(logn / ws.size()));
    Workload empty{"empty", "empty.tile", {{"n", "200000"}}, 0};
    Prepared p = prepare(empty);
    double on = time_run(p, 1, Sanitize::All, 3), off = time_run(p, 1, Sanitize::None, 3);
    std::printf("per-instance overhead (near-empty kernel, 200000 instances, 1 thread): %.2f us (sanitizer on), %.2f us (off)\n",
                on * 1000 / 200000, off * 1000 / 200000);
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s", e.render().c_str());
    return 2;
  }
  return 0;
}
