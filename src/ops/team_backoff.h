// When a calling thread asks its foreign team (ops/linear.h, linear_on_team) to share a call,
// and when it leaves the team out: a small state machine with no clock or thread in it, so the
// rule is tested on its own (tests/test_foreign_team.cpp).
//
// As ops/thread_pool.cpp's rule for a worker: a team that was late is left out of the next
// calls, twice as many each time up to 64; but only a run of 16 calls in time halves that,
// instead of one clearing it: a late team costs the caller a wait (a late pool worker costs it
// nothing), so lateness that comes back must not be forgotten after one call in time.
//
// A team that sat idle is another matter: its threads stopped spinning and sleep, and the first
// call wakes them (on the 2-vCPU VM up to 7 ms after a 150 ms pause). That wait buys the calls
// that follow a running team, so a late call after an idle spell is judged by the next call: in
// time, the wake-up was all it was (a model's next layer; the next token after a pause); late
// again, or after another idle spell (the wake-up bought nothing), it counts. Without this, a
// team left out of calls is not woken, the call that asks it again finds it asleep, and a team
// that is merely idle would stay left out for good.
#pragma once

#include <algorithm>

namespace lowbit {

class TeamBackoff {
 public:
  static constexpr int kMaxBackoff = 64;
  static constexpr int kCallsToHalve = 16;

  // True: ask the team for this call; false: run it on the calling thread alone. after_idle:
  // the team has been idle long enough to sleep (or was never asked).
  bool ask(bool after_idle) {
    if (woke_late_ && after_idle) back_off();  // the last wake-up bought nothing
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }

  // What a call that asked the team saw; after_idle as given to ask.
  void judge(bool late, bool after_idle) {
    if (!late) {
      woke_late_ = false;
      if (++in_time_ == kCallsToHalve) {
        backoff_ /= 2;
        in_time_ = 0;
      }
    } else if (after_idle && !woke_late_) {
      woke_late_ = true;
    } else {
      back_off();
    }
  }

  int backoff() const { return backoff_; }

 private:
  void back_off() {
    backoff_ = std::min(std::max(1, 2 * backoff_), kMaxBackoff);
    skip_ = backoff_;
    in_time_ = 0;
    woke_late_ = false;
  }

  int skip_ = 0, backoff_ = 0, in_time_ = 0;
  bool woke_late_ = false;  // the last asked call came after an idle spell and was late
};

}  // namespace lowbit
