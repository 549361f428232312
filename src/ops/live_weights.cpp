#include "ops/live_weights.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace lowbit {

namespace {

struct Live {
  std::mutex mu;
  struct Buffer {
    size_t bytes;
    int holders;
  };
  std::unordered_map<const void*, Buffer> buffers;
  std::atomic<size_t> total{0};
};

Live& live() {
  static Live* l = new Live;  // never destroyed: weights may outlive static destruction
  return *l;
}

}  // namespace

void note_live_weights(const void* data, size_t bytes) {
  Live& l = live();
  std::lock_guard<std::mutex> lock(l.mu);
  auto [it, fresh] = l.buffers.try_emplace(data, Live::Buffer{bytes, 0});
  ++it->second.holders;
  if (fresh) l.total.fetch_add(bytes, std::memory_order_relaxed);
}

void forget_live_weights(const void* data) {
  Live& l = live();
  std::lock_guard<std::mutex> lock(l.mu);
  const auto it = l.buffers.find(data);
  if (it == l.buffers.end() || --it->second.holders > 0) return;
  l.total.fetch_sub(it->second.bytes, std::memory_order_relaxed);
  l.buffers.erase(it);
}

size_t live_weight_bytes() { return live().total.load(std::memory_order_relaxed); }

size_t planning_working_set(const CpuProfile& prof) {
  const size_t live_bytes = live_weight_bytes();
  return prof.caches.l3 > 0 && live_bytes > prof.caches.l3 ? live_bytes : 0;
}

}  // namespace lowbit
