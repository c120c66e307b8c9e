// The buffer a saved KV state is written into. States are tens of MiB (a 1,500-token sequence of the 180 M-parameter
// synthetic model: 33 MiB) and are filled once, right after allocation, by llama.cpp. A std::vector<uint8_t> of that
// size is zero-filled first, and its fresh pages fault in 4 KiB at a time: on the 2-core VM those ~8,400 faults took
// 113–118 ms of a 130 ms saveState (the copy out of llama.cpp took 2–6 ms). So this allocator leaves the bytes
// uninitialised and, on Linux, asks for transparent huge pages (madvise; the kernel may decline), which turns the
// faults of a 33 MiB state into ~17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace llama_dialog {

template <typename T>
struct StateAllocator {
  using value_type = T;
  /** Below this, huge pages would waste more than they save. */
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  StateAllocator() = default;
  template <typename U>
  StateAllocator(const StateAllocator<U>&) noexcept {}

  T* allocate(size_t count) {
    const size_t bytes = count * sizeof(T);
#if defined(__linux__)
    if (bytes >= kHugePageBytes) {
      void* memory = nullptr;
      if (posix_memalign(&memory, kHugePageBytes, bytes) != 0) throw std::bad_alloc();
      madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: without THP the pages are ordinary ones
#ifdef MADV_POPULATE_WRITE
      // Fault the whole range in with one call (Linux 5.14+) instead of one trap per page as llama.cpp writes it;
      // an older kernel refuses the advice and the pages fault in as they are written.
      madvise(memory, bytes, MADV_POPULATE_WRITE);
#endif
      return static_cast<T*>(memory);
    }
#endif
    void* memory = std::malloc(bytes == 0 ? 1 : bytes);
    if (memory == nullptr) throw std::bad_alloc();
    return static_cast<T*>(memory);
  }
  void deallocate(T* memory, size_t) noexcept { std::free(memory); }

  /** Default-initialises (for bytes: leaves them as they are) instead of zero-filling: llama.cpp writes them all. */
  template <typename U>
  void construct(U* place) noexcept {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const StateAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const StateAllocator<U>&) const noexcept {
    return false;
  }
};

/** Header + llama.cpp payload of one saved state (state_format.h). */
using StateBytes = std::vector<uint8_t, StateAllocator<uint8_t>>;

}  // namespace llama_dialog
