// The round exchange of shards that search together (`dtsim tune --shard I/N --exchange DIR`,
// docs/tune.md): twice per round (after checking it: what each draw came to at the check; after
// timing it: the times) each shard writes what its draws of the round came to into DIR (under a
// temporary name, then renamed: a reader sees a file whole or not at all) and waits for the other
// shards' files of that swap. Every shard then knows the outcome of every draw and draws the next
// round as the unsharded search would. A round's draws are checked, and between the two swaps its
// checked draws are timed, from one queue each: a shard takes the next draw no shard has claimed
// (claim()), so a faster shard or GPU does more of the round. Used by the search (Search.cpp) only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtsim {

// What one draw of a round came to, as its shard reports it.
struct ExchangedDraw {
  uint64_t pos = 0, index = 0;  // its position in the draw sequence, its schedule
  bool done = false;            // evaluated (false: given back when the time was up)
  bool lowered = false;         // lowered legally at the requested sizes (uses budget)
  std::string status;           // TuneCandidate::status
  std::optional<double> ms;
  std::string reason;           // why it failed on the GPU (status gpu-failed)
};

// One shard's report of one round.
struct ExchangeRound {
  double elapsed = 0;  // the shard's seconds since its search began, when it wrote the report
  std::vector<ExchangedDraw> draws;
};

// The two swaps of a round: after its check (every shard reports its own draws), after its timing
// (every shard reports the draws it timed, whoever checked them).
enum class ExchangeKind { Checks, Times };

class TuneExchange {
 public:
  // `identity`: what must agree between the shards of one search (seed, budget, space...);
  // `timeout_s`: how long a shard waits without any other shard's report arriving.
  TuneExchange(std::string dir, uint64_t shard, uint64_t shards, std::string identity, double timeout_s);

  // Makes the folder if needed; a UserError when it already holds this shard's reports (an earlier
  // search's: each search needs an empty folder).
  void start();
  // Writes this shard's report of round `round` (its checks or its times), waits for every other
  // shard's of the same kind, and returns all reports indexed by shard. UserError when a shard
  // reported a failure, reported another search, or nothing arrived for timeout_s.
  std::vector<ExchangeRound> swap(uint64_t round, const ExchangeRound& mine, ExchangeKind kind);
  // Claims draw `pos` of round `round` for this shard to check (kind Checks) or for its GPU to time
  // (kind Times): true when no shard claimed it before. The claim is a file made with O_CREAT |
  // O_EXCL (atomic on local folders and NFS v3 and later), holding the shard's number. A UserError
  // when the folder cannot be written.
  bool claim(uint64_t round, uint64_t pos, ExchangeKind kind);
  // Leaves a failure mark with `why`, so that the other shards stop waiting (never throws).
  void fail(const std::string& why) noexcept;

 private:
  std::string report_name(uint64_t round, uint64_t shard, ExchangeKind kind) const;
  std::string fail_name(uint64_t shard) const;
  ExchangeRound read_report(const std::string& path, uint64_t round, uint64_t shard, ExchangeKind kind) const;

  std::string dir_;
  uint64_t shard_, shards_;
  std::string identity_;
  double timeout_s_;
};

}  // namespace dtsim
