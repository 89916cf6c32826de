// The round exchange of shards searching together (Exchange.h). A report is a small text file:
//   dtsim tune exchange
//   search <identity>
//   round <k> shard <I>/<N>          (the times of a round: times <k> shard <I>/<N>)
//   elapsed <seconds>
//   draw <pos> <index> <done 0|1> <lowered 0|1> <status> <ms or ->     (one per draw reported)
//   reason <text>                    (after a draw line, where the draw failed on the GPU)
//   end
// A round's checks report the draws the shard checked, which it claimed first as
// check-<k>.<pos>-of-<N>; its times report the draws the shard's GPU timed, claimed first as
// claim-<k>.<pos>-of-<N> (both made with O_EXCL, holding the shard's number).
// written as .tmp.<name> and renamed to round-<k>.shard-<I>-of-<N> (after the check) or
// times-<k>.shard-<I>-of-<N> (after the timing); a shard that fails leaves failed.shard-<I>-of-<N>
// holding the reason.
#include "tune/Exchange.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ir/Diag.h"
#include "host/Text.h"

namespace dtsim {

namespace fs = std::filesystem;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(10);  // how often a waiting shard looks for reports


}  // namespace

TuneExchange::TuneExchange(std::string dir, uint64_t shard, uint64_t shards, std::string identity, double timeout_s)
    : dir_(std::move(dir)), shard_(shard), shards_(shards), identity_(std::move(identity)), timeout_s_(timeout_s) {}

namespace {
const char* kind_word(ExchangeKind kind) { return kind == ExchangeKind::Checks ? "round" : "times"; }
}  // namespace

std::string TuneExchange::report_name(uint64_t round, uint64_t shard, ExchangeKind kind) const {
  return std::string(kind_word(kind)) + "-" + std::to_string(round) + ".shard-" + std::to_string(shard) + "-of-" + std::to_string(shards_);
}

std::string TuneExchange::fail_name(uint64_t shard) const {
  return "failed.shard-" + std::to_string(shard) + "-of-" + std::to_string(shards_);
}

void TuneExchange::start() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_, ec)) throw UserError("--exchange " + dir_ + ": not a folder, and it cannot be made");
  std::string mine = std::to_string(shard_) + "/" + std::to_string(shards_);
  if (fs::exists(fs::path(dir_) / report_name(0, shard_, ExchangeKind::Checks), ec) || fs::exists(fs::path(dir_) / fail_name(shard_), ec))
    throw UserError("--exchange " + dir_ + ": the folder already holds shard " + mine +
                    "'s reports of an earlier search; give each search an empty folder");
}

ExchangeRound TuneExchange::read_report(const std::string& path, uint64_t round, uint64_t shard, ExchangeKind kind) const {
  std::istringstream in(read_whole_file(path).value_or(""));
  ExchangeRound r;
  int line_no = 0;
  auto bad = [&](const std::string& what) {
    throw UserError(path + ":" + std::to_string(line_no) + ": error: not a report of this search's round exchange: " + what);
  };
  std::string line;
  auto next = [&]() -> std::istringstream {
    if (!std::getline(in, line)) ++line_no, bad("the file ends early");
    ++line_no;
    return std::istringstream(line);
  };
  if (next().str() != "dtsim tune exchange") bad("the first line is not 'dtsim tune exchange'");
  {
    std::istringstream l = next();
    std::string w;
    l >> w;
    if (w != "search") bad("expected 'search'");
    std::string theirs = line.substr(std::min(line.size(), size_t(7)));
    if (theirs != identity_)
      throw UserError("--exchange " + dir_ + ": shard " + std::to_string(shard) + "/" + std::to_string(shards_) +
                      " searches something else (" + theirs + "; this shard: " + identity_ + ")");
  }
  {
    std::string w1, w2, who;
    uint64_t k = 0;
    std::istringstream l = next();
    if (!(l >> w1 >> k >> w2 >> who) || w1 != kind_word(kind) || w2 != "shard") bad(std::string("expected '") + kind_word(kind) + " K shard I/N'");
    if (k != round || who != std::to_string(shard) + "/" + std::to_string(shards_)) bad("the report of another round or shard");
  }
  {
    std::string w;
    std::istringstream l = next();
    if (!(l >> w >> r.elapsed) || w != "elapsed") bad("expected 'elapsed SECONDS'");
  }
  for (;;) {
    std::istringstream l = next();
    std::string w;
    l >> w;
    if (w == "end") break;
    if (w == "reason") {
      if (r.draws.empty()) bad("'reason' before any 'draw'");
      r.draws.back().reason = line.size() > 7 ? line.substr(7) : "";
      continue;
    }
    if (w != "draw") bad("expected 'draw', 'reason' or 'end'");
    ExchangedDraw d;
    int done = 0, lowered = 0;
    std::string ms;
    if (!(l >> d.pos >> d.index >> done >> lowered >> d.status >> ms)) bad("expected 'draw POS INDEX DONE LOWERED STATUS MS'");
    d.done = done != 0;
    d.lowered = lowered != 0;
    if (ms != "-") {
      try {
        d.ms = std::stod(ms);
      } catch (const std::exception&) {
        bad("'" + ms + "' is not a time");
      }
    }
    r.draws.push_back(std::move(d));
  }
  return r;
}

std::vector<ExchangeRound> TuneExchange::swap(uint64_t round, const ExchangeRound& mine, ExchangeKind kind) {
  std::ostringstream os;
  char num[64];
  std::snprintf(num, sizeof num, "%.17g", mine.elapsed);
  os << "dtsim tune exchange\nsearch " << identity_ << "\n" << kind_word(kind) << " " << round << " shard " << shard_ << "/" << shards_ << "\nelapsed " << num << "\n";
  for (const ExchangedDraw& d : mine.draws) {
    os << "draw " << d.pos << " " << d.index << " " << (d.done ? 1 : 0) << " " << (d.lowered ? 1 : 0) << " " << (d.status.empty() ? "-" : d.status) << " ";
    if (d.ms) {
      std::snprintf(num, sizeof num, "%.17g", *d.ms);
      os << num << "\n";
    } else {
      os << "-\n";
    }
    if (!d.reason.empty()) {
      std::string one = d.reason.substr(0, d.reason.find('\n'));
      os << "reason " << one << "\n";
    }
  }
  os << "end\n";
  fs::path final_path = fs::path(dir_) / report_name(round, shard_, kind), tmp = fs::path(dir_) / (".tmp." + report_name(round, shard_, kind));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << os.str();
    if (!f.flush()) throw UserError("--exchange " + dir_ + ": cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, final_path, ec);
  if (ec) throw UserError("--exchange " + dir_ + ": cannot rename " + tmp.string() + " to " + final_path.string() + ": " + ec.message());

  std::vector<ExchangeRound> all(shards_);
  std::vector<bool> have(shards_, false);
  all[shard_] = mine;
  have[shard_] = true;
  size_t missing = shards_ - 1;
  auto last_progress = std::chrono::steady_clock::now();
  while (missing > 0) {
    for (uint64_t s = 0; s < shards_; ++s) {
      if (have[s]) continue;
      fs::path p = fs::path(dir_) / report_name(round, s, kind);
      if (fs::exists(p, ec)) {
        all[s] = read_report(p.string(), round, s, kind);
        have[s] = true;
        --missing;
        last_progress = std::chrono::steady_clock::now();
        continue;
      }
      fs::path f = fs::path(dir_) / fail_name(s);
      if (fs::exists(f, ec)) {
        std::string why = read_whole_file(f.string()).value_or("");
        while (!why.empty() && why.back() == '\n') why.pop_back();
        throw UserError("--exchange " + dir_ + ": shard " + std::to_string(s) + "/" + std::to_string(shards_) + " failed: " + why);
      }
    }
    if (missing == 0) break;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_progress).count();
    if (waited > timeout_s_) {
      std::string who;
      for (uint64_t s = 0; s < shards_; ++s)
        if (!have[s]) who += (who.empty() ? "" : ", ") + std::to_string(s) + "/" + std::to_string(shards_);
      throw UserError("--exchange " + dir_ + ": no report " + (kind == ExchangeKind::Checks ? "" : "of the times ") + "of round " + std::to_string(round) + " from shard(s) " + who + " after " +
                      fmt("%.0f", waited) + " s of waiting (stopped, or never started?); --exchange-timeout S waits longer");
    }
    std::this_thread::sleep_for(kPoll);
  }
  return all;
}

bool TuneExchange::claim(uint64_t round, uint64_t pos, ExchangeKind kind) {
  std::string name = std::string(kind == ExchangeKind::Checks ? "check-" : "claim-") + std::to_string(round) + "." + std::to_string(pos) + "-of-" +
                     std::to_string(shards_);
  std::string path = (fs::path(dir_) / name).string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw UserError("--exchange " + dir_ + ": cannot make the claim " + path + ": " + std::strerror(errno));
  }
  std::string who = std::to_string(shard_) + "\n";
  ssize_t wrote = ::write(fd, who.data(), who.size());
  ::close(fd);
  (void)wrote;  // the claim is the file; its text only says who made it
  return true;
}

void TuneExchange::fail(const std::string& why) noexcept {
  try {
    fs::path final_path = fs::path(dir_) / fail_name(shard_), tmp = fs::path(dir_) / (".tmp." + fail_name(shard_));
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << why << "\n";
    }
    std::error_code ec;
    fs::rename(tmp, final_path, ec);
  } catch (...) {
  }
}

}  // namespace dtsim
