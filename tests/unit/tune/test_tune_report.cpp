// What `dtsim tune` writes from a result list (tune/Tune.h): best, the count within 10%, reasons,
// CSV quoting, JSON, and the SVG plot with its reference lines; no plot without times.
#include <doctest/doctest.h>

#include <cmath>

#include "ir/Diag.h"
#include "tune/Tune.h"

using namespace dtsim;

namespace {
TuneCandidate cand(uint64_t i, const std::string& status, std::optional<double> ms, const std::string& reason = "") {
  TuneCandidate c;
  c.index = i;
  c.status = status;
  c.ms = ms;
  c.reason = reason;
  c.phase = "random";
  c.schedule = "f.block(x:" + std::to_string(i) + ");\nf.compile();\n";
  return c;
}

TuneResult sample() {
  TuneResult r;
  r.file = "f.dt";
  r.sizes = "x=1024";
  r.backend = "dtsim's CUDA backend";
  r.device = "GPU";
  r.space = 100;
  r.configs = 1;
  r.mode = "sampled";
  r.seconds = 30;
  r.bytes = 2'000'000'000;  // 2 GB: 1 ms is 2000 GB/s
  r.candidates = {cand(1, "timed", 2.0), cand(2, "timed", 1.0), cand(3, "timed", 1.09), cand(4, "timed", 1.11),
                  cand(5, "illegal", std::nullopt, "rsum() over y, \"inside\""), cand(6, "illegal", std::nullopt, "rsum() over y, \"inside\""),
                  cand(7, "check-failed", std::nullopt, "wrong result")};
  r.references = {{"torch", 1.5}};
  return r;
}
}  // namespace

TEST_CASE("best, within 10%, reasons and rates") {
  TuneResult r = sample();
  REQUIRE(r.best());
  CHECK(r.best()->index == 2);
  CHECK(r.within(0.10) == 2);  // 1.0 and 1.09; 1.11 is past 10%
  auto reasons = r.reasons();
  REQUIRE(reasons.size() == 2);
  CHECK(reasons[0].first == "illegal: rsum() over y, \"inside\"");
  CHECK(reasons[0].second == 2);
  CHECK(tune_gbps(r, 1.0) == doctest::Approx(2000));
  CHECK(std::isnan(tune_tflops(r, 1.0)));
  CHECK(r.per_minute() == doctest::Approx(14));
  std::string text = tune_text(r);
  CHECK(text.find("searched 7 of 100 schedules (sampled): 0 pruned, 2 illegal, 1 failed the check, 4 passed the check") != std::string::npos);
  CHECK(text.find("best: 1.000 ms (2000 GB/s), schedule 2; 2 schedule(s) within 10% of it") != std::string::npos);
  CHECK(text.find("torch: 1.500 ms (best is 1.50x faster)") != std::string::npos);
  CHECK(text.find("f.block(x:2);\nf.compile();\n") != std::string::npos);
}

TEST_CASE("CSV: one quoted row per candidate") {
  std::string csv = tune_csv(sample());
  CHECK(csv.rfind("index,status,phase,ms,gbps,tflops,reason,schedule\n", 0) == 0);
  CHECK(csv.find("2,timed,random,1.000000,2000.00,,,f.block(x:2); f.compile();\n") != std::string::npos);
  CHECK(csv.find("5,illegal,random,,,,\"rsum() over y, \"\"inside\"\"\",f.block(x:5); f.compile();\n") != std::string::npos);
}

TEST_CASE("JSON: summary, best and candidates") {
  std::string j = tune_json(sample());
  CHECK(j.find("\"searched\": 7") != std::string::npos);
  CHECK(j.find("\"within_10pct\": 2") != std::string::npos);
  CHECK(j.find("\"best\": {\"index\": 2, \"ms\": 1,") != std::string::npos);
  CHECK(j.find("\"references\": [{\"name\": \"torch\", \"ms\": 1.5}]") != std::string::npos);
  CHECK(j.find("\"reason\": \"rsum() over y, \\\"inside\\\"\"") != std::string::npos);
}

TEST_CASE("SVG: sorted times, a band for 10%, a line per reference; nothing to plot without times") {
  std::string svg = tune_svg(sample());
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("4 timed schedules of 100") != std::string::npos);
  CHECK(svg.find("torch 1.500 ms") != std::string::npos);
  CHECK(svg.find("within 10% of the best") != std::string::npos);
  size_t circles = 0;
  for (size_t p = svg.find("<circle"); p != std::string::npos; p = svg.find("<circle", p + 1)) ++circles;
  CHECK(circles == 4);
  // Sorted: the first point is the fastest (1.000 ms), the last the slowest.
  CHECK(svg.find("<title>1.000 ms</title>") < svg.find("<title>2.000 ms</title>"));
  TuneResult none = sample();
  for (TuneCandidate& c : none.candidates) c.ms.reset();
  CHECK_THROWS_AS(tune_svg(none), UserError);
}
