// Counts a process's heap allocations, for the tools/bench-* scripts: loaded
// with LD_PRELOAD, it wraps malloc, calloc, realloc, aligned_alloc,
// posix_memalign and memalign (operator new ends in malloc); compiled with
// VRAMSIM_ALLOC_COUNT_WRAP into a statically linked program, it defines
// __wrap_malloc and the others for the linker's --wrap to send those calls
// to (bench/CMakeLists.txt). At exit it writes one line
//   allocations N bytes B
// (calls that returned memory, and the bytes they asked for) to the file
// named by VRAMSIM_ALLOC_COUNT_FILE, appended; nothing when it is unset.
// The counters are relaxed atomics: a few nanoseconds a call, so timings are
// taken from runs without it.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {

std::atomic<unsigned long long> g_calls{0}, g_bytes{0};

void* counted(void* p, std::size_t bytes) {
  if (p) {
    g_calls.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  return p;
}

__attribute__((destructor)) void report() {
  const char* path = std::getenv("VRAMSIM_ALLOC_COUNT_FILE");
  if (!path || !*path) return;
  char line[96];
  const int n = std::snprintf(line, sizeof line, "allocations %llu bytes %llu\n", g_calls.load(), g_bytes.load());
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const ssize_t w = write(fd, line, static_cast<std::size_t>(n));
  (void)w;  // a lost line shows as a missing figure in the benchmark
  close(fd);
}

}  // namespace

#if defined(VRAMSIM_ALLOC_COUNT_WRAP)
#define VRAMSIM_COUNTED(name) __wrap_##name
#else
#define VRAMSIM_COUNTED(name) name
#endif

extern "C" {

void* VRAMSIM_COUNTED(malloc)(std::size_t n) { return counted(__libc_malloc(n), n); }
void* VRAMSIM_COUNTED(calloc)(std::size_t k, std::size_t n) { return counted(__libc_calloc(k, n), k * n); }
void* VRAMSIM_COUNTED(realloc)(void* p, std::size_t n) { return counted(__libc_realloc(p, n), n); }
void* VRAMSIM_COUNTED(memalign)(std::size_t a, std::size_t n) { return counted(__libc_memalign(a, n), n); }
void* VRAMSIM_COUNTED(aligned_alloc)(std::size_t a, std::size_t n) { return counted(__libc_memalign(a, n), n); }
int VRAMSIM_COUNTED(posix_memalign)(void** out, std::size_t a, std::size_t n) {
  void* p = counted(__libc_memalign(a, n), n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}

}  // extern "C"
