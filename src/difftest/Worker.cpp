#include "difftest/Worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "ir/Diag.h"

namespace dtsim {

namespace {

// Frames: kind (1 byte), four int32 fields, a length (uint64) and that many bytes of text.
enum FrameKind : uint8_t { kHello = 1, kRecord = 2, kError = 3 };

struct Frame {
  uint8_t kind = 0;
  int32_t a = 0, b = 0, c = 0;
  std::string text;
};

bool write_all(int fd, const void* p, size_t n) {
  const char* s = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  char* s = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = ::read(fd, s, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    s += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void send(int fd, const Frame& f) {
  uint64_t len = f.text.size();
  int32_t ints[3] = {f.a, f.b, f.c};
  if (!write_all(fd, &f.kind, 1) || !write_all(fd, ints, sizeof ints) || !write_all(fd, &len, sizeof len) ||
      !write_all(fd, f.text.data(), f.text.size()))
    _exit(4);  // the sweep is gone: nobody to report to
}

bool receive(int fd, Frame& f) {
  int32_t ints[3];
  uint64_t len = 0;
  if (!read_all(fd, &f.kind, 1) || !read_all(fd, ints, sizeof ints) || !read_all(fd, &len, sizeof len)) return false;
  f.a = ints[0], f.b = ints[1], f.c = ints[2];
  f.text.assign(len, '\0');
  return read_all(fd, f.text.data(), len);
}

// Waits until `fd` has data (or is closed); false when `stop` says yes first.
bool wait_readable(int fd, const std::function<bool()>& stop) {
  for (;;) {
    if (stop()) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r > 0 || (r < 0 && errno != EINTR)) return true;  // a read error is reported by the read
  }
}

}  // namespace

void WorkerChannel::hello(bool gpu, const std::string& why) { send(fd_, Frame{kHello, gpu ? 1 : 0, 0, 0, why}); }

void WorkerChannel::record(const WorkerRecord& r) { send(fd_, Frame{kRecord, r.trial, r.outcome, r.end_code, r.text}); }

WorkerSweep run_in_workers(int trials, const std::function<void(int from, WorkerChannel&)>& body,
                           const std::function<bool(const WorkerRecord&)>& on_record,
                           const std::function<WorkerRecord(int trial, const std::string& how)>& on_death,
                           const std::function<bool()>& stop) {
  WorkerSweep sweep;
  bool have_hello = false;
  int next = 0;
  while (next < trials) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    int fds[2];
    if (::pipe(fds) != 0) throw UserError(std::string("cannot create a pipe: ") + std::strerror(errno));
    pid_t pid = ::fork();
    if (pid < 0) throw UserError(std::string("cannot start a worker process: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      ::signal(SIGPIPE, SIG_DFL);
      WorkerChannel ch(fds[1]);
      int code = 0;
      std::string text;
      try {
        body(next, ch);
        _exit(0);
      } catch (const UserError& e) {
        code = 2, text = e.render();
      } catch (const RuntimeFault& e) {
        code = 1, text = e.render();
      } catch (const std::exception& e) {
        code = 3, text = std::string("dtsim: internal error: ") + e.what() + "\n";
      }
      send(fds[1], Frame{kError, code, 0, 0, text});
      _exit(0);
    }
    ::close(fds[1]);
    int started = next;
    bool ended = false;
    Frame f;
    while (!ended) {
      if (!wait_readable(fds[0], stop)) {
        sweep.stopped_at = next;
        ended = true;
        break;
      }
      if (!receive(fds[0], f)) break;
      if (f.kind == kHello) {
        if (!have_hello) sweep.gpu = f.a != 0, sweep.why = f.text, have_hello = true;
      } else if (f.kind == kRecord) {
        WorkerRecord r{f.a, f.b, f.c, f.text};
        next = r.trial + 1;
        if (on_record(r)) sweep.end_code = r.end_code, ended = true;
      } else if (f.kind == kError) {
        sweep.error_code = f.a, sweep.error = f.text, ended = true;
      }
    }
    ::close(fds[0]);
    if (ended) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (ended) return sweep;
    bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!clean || next == started) {
      // The worker died in trial `next` (or stopped without progress): report it and go on.
      std::string how = WIFSIGNALED(status) ? "died (signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status)) + ")"
                                            : "exited with status " + std::to_string(WEXITSTATUS(status)) + " before reporting";
      if (next < trials && on_record(on_death(next, how))) return sweep;
      ++next;
    }
  }
  return sweep;
}

}  // namespace dtsim
