// What `dtsim tune` writes from a search's result list: the text report, CSV, JSON and the SVG
// plot of sorted times (Tune.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ir/Diag.h"
#include "tune/Tune.h"
#include "host/Text.h"

namespace dtsim {

namespace {


std::string json_num(double v) { return std::isfinite(v) ? fmt("%.10g", v) : "null"; }

std::string xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string one_line(const std::string& schedule) {
  std::string o;
  for (char c : schedule) o += c == '\n' ? ' ' : c;
  while (!o.empty() && o.back() == ' ') o.pop_back();
  return o;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string ms_str(double ms) { return fmt(ms < 0.1 ? "%.4f" : "%.3f", ms); }

// "812 GB/s" or "312 TFLOP/s, 45 GB/s" for a time.
std::string rate_str(const TuneResult& r, double ms) {
  std::string s;
  double tf = tune_tflops(r, ms), gb = tune_gbps(r, ms);
  if (std::isfinite(tf)) s = fmt("%.4g", tf) + " TFLOP/s, ";
  if (std::isfinite(gb)) s += fmt("%.4g", gb) + " GB/s";
  return s;
}

}  // namespace

// "out-of-bounds load from 'x'" from a located message; whole numbers between spaces (or before , ; ))
// folded to N, so that reasons differing only in a tile size group ("processed in tiles of N").
std::string tune_reason(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  size_t at = line.find(": error: ");
  if (at != std::string::npos) line = line.substr(at + 9);
  for (size_t p; (p = line.find(" (line 0)")) != std::string::npos;) line.erase(p, 9);  // generated calls have no line
  std::string folded;
  for (size_t i = 0; i < line.size(); ++i) {
    size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    bool after_space = i > 0 && line[i - 1] == ' ';
    bool word_end = j == line.size() || std::string(" ,;)").find(line[j]) != std::string::npos;
    if (j > i && after_space && word_end) {
      folded += 'N';
      i = j - 1;
    } else {
      folded += line[i];
    }
  }
  return folded.size() > 160 ? folded.substr(0, 157) + "..." : folded;
}

const TuneCandidate* TuneResult::best() const {
  const TuneCandidate* b = nullptr;
  for (const TuneCandidate& c : candidates)
    if (c.ms && (!b || *c.ms < *b->ms)) b = &c;
  return b;
}

size_t TuneResult::count(const std::string& status) const {
  return static_cast<size_t>(std::count_if(candidates.begin(), candidates.end(), [&](const TuneCandidate& c) { return c.status == status; }));
}

size_t TuneResult::within(double fraction) const {
  const TuneCandidate* b = best();
  if (!b) return 0;
  double limit = *b->ms * (1 + fraction);
  return static_cast<size_t>(std::count_if(candidates.begin(), candidates.end(), [&](const TuneCandidate& c) { return c.ms && *c.ms <= limit; }));
}

std::vector<std::pair<std::string, size_t>> TuneResult::reasons() const {
  std::map<std::string, size_t> n;
  for (const TuneCandidate& c : candidates)
    if (!c.reason.empty()) ++n[c.status + ": " + c.reason];
  std::vector<std::pair<std::string, size_t>> v(n.begin(), n.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  return v;
}

double TuneResult::per_minute() const { return seconds > 0 ? static_cast<double>(candidates.size()) * 60.0 / seconds : 0; }

size_t TuneResult::lowered() const { return count("checked") + count("timed") + count("check-failed") + count("gpu-failed"); }

double TuneResult::lowered_per_minute() const { return seconds > 0 ? static_cast<double>(lowered()) * 60.0 / seconds : 0; }

double TuneResult::timed_per_minute_per_gpu() const {
  double s = worker_seconds > 0 ? worker_seconds : seconds;
  return s > 0 ? static_cast<double>(count("timed")) * 60.0 / s : 0;
}

double tune_gbps(const TuneResult& r, double ms) { return ms > 0 && r.bytes > 0 ? static_cast<double>(r.bytes) / (ms * 1e-3) / 1e9 : NAN; }
double tune_tflops(const TuneResult& r, double ms) { return ms > 0 && r.flops > 0 ? r.flops / (ms * 1e-3) / 1e12 : NAN; }

std::string tune_text(const TuneResult& r) {
  std::ostringstream os;
  size_t pruned = r.count("pruned"), illegal = r.count("illegal"), failed = r.count("check-failed"), notriton = r.count("no-triton-form"),
         gpu = r.count("gpu-failed"), timed = r.count("timed"), checked = r.count("checked");
  os << "searched " << r.candidates.size() << " of " << r.space << " schedules (" << r.mode << ")";
  os << ": " << pruned << " pruned, " << illegal << " illegal, " << failed << " failed the check, " << (checked + timed + gpu) << " passed the check";
  if (notriton) os << ", " << notriton << " with no Triton form";
  os << "\n";
  auto reasons = r.reasons();
  for (size_t i = 0; i < reasons.size() && i < 8; ++i) os << "  " << reasons[i].second << " x " << reasons[i].first << "\n";
  if (reasons.size() > 8) os << "  ... " << reasons.size() - 8 << " more reasons (see --csv or --json)\n";
  if (r.timing != "done") {
    os << "timing " << r.timing << "\n";
  } else {
    os << "timed " << timed << " on " << r.device << " through " << r.backend;
    if (gpu) os << " (" << gpu << " failed on the GPU)";
    os << "\n";
  }
  const TuneCandidate* b = r.best();
  if (b) {
    os << "best: " << ms_str(*b->ms) << " ms (" << rate_str(r, *b->ms) << "), schedule " << b->index << "; "
       << r.within(0.10) << " schedule(s) within 10% of it\n";
    for (const TuneReference& ref : r.references)
      os << "  " << ref.name << ": " << ms_str(ref.ms) << " ms (best is " << fmt("%.2f", ref.ms / *b->ms) << "x faster)\n";
    os << "best schedule (paste it in place of the file's schedule):\n" << b->schedule;
  } else {
    const TuneCandidate* first = nullptr;
    for (const TuneCandidate& c : r.candidates)
      if (c.status == "checked") {
        first = &c;
        break;
      }
    if (first) os << "no schedule was timed; the first that passed the check (schedule " << first->index << "):\n" << first->schedule;
    else os << "no schedule passed the check\n";
  }
  os << fmt("%.1f", r.per_minute()) << " candidates per minute (" << r.candidates.size() << " in " << fmt("%.1f", r.seconds) << " s; "
     << fmt("%.1f", r.lowered_per_minute()) << " per minute checked";
  if (r.timing == "done") os << " and timed";
  os << ")";
  if (r.ptx_cache_hits + r.ptx_cache_misses > 0)
    os << "; PTX cache: " << r.ptx_cache_hits << " hit(s), " << r.ptx_cache_misses << " compiled";
  os << "\n";
  if (r.timing == "done")
    os << fmt("%.1f", r.timed_per_minute_per_gpu()) << " schedules timed per minute per GPU (" << r.workers << " worker(s), "
       << fmt("%.1f", r.worker_seconds > 0 ? r.worker_seconds : r.seconds) << " s of workers' time"
       << [&] {
            std::string each;
            if (r.gpu_timed.size() > 1)
              for (size_t i = 0; i < r.gpu_timed.size(); ++i) each += (i ? ", " : "; timed by each worker: ") + std::to_string(r.gpu_timed[i]);
            return each;
          }()
       << ")\n";
  if (!r.shards_merged.empty()) {
    os << "merged shards";
    for (size_t i = 0; i < r.shards_merged.size(); ++i) os << (i ? ", " : " ") << r.shards_merged[i] << "/" << r.shards;
    os << " (seed " << r.seed << ", " << (r.time_s > 0 ? fmt("%g s", r.time_s) : "budget " + std::to_string(r.budget)) << ")\n";
  } else if (r.shards > 1) {
    os << "shard " << r.shard << "/" << r.shards << " (seed " << r.seed << ", "
       << (r.time_s > 0 ? fmt("%g s", r.time_s) : "budget " + std::to_string(r.budget)) << "): merge the shards' --out files with dtsim tune --merge\n";
  }
  if (r.timing == "done")
    os << "time: " << fmt("%.1f", r.check_seconds) << " s drawing and checking, " << fmt("%.1f", r.timing_seconds)
       << " s timing on the GPU (of which " << fmt("%.1f", r.compile_wait_seconds) << " s waiting for compilation), "
       << fmt("%.1f", r.overlap_seconds) << " s of them at once\n";
  // what the checking threads spent their time on, added up over the threads
  os << "checking threads: " << fmt("%.1f", r.interp_seconds) << " s checking on the interpreter, " << fmt("%.1f", r.compile_seconds)
     << " s compiling for the GPU (NVVM, libNVVM, ptxas), " << fmt("%.1f", r.lower_seconds) << " s lowering (thread-seconds)\n";
  return os.str();
}

std::string tune_csv(const TuneResult& r) {
  std::ostringstream os;
  os << "index,status,phase,ms,gbps,tflops,reason,schedule\n";
  for (const TuneCandidate& c : r.candidates) {
    os << c.index << "," << c.status << "," << c.phase << ",";
    if (c.ms) {
      double gb = tune_gbps(r, *c.ms), tf = tune_tflops(r, *c.ms);
      os << fmt("%.6f", *c.ms) << "," << (std::isfinite(gb) ? fmt("%.2f", gb) : "") << "," << (std::isfinite(tf) ? fmt("%.3f", tf) : "");
    } else {
      os << ",,";
    }
    os << "," << csv_field(c.reason) << "," << csv_field(one_line(c.schedule)) << "\n";
  }
  return os.str();
}

std::string tune_json(const TuneResult& r) {
  std::ostringstream os;
  const TuneCandidate* b = r.best();
  os << "{\"file\": " << json_str(r.file) << ", \"sizes\": " << json_str(r.sizes) << ", \"backend\": " << json_str(r.backend)
     << ", \"device\": " << json_str(r.device) << ", \"space\": " << r.space << ", \"configs\": " << r.configs
     << ", \"mode\": " << json_str(r.mode) << ", \"searched\": " << r.candidates.size() << ", \"pruned\": " << r.count("pruned") << ", \"illegal\": " << r.count("illegal")
     << ", \"check_failed\": " << r.count("check-failed") << ", \"no_triton_form\": " << r.count("no-triton-form")
     << ", \"gpu_failed\": " << r.count("gpu-failed") << ", \"passed_check\": "
     << r.count("checked") + r.count("timed") + r.count("gpu-failed") << ", \"timed\": " << r.count("timed")
     << ", \"timing\": " << json_str(r.timing) << ", \"within_10pct\": " << r.within(0.10) << ", \"seconds\": " << json_num(r.seconds)
     << ", \"candidates_per_minute\": " << json_num(r.per_minute()) << ", \"checked_per_minute\": " << json_num(r.lowered_per_minute()) << ", \"check_seconds\": " << json_num(r.check_seconds)
     << ", \"timing_seconds\": " << json_num(r.timing_seconds) << ", \"compile_wait_seconds\": " << json_num(r.compile_wait_seconds) << ", \"overlap_seconds\": " << json_num(r.overlap_seconds)
     << ", \"lower_seconds\": " << json_num(r.lower_seconds) << ", \"interp_seconds\": " << json_num(r.interp_seconds)
     << ", \"compile_seconds\": " << json_num(r.compile_seconds) << ", \"bytes\": " << r.bytes << ", \"flops\": " << json_num(r.flops)
     << ", \"ptx_cache_hits\": " << r.ptx_cache_hits << ", \"ptx_cache_misses\": " << r.ptx_cache_misses
     << ", \"seed\": " << r.seed << ", \"budget\": " << r.budget << ", \"time_limit\": " << json_num(r.time_s)
     << ", \"shard\": " << json_str(std::to_string(r.shard) + "/" + std::to_string(r.shards)) << ", \"shards_merged\": [";
  for (size_t i = 0; i < r.shards_merged.size(); ++i) os << (i ? ", " : "") << r.shards_merged[i];
  os << "], \"rounds\": " << r.rounds << ", \"workers\": " << r.workers << ", \"worker_seconds\": " << json_num(r.worker_seconds > 0 ? r.worker_seconds : r.seconds)
     << ", \"timed_per_minute_per_gpu\": " << json_num(r.timed_per_minute_per_gpu()) << ", \"gpu_timed\": [";
  for (size_t i = 0; i < r.gpu_timed.size(); ++i) os << (i ? ", " : "") << r.gpu_timed[i];
  os << "]";
  os << ", \"best\": ";
  if (b)
    os << "{\"index\": " << b->index << ", \"ms\": " << json_num(*b->ms) << ", \"gbps\": " << json_num(tune_gbps(r, *b->ms))
       << ", \"tflops\": " << json_num(tune_tflops(r, *b->ms)) << ", \"schedule\": " << json_str(b->schedule) << "}";
  else
    os << "null";
  os << ", \"references\": [";
  for (size_t i = 0; i < r.references.size(); ++i)
    os << (i ? ", " : "") << "{\"name\": " << json_str(r.references[i].name) << ", \"ms\": " << json_num(r.references[i].ms) << "}";
  os << "], \"reasons\": {";
  auto reasons = r.reasons();
  for (size_t i = 0; i < reasons.size(); ++i) os << (i ? ", " : "") << json_str(reasons[i].first) << ": " << reasons[i].second;
  os << "}, \"candidates\": [";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const TuneCandidate& c = r.candidates[i];
    os << (i ? ",\n  " : "\n  ") << "{\"index\": " << c.index << ", \"draw\": " << c.draw << ", \"status\": " << json_str(c.status) << ", \"phase\": " << json_str(c.phase)
       << ", \"ms\": " << (c.ms ? json_num(*c.ms) : "null") << ", \"gbps\": " << (c.ms ? json_num(tune_gbps(r, *c.ms)) : "null")
       << ", \"tflops\": " << (c.ms ? json_num(tune_tflops(r, *c.ms)) : "null") << ", \"reason\": " << json_str(c.reason)
       << ", \"schedule\": " << json_str(c.schedule) << "}";
  }
  os << "]}\n";
  return os.str();
}

std::string tune_svg(const TuneResult& r) {
  std::vector<double> t;
  for (const TuneCandidate& c : r.candidates)
    if (c.ms && *c.ms > 0) t.push_back(*c.ms);
  if (t.empty()) throw UserError("--plot: no schedule was timed (timing " + r.timing + "), so there is nothing to plot");
  std::sort(t.begin(), t.end());
  double lo = t.front(), hi = t.back();
  for (const TuneReference& ref : r.references)
    if (ref.ms > 0) lo = std::min(lo, ref.ms), hi = std::max(hi, ref.ms);
  double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  if (l1 <= l0) l1 = l0 + 1;
  const double W = 860, H = 520, left = 80, right = 200, top = 60, bottom = 60;
  double pw = W - left - right, ph = H - top - bottom;
  auto X = [&](size_t i) { return left + (t.size() == 1 ? pw / 2 : pw * static_cast<double>(i) / static_cast<double>(t.size() - 1)); };
  auto Y = [&](double ms) { return top + ph * (1 - (std::log10(ms) - l0) / (l1 - l0)); };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">" << xml("dtsim tune " + r.file + (r.sizes.empty() ? "" : " [" + r.sizes + "]"))
     << "</text>\n";
  os << "<text x=\"" << left << "\" y=\"42\" fill=\"#555\">" << xml(std::to_string(t.size()) + " timed schedules of " + std::to_string(r.space) +
                                                                         " (" + r.mode + "), " + r.backend + " on " + r.device + "; " +
                                                                         std::to_string(r.within(0.10)) + " within 10% of the best")
     << "</text>\n";
  for (double d = l0; d <= l1 + 1e-9; ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = std::pow(10.0, d) * m;
      if (std::log10(v) > l1 + 1e-9) continue;
      double y = Y(v);
      os << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\"" << (m == 1 ? "#ccc" : "#eee") << "\"/>\n";
      os << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << fmt("%g", v) << "</text>\n";
    }
  os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph << "\" fill=\"none\" stroke=\"#333\"/>\n";
  double band = Y(t.front() * 1.10);
  os << "<rect x=\"" << left << "\" y=\"" << band << "\" width=\"" << pw << "\" height=\"" << Y(t.front()) - band
     << "\" fill=\"#2a7\" fill-opacity=\"0.15\"><title>within 10% of the best</title></rect>\n";
  os << "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < t.size(); ++i) os << (i ? " " : "") << fmt("%.1f", X(i)) << "," << fmt("%.1f", Y(t[i]));
  os << "\"/>\n";
  if (t.size() <= 400)
    for (size_t i = 0; i < t.size(); ++i)
      os << "<circle cx=\"" << fmt("%.1f", X(i)) << "\" cy=\"" << fmt("%.1f", Y(t[i])) << "\" r=\"2.5\" fill=\"#1f5fbf\"><title>"
         << ms_str(t[i]) << " ms</title></circle>\n";
  static const char* colours[] = {"#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  for (size_t i = 0; i < r.references.size(); ++i) {
    const TuneReference& ref = r.references[i];
    if (ref.ms <= 0) continue;
    double y = Y(ref.ms);
    const char* c = colours[i % 6];
    os << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\"" << c
       << "\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n";
    os << "<text x=\"" << left + pw + 6 << "\" y=\"" << y + 4 << "\" fill=\"" << c << "\">" << xml(ref.name + " " + ms_str(ref.ms) + " ms")
       << "</text>\n";
  }
  os << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 20 << "\" text-anchor=\"middle\">schedules, fastest first</text>\n";
  os << "<text transform=\"translate(20," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">median time (ms, log scale)</text>\n";
  os << "</svg>\n";
  return os.str();
}

}  // namespace dtsim
