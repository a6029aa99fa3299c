// ioctl_count: an LD_PRELOAD shim that counts the ioctl calls a process makes (the CUDA driver
// talks to the kernel module through them) and the time spent in them, by request code, and
// prints the totals to stderr at exit. Used by scripts/pageable-ioctls.sh to compare what the
// driver does per copy inside pinscope and inside the driver-API probe.
//   gcc -O2 -shared -fPIC -o ioctl_count.so scripts/probes/ioctl_count.c -ldl
//   LD_PRELOAD=./ioctl_count.so IOCTL_COUNT_OUT=file program ...
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 64
static struct { unsigned long req; atomic_ulong n; atomic_ulong ns; } g_slot[SLOTS];
static atomic_ulong g_calls, g_ns, g_other;
static int (*g_real)(int, unsigned long, ...);

static unsigned long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long)t.tv_sec * 1000000000ul + (unsigned long)t.tv_nsec;
}

static void record(unsigned long req, unsigned long ns) {
  atomic_fetch_add(&g_calls, 1);
  atomic_fetch_add(&g_ns, ns);
  for (int i = 0; i < SLOTS; ++i) {
    unsigned long r = __atomic_load_n(&g_slot[i].req, __ATOMIC_ACQUIRE);
    if (r == 0) {
      unsigned long zero = 0;
      if (!__atomic_compare_exchange_n(&g_slot[i].req, &zero, req, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
          zero != req)
        continue;
      r = req;
    }
    if (r == req) {
      atomic_fetch_add(&g_slot[i].n, 1);
      atomic_fetch_add(&g_slot[i].ns, ns);
      return;
    }
  }
  atomic_fetch_add(&g_other, 1);
}

int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (!g_real) g_real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
  unsigned long t0 = now_ns();
  int r = g_real(fd, req, arg);
  record(req, now_ns() - t0);
  return r;
}

__attribute__((destructor)) static void report(void) {
  const char *path = getenv("IOCTL_COUNT_OUT");
  FILE *f = path ? fopen(path, "w") : stderr;
  if (!f) return;
  fprintf(f, "ioctl calls %lu, %.1f us in them, %lu in no slot\n", (unsigned long)g_calls,
          (double)g_ns / 1e3, (unsigned long)g_other);
  for (int i = 0; i < SLOTS && g_slot[i].req; ++i)
    fprintf(f, "req 0x%lx calls %lu us %.1f\n", g_slot[i].req, (unsigned long)g_slot[i].n,
            (double)g_slot[i].ns / 1e3);
  if (f != stderr) fclose(f);
}
